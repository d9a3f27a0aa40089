"""Bonuses, blocks and messages for recruited participants, relayed to the platform exactly once.

The requester's outbox (``rq_outbox``) pays bonuses, blocks workers and
sends messages on hitforge's marketplace. A recruited participant is paid by
the platform, not by the marketplace (whose pay-out runs skip their account:
``paid_elsewhere``), reads the platform's messages, and takes places the
study's filters allow. So when the outbox claims such an entry for a worker
who holds a place in the campaign's study, :func:`hand_over` writes one
``rq_recruit_relays`` row for it, in the claiming transaction:

* a **bonus** is paid on the platform *instead* of the marketplace (paying
  both would pay twice, and the marketplace's credit would never reach the
  participant);
* a **message** is sent on the platform instead (the account has no other
  address);
* a **block** is applied *also*: the marketplace's block keeps the account
  off the requester's HITs, and the participant joins the study's blocklist
  participant group, so the study no longer offers them a place.

:func:`apply_relays` makes the calls. Prolific's bonus is two calls, and
``pay`` is not idempotent: the set-up's id is committed on the row before
``pay`` is called, the row is marked ``sending`` (committed) before the call,
and ``done`` after. A pay call that certainly did nothing (refused,
throttled, 503) is tried again; one whose outcome is unknown (another fault,
a lost answer, an attempt that died while ``sending``) is *held* for a
person: Prolific's API cannot be asked about one bonus payment, so nothing
pays it again unless a person says it was not paid (:func:`resolve_held`).
Messages follow the same rule; adding to a group is idempotent and simply
retried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope, utcnow
from hits.requester.recruit.base import Recruiter, RecruitError, RecruitOutcomeUnknown
from hits.requester.tables.campaigns import OutboxEntry
from hits.requester.tables.recruiting import RecruitAssignment, Recruitment, RecruitPlace, RecruitRelay

#: The outbox actions relayed, and what each becomes on the platform.
RELAYED = {"bonus": "bonus", "block": "block", "notify": "message"}
#: Relayed actions the marketplace no longer does (the platform does them instead).
INSTEAD = frozenset({"bonus", "notify"})
#: Rows a claim may take: not yet sent, or a bonus set up and not yet paid.
CLAIMABLE = ("pending", "set_up")
#: A row ``sending`` for longer than this belongs to an attempt that died (the client's calls time
#: out long before: 30 s, a few retries).
STALE_SENDING = timedelta(minutes=10)
HELD_UNKNOWN = "held: whether Prolific carried it out is unknown; a person checks and resolves it"


@dataclass(frozen=True)
class HandedOver:
    """An outbox entry relayed to the platform: the relay's id, and whether the marketplace is skipped."""

    relay_id: int
    instead: bool
    outcome: str


def hand_over(session: Session, entry: OutboxEntry) -> HandedOver | None:
    """Relay an outbox entry for a participant of the campaign's study, once; None for anyone else.

    Called by the outbox while it claims ``entry`` (its transaction): a
    second claim finds the relay written by the first.
    """
    if entry.action not in RELAYED:
        return None
    payload = entry.payload or {}
    worker_id = str(payload.get("worker_id") or "")
    existing = session.scalar(select(RecruitRelay).where(RecruitRelay.outbox_entry_id == entry.id))
    if existing is None:
        place = _place_of(session, entry.campaign_id, worker_id, payload.get("assignment_id"))
        if place is None:
            return None
        existing = RecruitRelay(
            recruitment_id=place.recruitment_id,
            outbox_entry_id=entry.id,
            action=RELAYED[entry.action],
            participant_id=place.participant_id,
            session_id=place.session_id,
            payload=_relay_payload(entry.action, payload),
            status="pending",
            attempts=0,
        )
        session.add(existing)
        session.flush()
    outcome = f"{entry.action} (relayed to Prolific: relay {existing.id})"
    return HandedOver(existing.id, entry.action in INSTEAD, outcome)


def _place_of(
    session: Session, campaign_id: int, worker_id: str, assignment_id: object
) -> RecruitPlace | None:
    """The worker's place in the campaign's study: the one that took the assignment, else the latest."""
    if not worker_id:
        return None
    query = (
        select(RecruitPlace)
        .join(Recruitment, Recruitment.id == RecruitPlace.recruitment_id)
        .where(
            # A panel has no API: its participants' bonuses and messages stay on the marketplace.
            Recruitment.platform == "prolific",
            Recruitment.campaign_id == campaign_id,
            RecruitPlace.worker_id == worker_id,
        )
    )
    if isinstance(assignment_id, str):
        took = session.scalar(
            query.join(RecruitAssignment, RecruitAssignment.place_id == RecruitPlace.id).where(
                RecruitAssignment.assignment_id == assignment_id
            )
        )
        if took is not None:
            return took
    return session.scalar(query.order_by(RecruitPlace.id.desc()).limit(1))


def _relay_payload(action: str, payload: dict[str, object]) -> dict[str, str]:
    if action == "bonus":
        # The amount as the outbox recorded it (a Decimal's text): Prolific takes it in the study's currency.
        return {"amount": str(payload["amount"]), "reason": str(payload.get("reason") or "")}
    if action == "notify":
        return {"subject": str(payload.get("subject") or ""), "message": str(payload.get("message") or "")}
    return {"reason": str(payload.get("reason") or "")}


@dataclass
class RelayReport:
    """Outcomes by relay id; errors of relays left to retry; relays held for a person."""

    outcomes: dict[int, str] = field(default_factory=dict)
    failures: dict[int, RecruitError] = field(default_factory=dict)
    held: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Claim:
    id: int
    action: str
    participant_id: str
    study_id: str
    recruitment_id: int
    group_id: str | None
    group_name: str
    setup_id: str | None
    payload: dict[str, str]


def group_name(internal_name: str) -> str:
    """The name of a study's blocklist participant group (found by it when its creation's answer was lost)."""
    return f"{internal_name} blocked"


def apply_relays(
    sessions: Callable[[], Session], recruiter: Recruiter, recruitment_id: int | None = None
) -> RelayReport:
    """Make each pending relay's calls once (no transaction open during a call); record what happened."""
    report = RelayReport()
    claims = _claim(sessions, recruitment_id, report)
    for claim in claims:
        try:
            report.outcomes[claim.id] = _apply(sessions, recruiter, claim)
        except RecruitOutcomeUnknown as exc:
            _finish(sessions, claim.id, "held", HELD_UNKNOWN, str(exc))
            report.held.append(claim.id)
        except RecruitError as exc:
            # Certainly not carried out: the row goes back to wait for the next attempt.
            with session_scope(sessions) as session:
                row = session.get(RecruitRelay, claim.id)
                assert row is not None
                row.status = "set_up" if row.setup_id else "pending"
                row.last_error = str(exc)[:2000]
            report.failures[claim.id] = exc
        else:
            _finish(sessions, claim.id, "done", report.outcomes[claim.id], None)
    return report


def _claim(sessions: Callable[[], Session], recruitment_id: int | None, report: RelayReport) -> list[_Claim]:
    """Mark the pending relays ``sending`` (committed before any call); hold those whose attempt died."""
    now = utcnow()
    claims = []
    with session_scope(sessions) as session:
        query = select(RecruitRelay, Recruitment).join(
            Recruitment, Recruitment.id == RecruitRelay.recruitment_id
        )
        if recruitment_id is not None:
            query = query.where(RecruitRelay.recruitment_id == recruitment_id)
        rows = session.execute(
            query.where(RecruitRelay.status.in_((*CLAIMABLE, "sending")))
            .order_by(RecruitRelay.id)
            .with_for_update(of=RecruitRelay)
        ).all()
        for row, recruitment in rows:
            if row.status == "sending":
                if row.sending_at is not None and now - row.sending_at < STALE_SENDING:
                    continue  # another attempt is making the call right now
                if row.action == "block" or (row.action == "bonus" and row.setup_id is None):
                    row.status = "pending"  # nothing paid or sent twice by doing it again
                else:
                    row.status, row.outcome = "held", HELD_UNKNOWN
                    row.last_error = "the attempt that was making the call died before recording its outcome"
                    report.held.append(row.id)
                    continue
            if recruitment.study_id is None:
                continue
            row.status, row.sending_at, row.attempts = "sending", now, row.attempts + 1
            claims.append(
                _Claim(
                    row.id,
                    row.action,
                    row.participant_id,
                    recruitment.study_id,
                    recruitment.id,
                    recruitment.block_group_id,
                    group_name(recruitment.internal_name),
                    row.setup_id,
                    dict(row.payload),
                )
            )
    return claims


def _apply(sessions: Callable[[], Session], recruiter: Recruiter, claim: _Claim) -> str:
    """One relay's calls; its outcome."""
    if claim.action == "bonus":
        setup_id = claim.setup_id
        if setup_id is None:
            # Setting up pays nothing: a set-up whose answer was lost is an unpaid orphan, not a payment.
            setup_id = recruiter.set_up_bonuses(
                claim.study_id, {claim.participant_id: claim.payload["amount"]}
            )
            with session_scope(sessions) as session:
                row = session.get(RecruitRelay, claim.id)
                assert row is not None
                row.setup_id, row.sending_at = setup_id, utcnow()  # committed before pay is called
        recruiter.pay_bonuses(setup_id)
        return f"bonus of {claim.payload['amount']} paid on Prolific ({setup_id})"
    if claim.action == "message":
        subject, message = claim.payload["subject"], claim.payload["message"]
        recruiter.send_message(claim.participant_id, claim.study_id, f"{subject}\n\n{message}".strip())
        return "message sent on Prolific"
    group_id = claim.group_id or ensure_block_group(
        sessions, recruiter, claim.recruitment_id, claim.group_name
    )
    recruiter.add_to_group(group_id, [claim.participant_id])
    return f"added to the study's blocklist group {group_id}"


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


def _finish(
    sessions: Callable[[], Session], relay_id: int, status: str, outcome: str, error: str | None
) -> None:
    with session_scope(sessions) as session:
        row = session.get(RecruitRelay, relay_id)
        assert row is not None
        row.status, row.outcome, row.last_error = status, outcome[:200], error
        if status == "done":
            row.applied_at = utcnow()


def resolve_held(session: Session, relay_id: int, *, paid: bool) -> RecruitRelay:
    """A person's answer about a held relay: carried out (done), or not (it is tried again)."""
    row = session.get(RecruitRelay, relay_id)
    if row is None or row.status != "held":
        raise ValueError(f"relay {relay_id} is not held")
    if paid:
        row.status, row.outcome, row.applied_at = (
            "done",
            "carried out on Prolific, as a person checked",
            utcnow(),
        )
    else:
        row.status = "set_up" if row.setup_id else "pending"
        row.outcome = "not carried out, as a person checked: tried again"
    session.flush()
    return row


def held_relays(session: Session, recruitment_id: int) -> list[RecruitRelay]:
    """A study's relays held for a person, oldest first."""
    return list(
        session.scalars(
            select(RecruitRelay)
            .where(RecruitRelay.recruitment_id == recruitment_id, RecruitRelay.status == "held")
            .order_by(RecruitRelay.id)
        )
    )
