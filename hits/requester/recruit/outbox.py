"""Decisions on recruited places, applied on the platform exactly once.

hitforge decides a participant's place from its own quality verdicts on the
assignments the place covers: every one approved, the place is approved;
any one rejected, the place is rejected (with a platform category and a
message of at least ``MIN_REJECT_MESSAGE`` characters), or, when the
campaign pays in part (``recruit.partial_payment``), paid the approved
share of the reward once every task is judged; anything held or
undecided, the place waits. Each decision is a row of ``rq_recruit_outbox``
(unique per action and submission, and never two actions for one
submission), written in the transaction that decided it; applying reads the
submission first, so a decision a crashed attempt already applied is
recognised without a second call, and a place the participant returned or
that timed out is recorded, never transitioned (nor paid).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import locked_by_id, session_scope, utcnow
from hits.requester.recruit.base import Recruiter, RecruitError, RecruitRefused
from hits.requester.recruit.prolific import wire
from hits.requester.tables.campaigns import Submission
from hits.requester.tables.recruiting import RecruitAssignment, RecruitOutboxEntry, RecruitPlace

#: The platform status each action leads to (a place already there was decided by an earlier attempt).
_RESULT = {"approve": "APPROVED", "reject": "REJECTED", "partial": "PARTIALLY APPROVED"}
#: The platform's transition each action is made with.
_TRANSITION = {"approve": "APPROVE", "reject": "REJECT", "partial": "COMPLETE"}
#: The category of a place rejected on hitforge's gold: its checked answers were wrong.
REJECT_CATEGORY = "FAILED_CHECK"
#: How long a claimed decision is left to the process that claimed it: longer than its two calls
#: take (bounded by the client's timeouts and retries); one that died mid-call is retried after it.
CLAIM_LEASE = timedelta(minutes=5)
_REJECT_INTRO = (
    "Thank you for taking part. hitforge checks some answers in every task against known right answers, "
    "and in this place too many of them were wrong, so the place is rejected. What the task said: "
)


def rejection_message(feedback: str) -> str:
    """The message a rejected participant reads: why, in at least ``MIN_REJECT_MESSAGE`` characters."""
    return _REJECT_INTRO + feedback


def partial_message(approved: int, total: int, percentage: int) -> str:
    """What a participant paid in part reads."""
    return (
        f"Thank you for taking part. {approved} of the {total} tasks in your place passed hitforge's checks "
        f"against known right answers, so you are paid {percentage}% of the reward."
    )


def queue_decision(
    session: Session,
    place: RecruitPlace,
    action: str,
    *,
    category: str = "",
    message: str = "",
    **extra: object,
) -> RecruitOutboxEntry:
    """Write the decision on a place once; deciding again returns the entry already written.

    Refuses a rejection whose message is shorter than the platform accepts
    (it would be refused there forever) and a second, different decision.
    """
    if action not in _RESULT:
        raise ValueError(f"unknown decision {action!r}")
    if action == "partial" and int(str(extra.get("percentage", 0))) not in wire.PARTIAL_PERCENT:
        raise ValueError("a partial payment is 8 to 99 percent of the reward")
    if action == "reject":
        if category not in wire.REJECTION_CATEGORIES:
            raise ValueError(f"unknown rejection category {category!r}")
        if len(message) < wire.MIN_REJECT_MESSAGE:
            raise ValueError(f"a rejection message needs {wire.MIN_REJECT_MESSAGE} characters or more")
    existing = session.scalar(
        select(RecruitOutboxEntry).where(RecruitOutboxEntry.submission_id == place.session_id)
    )
    if existing is not None:
        if existing.action != action:
            raise ValueError(f"place {place.session_id} was decided already: {existing.action}")
        return existing
    payload: dict[str, object] = {}
    if action == "reject":
        payload = {"rejection_category": category, "message": message}
    elif action == "partial":
        payload = {"code": extra["code"], "percentage": extra["percentage"], "message": message}
    entry = RecruitOutboxEntry(
        recruitment_id=place.recruitment_id, action=action, submission_id=place.session_id, payload=payload
    )
    session.add(entry)
    session.flush()
    return entry


def decide_places(
    session: Session, recruitment_id: int, feedback: str, partial_code: str | None = None
) -> list[int]:
    """Queue a decision for each finished place whose assignments are all decided; the entries' ids.

    ``partial_code``: the study pays in part (``recruit.partial_payment``): a place with approved and
    rejected tasks gets the approved share of the reward instead of a rejection, when Prolific can
    pay that share (8 percent or more).
    """
    places = {
        p.id: p
        for p in session.scalars(
            select(RecruitPlace)
            .where(RecruitPlace.recruitment_id == recruitment_id, RecruitPlace.status == "finished")
            .order_by(RecruitPlace.id)
        )
    }
    decided = set(
        session.scalars(
            select(RecruitOutboxEntry.submission_id).where(
                RecruitOutboxEntry.recruitment_id == recruitment_id
            )
        )
    )
    verdicts: dict[int, list[str | None]] = defaultdict(list)
    rows = session.execute(
        select(RecruitAssignment.place_id, Submission.decision)
        .outerjoin(Submission, Submission.assignment_id == RecruitAssignment.assignment_id)
        .where(RecruitAssignment.place_id.in_(list(places)))
    )
    for place_id, decision in rows:
        verdicts[place_id].append(decision)
    queued = []
    for place_id, place in places.items():
        if place.session_id in decided or not verdicts[place_id]:
            continue
        found = verdicts[place_id]
        if "reject" in found and partial_code:
            if any(v not in ("approve", "reject") for v in found):
                continue  # paid in part once every task is judged: its share is not known yet
            approved = found.count("approve")
            # Rounded down: a place is never paid more than its approved share.
            share = approved * 100 // len(found)
            if share in wire.PARTIAL_PERCENT:
                message = partial_message(approved, len(found), share)
                entry = queue_decision(
                    session, place, "partial", message=message, code=partial_code, percentage=share
                )
                queued.append(entry.id)
                continue
        if "reject" in found:
            entry = queue_decision(
                session, place, "reject", category=REJECT_CATEGORY, message=rejection_message(feedback)
            )
        elif all(d == "approve" for d in found):
            entry = queue_decision(session, place, "approve")
        else:
            continue  # held for a person, or not judged yet
        queued.append(entry.id)
    return queued


@dataclass
class ApplyReport:
    """Outcomes by entry id; the errors of entries that failed (they stay pending)."""

    outcomes: dict[int, str] = field(default_factory=dict)
    failures: dict[int, RecruitError] = field(default_factory=dict)


def apply_decisions(
    sessions: Callable[[], Session], recruiter: Recruiter, entry_ids: list[int] | None = None
) -> ApplyReport:
    """Apply pending decisions on the platform, each exactly once (no transaction open during a call)."""
    report = ApplyReport()
    with session_scope(sessions) as session:
        query = select(RecruitOutboxEntry).where(RecruitOutboxEntry.status == "pending")
        if entry_ids is not None:
            query = query.where(RecruitOutboxEntry.id.in_(entry_ids))
        claims = []
        now = utcnow()
        # Locked and read fresh; the lease outlives the claim's transaction: a second process
        # settling the same study (the beat's and ``hitforge recruit sync``, or two beats' copies)
        # skips an entry being applied instead of reading the place's status before the first
        # one's transition lands and transitioning it again.
        for entry in session.scalars(
            query.order_by(RecruitOutboxEntry.id).with_for_update().execution_options(populate_existing=True)
        ):
            if entry.claimed_until is not None and entry.claimed_until > now:
                continue
            entry.attempts += 1
            entry.claimed_until = now + CLAIM_LEASE
            claims.append((entry.id, entry.action, entry.submission_id, dict(entry.payload)))
    results: dict[int, tuple[str, str | None]] = {}
    for entry_id, action, submission_id, payload in claims:
        try:
            results[entry_id] = _apply(recruiter, action, submission_id, payload)
        except RecruitError as exc:
            report.failures[entry_id] = exc
    with session_scope(sessions) as session:
        # Every entry this pass recorded, locked in one statement in id order, as the claim locks
        # them: updated one by one (the outcomes, then the failures) the locks came in another
        # order, and a second process's claim, holding a lower entry and waiting for a higher
        # one, deadlocked with it (PostgreSQL).
        locked = locked_by_id(session, RecruitOutboxEntry, [*results, *report.failures])
        for entry_id, (outcome, platform_status) in results.items():
            done = locked.get(entry_id)
            assert done is not None
            done.status, done.outcome, done.applied_at, done.last_error = "done", outcome, utcnow(), None
            done.claimed_until = None
            report.outcomes[entry_id] = outcome
            place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == done.submission_id))
            if place is not None and platform_status:
                place.platform_status = platform_status
        for entry_id, error in report.failures.items():
            failed = locked.get(entry_id)
            if failed is not None:
                # Released at once: the next settling pass tries it again.
                failed.last_error, failed.claimed_until = str(error)[:2000], None
    return report


def _apply(recruiter: Recruiter, action: str, submission_id: str, payload: dict[str, str]) -> tuple[str, str]:
    """One decision's call, after reading the place's state: its outcome and the platform status after."""
    status = recruiter.get_submission(submission_id).status
    if status == _RESULT[action]:
        return f"{action} (already applied)", status
    if status not in wire.TRANSITIONS_FROM[_TRANSITION[action]]:
        # Returned, timed out, or decided on the platform: a status once changed is final there.
        return f"{action} (not applied: {status} on Prolific)", status
    if action == "approve":
        return action, recruiter.approve(submission_id).status or _RESULT[action]
    if action == "partial":
        percentage = int(str(payload["percentage"]))
        paid = recruiter.pay_in_part(submission_id, str(payload["code"]), percentage, str(payload["message"]))
        return f"partial ({percentage}% of the reward)", paid.status or _RESULT[action]
    message = payload.get("message", "")
    if len(message) < wire.MIN_REJECT_MESSAGE:  # written checked; checked again before anything is sent
        raise RecruitRefused(0, "a rejection message under 100 characters is never sent")
    return action, recruiter.reject(
        submission_id, payload["rejection_category"], message
    ).status or "REJECTED"
