"""A campaign's relays to Prolific as the dashboard lists them, and a person's answer about a held one.

What ``hitforge recruit held`` and ``recruit resolve`` do on the command
line, for the campaign page: every relay (bonuses, blocks, messages, group
changes) with its state, newest first, a page at a time, said in words; a
held relay resolved through the same :func:`resolve_held`, with a line in
the audit log naming who answered.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.recruit.relay import ACTION_WORDS, resolve_held
from hits.requester.tables.campaigns import ReviewAction
from hits.requester.tables.recruiting import Recruitment, RecruitPlace, RecruitRelay

PER_PAGE = 25
#: Each relay state in words.
STATE_WORDS = {
    "pending": "waiting to be sent",
    "set_up": "set up on Prolific, not paid yet",
    "sending": "being sent",
    "done": "done",
    "held": "held: whether Prolific carried it out is unknown",
    "refused": "not paid: it would cost more than the budget counted",
}
#: The audit log's actions for a person's answer about a held relay.
RESOLVED = {True: "relay recorded as done", False: "relay recorded as not done"}


@dataclass(frozen=True)
class RelayLine:
    """One relay, in words."""

    id: int
    action: str
    participant_id: str
    what: str
    state: str
    held: bool
    outcome: str
    attempts: int
    created: str
    error: str


@dataclass(frozen=True)
class RelayPage:
    lines: list[RelayLine]
    page: int
    pages: int
    total: int
    held: int


def _what(row: RecruitRelay) -> str:
    payload = row.payload or {}
    if row.action == "bonus":
        amount = f"{payload.get('amount', '')} {payload.get('pay_currency', '')}".strip()
        return f"bonus of {amount}: {payload.get('reason', '')}".rstrip(": ")
    if row.action == "message":
        return f"message: {payload.get('subject', '')}"
    if row.action in ("group_add", "group_remove"):
        return f"{ACTION_WORDS[row.action]} {payload.get('group', '')} ({payload.get('qualification', '')})"
    return f"block: {payload.get('reason', '')}"


def relay_page(session: Session, campaign_id: int, page: int = 1) -> RelayPage | None:
    """The campaign's relays, newest first, a page at a time; None when it recruits on no platform."""
    recruitment_id = session.scalar(select(Recruitment.id).where(Recruitment.campaign_id == campaign_id))
    if recruitment_id is None:
        return None
    mine = RecruitRelay.recruitment_id == recruitment_id
    total = int(session.scalar(select(func.count()).select_from(RecruitRelay).where(mine)) or 0)
    held = int(
        session.scalar(
            select(func.count()).select_from(RecruitRelay).where(mine, RecruitRelay.status == "held")
        )
        or 0
    )
    pages = max(1, -(-total // PER_PAGE))
    page = min(max(page, 1), pages)
    rows = session.scalars(
        select(RecruitRelay)
        .where(mine)
        # The held ones first: a person has something to do about them.
        .order_by((RecruitRelay.status == "held").desc(), RecruitRelay.id.desc())
        .offset((page - 1) * PER_PAGE)
        .limit(PER_PAGE)
    )
    lines = [
        RelayLine(
            id=row.id,
            action=ACTION_WORDS.get(row.action, row.action),
            participant_id=row.participant_id,
            what=_what(row),
            state=STATE_WORDS.get(row.status, row.status),
            held=row.status == "held",
            outcome=row.outcome or "",
            attempts=row.attempts,
            created=row.created_at.strftime("%Y-%m-%d %H:%M UTC"),
            error=(row.last_error or "")[:300],
        )
        for row in rows
    ]
    return RelayPage(lines, page, pages, total, held)


def resolve_for_campaign(
    session: Session, campaign_id: int, relay_id: int, *, done: bool, staff_id: int, note: str
) -> str:
    """A person's answer about one of the campaign's held relays, as ``recruit resolve``; audited."""
    row = session.get(RecruitRelay, relay_id)
    recruitment = session.get(Recruitment, row.recruitment_id) if row is not None else None
    if row is None or recruitment is None or recruitment.campaign_id != campaign_id:
        raise ValueError(f"relay {relay_id} is not one of this campaign's")
    what = _what(row)
    resolved = resolve_held(session, relay_id, paid=done)
    worker_id = session.scalar(
        select(RecruitPlace.worker_id).where(RecruitPlace.session_id == row.session_id)
    )
    session.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id=worker_id or "",
            staff_user_id=staff_id,
            action=RESOLVED[done],
            note=(
                f"relay {relay_id} ({what}, participant {row.participant_id}"
                + (f", set-up {row.setup_id}" if row.setup_id else "")
                + ")"
                + (f"; {note}" if note.strip() else "")
            )[:2000],
        )
    )
    session.flush()
    return f"Relay {relay_id} ({what}): {resolved.outcome}"
