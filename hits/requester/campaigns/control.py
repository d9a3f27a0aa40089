"""Pause, resume, cancel and extend a running campaign, and raise its budget.

The marketplace's own lever is a HIT's expiry (UpdateExpirationForHIT):
pausing expires every open HIT at once, and resuming gives them a fresh
lifetime; workers already holding an assignment may still submit it. Work
submitted before a pause or a cancellation is reviewed, approved, rejected
and paid exactly as before: a cancelled campaign stops taking new work, not
deciding the work it has. Each change is one outbox entry (its HITs' expiry,
applied through the API once) and one line in the audit log. Flushes, never
commits: the caller owns the transaction and sends the outbox ids after it.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.money import dollars
from hits.requester.quality.followups import campaign_spec, committed_cost, enqueue_once
from hits.requester.tables.campaigns import (
    CANCELLING,
    PAUSED,
    Campaign,
    PublishedHIT,
    ReviewAction,
    StaffUser,
)

Change = Literal["pause", "resume", "cancel", "extend"]
#: What a launch from the dashboard logs: the campaign stored and published, or the rest of its HITs.
Launch = Literal["launch", "publish the rest"]
#: Which statuses each change applies to.
ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    "pause": ("running",),
    "resume": (PAUSED,),
    "cancel": ("running", PAUSED),
    "extend": ("running",),
}
#: The longest extension at once (MTurk's longest HIT lifetime, a year).
MAX_EXTENSION_SECONDS = 365 * 86_400
#: The staff user the command line's changes are logged under (it cannot sign in).
COMMAND_LINE_USER = "command line"
#: Not a hash any password checks against: signing in as the command line always fails.
NO_PASSWORD = "!"  # noqa: S105


class ControlRefused(ValueError):
    """The change does not apply to the campaign as it is (the message says why)."""


@dataclass(frozen=True)
class ControlDone:
    """What a change queued (outbox ids to send after commit) and what it did, in words."""

    entry_ids: list[int]
    said: str


def command_line_user(session: Session) -> int:
    """The id of the staff user the command line acts as, made on first use (no password works)."""
    found = session.scalar(select(StaffUser.id).where(StaffUser.username == COMMAND_LINE_USER))
    if found is not None:
        return found
    user = StaffUser(username=COMMAND_LINE_USER, password_hash=NO_PASSWORD, role="qa")
    session.add(user)
    session.flush()
    return user.id


def _open_hits(session: Session, campaign_id: int) -> list[str]:
    return [
        h
        for h in session.scalars(
            select(PublishedHIT.mturk_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id, PublishedHIT.status == "open")
            .order_by(PublishedHIT.id)
        )
        if h
    ]


def change_campaign(
    session: Session,
    campaign: Campaign,
    change: Change,
    staff_id: int,
    note: str = "",
    *,
    extend_seconds: int | None = None,
    now: datetime | None = None,
) -> ControlDone:
    """Pause, resume, cancel or extend ``campaign`` (locked here); refused when it does not apply."""
    now = now or utcnow()
    locked = session.scalar(
        select(Campaign)
        .where(Campaign.id == campaign.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    assert locked is not None
    if locked.status not in ALLOWED_FROM[change]:
        raise ControlRefused(
            f"campaign {locked.name!r} is {locked.status}: {change} applies only to a campaign that is "
            + " or ".join(ALLOWED_FROM[change])
        )
    hits = _open_hits(session, locked.id)
    stamp = now.strftime("%Y%m%dT%H%M%S.%f")
    if change in ("pause", "cancel"):
        entry = enqueue_once(session, locked.id, "expire", f"{change}:{locked.id}:{stamp}", {"hits": hits})
        locked.status = PAUSED if change == "pause" else CANCELLING
        said = (
            f"Campaign {locked.name} paused: its {len(hits)} open HITs expire now; work already submitted is "
            "still reviewed and paid"
            if change == "pause"
            else f"Campaign {locked.name} cancelled: its {len(hits)} open HITs expire now; work already "
            "submitted is reviewed and paid as usual, then the campaign ends"
        )
    else:
        if change == "resume":
            seconds = campaign_spec(locked).lifetime_seconds
        else:
            if extend_seconds is None or not 60 <= extend_seconds <= MAX_EXTENSION_SECONDS:
                raise ControlRefused("an extension is between one minute and a year")
            seconds = extend_seconds
        until = now + timedelta(seconds=seconds)
        entry = enqueue_once(
            session,
            locked.id,
            "extend",
            f"{change}:{locked.id}:{stamp}",
            {"hits": hits, "expire_at": until.isoformat()},
        )
        locked.status = "running"
        said = (
            f"Campaign {locked.name} {'resumed' if change == 'resume' else 'extended'}: its {len(hits)} open "
        )
        said += f"HITs take work until {until.strftime('%Y-%m-%d %H:%M UTC')}"
    log_change(session, locked.id, staff_id, change, note)
    session.flush()
    return ControlDone([entry] if entry is not None else [], said)


def raise_budget(session: Session, campaign: Campaign, budget: Decimal, staff_id: int, note: str = "") -> str:
    """Set a new budget; never below what the campaign has already committed to pay."""
    locked = session.scalar(
        select(Campaign)
        .where(Campaign.id == campaign.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    assert locked is not None
    committed = committed_cost(session, locked)
    if budget < committed:
        raise ControlRefused(
            f"the campaign has committed {dollars(committed)} already: a budget of "
            f"{dollars(budget)} would be below it"
        )
    before = locked.budget
    locked.budget = budget
    log_change(
        session,
        locked.id,
        staff_id,
        "budget",
        f"{dollars(before)} -> {dollars(budget)}; {note}".rstrip("; "),
    )
    session.flush()
    return f"Budget of {locked.name} set to {dollars(budget)} (was {dollars(before)})"


def log_launch(session: Session, campaign_id: int, staff_id: int, action: Launch, note: str = "") -> None:
    """The audit line of a campaign launched from the dashboard, or the rest of its HITs published."""
    log_change(session, campaign_id, staff_id, action, note)


def log_change(session: Session, campaign_id: int, staff_id: int, action: str, note: str) -> None:
    """One line in the audit log for a campaign-wide change (no worker), naming the shell's user if any."""
    if staff_id == session.scalar(select(StaffUser.id).where(StaffUser.username == COMMAND_LINE_USER)):
        note = f"by {getpass.getuser()} on the command line" + (f"; {note}" if note else "")
    # A campaign-wide change has no worker: the log's worker column stays empty.
    session.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id="",
            staff_user_id=staff_id,
            action=f"campaign {action}",
            note=note[:2000],
        )
    )
