"""Dashboard users and what each may see.

Roles: an ``admin`` sees every campaign; a ``requester`` user sees the
campaigns published with its requester account's access key (its own) plus
any assigned to it; a ``qa`` reviewer sees only the campaigns assigned to it
(``hitforge staff assign``). Everything on the dashboard belongs to a
campaign (workers' records, submissions, decisions), so one rule,
:func:`campaign_scope`, decides it all; a qualification test is seen through
the campaigns that require it (:func:`visible_test_ids`).
Like all domain code this flushes and never commits.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, false, or_, select, true
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Campaign, StaffCampaign, StaffUser
from hits.requester.tables.qualification import QualificationTest

ROLES = ("qa", "requester", "admin")


class StaffError(ValueError):
    """A staff account or assignment that cannot be made as asked."""


def create_staff(
    session: Session, username: str, role: str, password_hash: str, access_key_id: str | None = None
) -> StaffUser:
    """A new dashboard user; a ``requester`` user needs its account's access key (what it owns).

    ``password_hash``: hashed by the caller (the CLI uses werkzeug's, which sign-in checks).
    """
    if role not in ROLES:
        raise StaffError(f"role must be one of {', '.join(ROLES)}")
    if role == "requester" and not access_key_id:
        raise StaffError("a requester user needs --access-key: the key its campaigns are published with")
    if role != "requester" and access_key_id:
        raise StaffError("only a requester user belongs to an access key")
    if session.scalar(select(StaffUser.id).where(StaffUser.username == username)) is not None:
        raise StaffError(f"user {username} exists already")
    user = StaffUser(
        username=username,
        password_hash=password_hash,
        role=role,
        access_key_id=access_key_id,
    )
    session.add(user)
    session.flush()
    return user


def find_campaign(session: Session, ref: str) -> Campaign | None:
    """A campaign by id (all digits) or by name."""
    if ref.isdigit():
        found = session.get(Campaign, int(ref))
        if found is not None:
            return found
    return session.scalar(select(Campaign).where(Campaign.name == ref))


def assign_campaign(session: Session, username: str, campaign_ref: str) -> tuple[StaffUser, Campaign, bool]:
    """Give a QA reviewer (or a requester user) a campaign. Returns (user, campaign, newly assigned)."""
    user = session.scalar(select(StaffUser).where(StaffUser.username == username))
    if user is None:
        raise StaffError(f"no dashboard user {username}")
    if user.role == "admin":
        raise StaffError(f"{username} is an admin and sees every campaign already")
    campaign = find_campaign(session, campaign_ref)
    if campaign is None:
        raise StaffError(f"no campaign {campaign_ref}")
    if session.get(StaffCampaign, (user.id, campaign.id)) is not None:
        return user, campaign, False
    session.add(StaffCampaign(staff_user_id=user.id, campaign_id=campaign.id))
    session.flush()
    return user, campaign, True


def unassign_campaign(session: Session, username: str, campaign_ref: str) -> bool:
    """Take a campaign away from a user; whether it was assigned."""
    user = session.scalar(select(StaffUser).where(StaffUser.username == username))
    campaign = find_campaign(session, campaign_ref)
    if user is None or campaign is None:
        return False
    row = session.get(StaffCampaign, (user.id, campaign.id))
    if row is None:
        return False
    session.delete(row)
    session.flush()
    return True


def campaign_scope(staff: StaffUser) -> ColumnElement[bool]:
    """A condition on ``Campaign.id`` (and ``Campaign.access_key_id``) true for campaigns ``staff`` may see.

    Join or filter on :class:`Campaign` to use it. An unknown role sees nothing.
    """
    if staff.role == "admin":
        return true()
    assigned = Campaign.id.in_(
        select(StaffCampaign.campaign_id).where(StaffCampaign.staff_user_id == staff.id)
    )
    if staff.role == "qa":
        return assigned
    if staff.role == "requester":
        if staff.access_key_id:
            return or_(Campaign.access_key_id == staff.access_key_id, assigned)
        return assigned
    return false()


def scoped_campaign_ids(staff: StaffUser) -> Select[int]:
    """The ids of the campaigns ``staff`` may see, to filter another table's ``campaign_id`` with."""
    return select(Campaign.id).where(campaign_scope(staff))


#: The roles that own campaigns: they launch them and change their course and their money. A QA
#: reviewer reviews the work of the campaigns it is given; pausing one, raising its budget or saying
#: whether Prolific paid a bonus is its requester's (or an admin's) call.
OWNER_ROLES = ("admin", "requester")


def may_manage(staff: StaffUser | None) -> bool:
    """Whether ``staff`` may launch campaigns, change their course and budget, and resolve relays."""
    return staff is not None and staff.role in OWNER_ROLES


def may_see_campaign(session: Session, staff: StaffUser, campaign_id: int) -> bool:
    """Whether ``campaign_id`` exists and ``staff`` may see and act on it."""
    found = session.scalar(select(Campaign.id).where(Campaign.id == campaign_id, campaign_scope(staff)))
    return found is not None


def required_types(spec: dict[str, Any] | None) -> set[str]:
    """The qualification type ids a campaign's stored spec requires of its workers."""
    found: set[str] = set()
    for requirement in (spec or {}).get("qualification_requirements") or []:
        if isinstance(requirement, dict) and isinstance(requirement.get("QualificationTypeId"), str):
            found.add(requirement["QualificationTypeId"])
    return found


def visible_test_ids(session: Session, staff: StaffUser) -> set[int] | None:
    """The qualification tests whose item analysis ``staff`` may see; None: all.

    An admin sees every test; a requester user, those its account published
    (its access key); everyone, the tests that a campaign it may see requires
    of its workers, when that campaign's account published them. So a QA
    reviewer sees the tests that admitted the workers it reviews, and not the
    other tests of the same account, nor another account's test that a
    campaign merely names.
    """
    if staff.role == "admin":
        return None
    wanted: set[tuple[str, str]] = set()
    for key, spec in session.execute(
        select(Campaign.access_key_id, Campaign.spec).where(campaign_scope(staff))
    ):
        if key:
            wanted.update((key, type_id) for type_id in required_types(spec))
    own = staff.access_key_id if staff.role == "requester" else None
    condition: ColumnElement[bool] = QualificationTest.qualification_type_id.in_(
        {type_id for _, type_id in wanted}
    )
    if own:
        condition = or_(condition, QualificationTest.access_key_id == own)
    return {
        test_id
        for test_id, key, type_id in session.execute(
            select(
                QualificationTest.id, QualificationTest.access_key_id, QualificationTest.qualification_type_id
            ).where(condition)
        )
        if key == own or (key, type_id) in wanted
    }
