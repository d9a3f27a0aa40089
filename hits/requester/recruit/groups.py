"""Participant groups hitforge keeps on the platform: a study's blocklist, and mirrored qualifications.

Both are made before they are needed (at launch), under hitforge's own names,
and found by name when a creation's answer was lost, so no group is made
twice. A *mirrored qualification*'s group follows a qualification the
campaign grants its participants: granted (a score of 1 or more), the
participant joins it; revoked, or granted 0 (a qualification test's "failed"),
they leave it. Another study may allow only its members (its id in the
campaign file's ``eligibility.participant_groups``).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.recruit.base import Recruiter
from hits.requester.tables.recruiting import RecruitGroup, Recruitment

#: The relay actions that change a mirrored group's members.
GROUP_ACTIONS = {"add": "group_add", "remove": "group_remove"}


def block_group_name(internal_name: str) -> str:
    """The name of a study's blocklist participant group (found by it when its creation's answer was lost)."""
    return f"{internal_name} blocked"


def mirror_group_name(internal_name: str, label: str) -> str:
    """The name of the group mirroring the qualification ``label`` for a study."""
    return f"{internal_name} {label}"[:200]


def ensure_block_group(
    sessions: Callable[[], Session], recruiter: Recruiter, recruitment_id: int, name: str
) -> str:
    """The recruitment's blocklist participant group, made once (found by name if its answer was lost)."""
    group_id = recruiter.find_group(name) or recruiter.create_participant_group(name)
    with session_scope(sessions) as session:
        row = session.get(Recruitment, recruitment_id)
        assert row is not None
        row.block_group_id = row.block_group_id or group_id
        return row.block_group_id


def plan_mirror_groups(session: Session, recruitment: Recruitment, wanted: dict[str, str]) -> None:
    """Rows for the groups mirroring ``wanted`` (qualification type id -> label), once each."""
    have = set(
        session.scalars(
            select(RecruitGroup.qualification_type_id).where(RecruitGroup.recruitment_id == recruitment.id)
        )
    )
    for type_id, label in wanted.items():
        if type_id not in have:
            session.add(
                RecruitGroup(
                    recruitment_id=recruitment.id,
                    qualification_type_id=type_id,
                    label=label,
                    name=mirror_group_name(recruitment.internal_name, label),
                )
            )
    session.flush()


def ensure_mirror_groups(sessions: Callable[[], Session], recruiter: Recruiter, recruitment_id: int) -> int:
    """Make the planned mirror groups that have no id yet (each found by name first); how many were made."""
    with session_scope(sessions) as session:
        missing = [
            (row.id, row.name)
            for row in session.scalars(
                select(RecruitGroup)
                .where(RecruitGroup.recruitment_id == recruitment_id, RecruitGroup.group_id.is_(None))
                .order_by(RecruitGroup.id)
            )
        ]
    made = 0
    for row_id, name in missing:
        found = recruiter.find_group(name)
        group_id = found or recruiter.create_participant_group(name)
        made += found is None
        with session_scope(sessions) as session:
            row = session.get(RecruitGroup, row_id)
            assert row is not None
            row.group_id = row.group_id or group_id
    return made


def mirror_groups(session: Session, recruitment_id: int) -> list[RecruitGroup]:
    """A study's mirror groups, in the order the campaign file names them."""
    return list(
        session.scalars(
            select(RecruitGroup)
            .where(RecruitGroup.recruitment_id == recruitment_id)
            .order_by(RecruitGroup.id)
        )
    )
