"""The outbox: decisions and follow-ups applied through the API exactly once.

An entry is written in the transaction of the decision that caused it; the
task that applies it makes one API call with no database transaction open,
then records the outcome. Tokens sent to the marketplace derive from the row.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import partial
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, or_, select, update
from sqlalchemy.orm import Session

from hits.db import call_after_commit, locked_by_id, session_scope, utcnow
from hits.requester.mturk import (
    DuplicateRequest,
    InvalidAssignmentState,
    InvalidHITState,
    Marketplace,
    MarketplaceError,
)
from hits.requester.quality.redo_exclusion import (  # noqa: F401 (re-exported)
    TooManyRequirements,
    exclude_from_hit,
    redo_qualification_name,
)
from hits.requester.recruit.relay import HandedOver, hand_over
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, Submission, WorkerStats

#: The payload key a done revocation records the worker's score under (a restore grants it again).
PREVIOUS_SCORE = "previous_score"
#: The payload key a done re-post records the HIT's MaxAssignments under, read after adding one.
MAX_ASSIGNMENTS_AFTER = "max_assignments_after"


@dataclass(frozen=True)
class _Claim:
    """An entry taken for applying: what to call, read in the claiming transaction."""

    id: int
    campaign_id: int
    action: str
    target: str
    payload: dict[str, Any]
    #: 1 on the first attempt; more when an earlier attempt failed, timed out or died.
    attempt: int = 1


class RejectionPending(MarketplaceError):
    """A re-post waits for its assignment's rejection to be applied first (in this batch or a later one)."""

    retryable = True


@dataclass(frozen=True)
class _Applied:
    """What one call did: its outcome, and the marketplace's own decision when it had decided first."""

    outcome: str
    #: "approve" or "reject": the marketplace had already decided the assignment the other way.
    superseded_by: str | None = None
    #: Nothing was called: the entry turned out not to be needed (it is done all the same).
    not_needed: bool = False
    #: A redo moved its HIT to this HIT type (``exclude_from_hit``): the sync lists it there.
    moved_to: str | None = None
    #: What the call learnt that the entry keeps (a revoked qualification's score, for a restore).
    recorded: dict[str, Any] = field(default_factory=dict)


@dataclass
class ApplyReport:
    """What applying a list of entries did: outcomes by entry id, and the errors of those that failed."""

    outcomes: dict[int, str] = field(default_factory=dict)
    failures: dict[int, MarketplaceError] = field(default_factory=dict)

    def retryable(self) -> list[int]:
        """Failed entries worth another try soon (throttling, faults), in id order."""
        return sorted(i for i, e in self.failures.items() if e.retryable)


#: How long a claimed entry is left to the task that claimed it. Longer than a claim's calls take
#: (each is bounded by the client's timeouts and retries); a task that died mid-call leaves its
#: entries to the resend sweep once it has passed.
CLAIM_LEASE = timedelta(minutes=5)
#: Decisions are independent of one another and wait on the network: this many at once.
APPLY_THREADS = 4
#: Actions applied several at a time; the others (bonuses, blocks, re-posts...) follow, in order.
_INDEPENDENT = ("approve", "reject", "reviewing")


def apply_entries(
    sessions: Callable[[], Session],
    market: Marketplace,
    entry_ids: list[int],
    threads: int = APPLY_THREADS,
    send_relays: Callable[[list[int]], object] | None = None,
) -> ApplyReport:
    """Apply outbox entries through the API, each exactly once; record outcomes and failures.

    Three steps, no transaction open during the calls: claim the entries (one
    transaction), call the API (approvals and rejections several at a time,
    then follow-ups such as bonuses and blocks one by one in entry order, as
    they may depend on a decision), record what happened (one transaction).
    If a previous attempt's call succeeded but its bookkeeping was lost (a
    crash), the marketplace reports the assignment already decided (the
    assignment's actual state is then read back and recorded), or a bonus's or
    re-post's token already processed (recorded as applied; a re-posted HIT
    is re-opened all the same).

    ``send_relays`` is given the ids of the relays the claim wrote for recruited participants
    (``docs/recruiting.md``) once the claim commits: the task applying them is sent then.
    """
    report = ApplyReport()
    claims = _claim(sessions, market.access_key_id, entry_ids, report, send_relays)
    decisions = [c for c in claims if c.action in _INDEPENDENT]
    others = [c for c in claims if c.action not in _INDEPENDENT]
    if len(decisions) > 1 and threads > 1:
        with ThreadPoolExecutor(max_workers=min(threads, len(decisions))) as pool:
            results = list(pool.map(lambda c: _call_safely(market, c), decisions))
    else:
        results = [_call_safely(market, c) for c in decisions]
    results += [_call_safely(market, c) for c in others]
    done: dict[int, tuple[_Claim, _Applied]] = {}
    for claim, result in zip(decisions + others, results, strict=True):
        if isinstance(result, MarketplaceError):
            report.failures[claim.id] = result
        else:
            done[claim.id] = (claim, result)
            report.outcomes[claim.id] = result.outcome
    with session_scope(sessions) as session:
        _record_done(session, list(done.values()))
        for entry_id, error in report.failures.items():
            entry = session.get(OutboxEntry, entry_id)
            if entry is not None:
                # Released at once: the task's own retry (or the resend sweep) may claim it again.
                entry.last_error, entry.claimed_until = str(error)[:2000], None
    return report


def apply_entry(
    sessions: Callable[[], Session],
    market: Marketplace,
    entry_id: int,
    send_relays: Callable[[list[int]], object] | None = None,
) -> str:
    """Apply one outbox entry (see :func:`apply_entries`); raise its error if it failed."""
    report = apply_entries(sessions, market, [entry_id], threads=1, send_relays=send_relays)
    if entry_id in report.failures:
        raise report.failures[entry_id]
    return report.outcomes[entry_id]


def _claim(
    sessions: Callable[[], Session],
    access_key_id: str,
    entry_ids: list[int],
    report: ApplyReport,
    send_relays: Callable[[list[int]], object] | None,
) -> list[_Claim]:
    """Count an attempt on each pending entry this access key may apply; the rest are skipped."""
    relays: list[int] = []
    with session_scope(sessions) as session:
        # Locked, in id order, and read fresh: a second task given the same entries (the resend
        # sweep's copy of a message that was only slow) waits here, then sees the lease below.
        entries = locked_by_id(session, OutboxEntry, entry_ids)
        now = utcnow()
        keys = dict(
            session.execute(
                select(Campaign.id, Campaign.access_key_id).where(
                    Campaign.id.in_({e.campaign_id for e in entries.values()})
                )
            ).all()
        )
        claims = []
        for entry_id in dict.fromkeys(entry_ids):  # in the caller's order, once each
            entry = entries.get(entry_id)
            if entry is None or entry.status == "done":
                report.outcomes[entry_id] = "skipped"
            elif entry.claimed_until is not None and entry.claimed_until > now:
                # Another task is calling the marketplace for it right now: not a second call.
                report.outcomes[entry_id] = "skipped (being applied by another task)"
            elif keys.get(entry.campaign_id) != access_key_id:
                # Another requester's decision: only its own credentials may apply it.
                report.outcomes[entry_id] = "skipped (published with another access key)"
            elif (relayed := _hand_over(session, entry, relays)) is not None and relayed.instead:
                # A recruited participant's bonus or message: the platform does it (docs/recruiting.md).
                entry.status, entry.applied_at, entry.last_error = "done", utcnow(), None
                report.outcomes[entry_id] = relayed.outcome
            else:
                entry.attempts += 1
                entry.claimed_until = now + CLAIM_LEASE
                claims.append(
                    _Claim(
                        entry.id,
                        entry.campaign_id,
                        entry.action,
                        entry.target,
                        dict(entry.payload),
                        entry.attempts,
                    )
                )
        if relays and send_relays is not None:
            call_after_commit(session, partial(send_relays, relays))
    return claims


def _hand_over(session: Session, entry: OutboxEntry, written: list[int]) -> HandedOver | None:
    """``hand_over``, noting the relays written now (their task is sent after the commit)."""
    relayed = hand_over(session, entry)
    if relayed is not None and relayed.created:
        written.append(relayed.relay_id)
    return relayed


def _call_safely(market: Marketplace, claim: _Claim) -> _Applied | MarketplaceError:
    try:
        return _call(market, claim)
    except MarketplaceError as exc:
        return exc


def _call(market: Marketplace, claim: _Claim) -> _Applied:
    """The API call for one entry; its outcome."""
    action, target, payload = claim.action, claim.target, claim.payload
    outcome = action
    moved_to = None
    try:
        if action == "approve":
            market.approve(target, payload.get("feedback"))
        elif action == "reject":
            market.reject(target, payload["feedback"])
        elif action == "qualify":
            # Idempotent on the marketplace: associating again sets the same value.
            market.associate_qualification(
                payload["qualification_type_id"], payload["worker_id"], payload["value"]
            )
        elif action == "bonus":
            if claim.attempt > 1 and _bonus_already_paid(market, payload):
                return _Applied("bonus (already paid: listed by ListBonusPayments)")
            market.send_bonus(
                payload["worker_id"],
                payload["assignment_id"],
                Decimal(payload["amount"]),
                payload["reason"],
                unique_request_token=f"hitforge-bonus-{claim.id}",
            )
        elif action == "override":
            # Approving after a rejection needs the rejection applied first (RejectAssignment
            # runs in the same batch, ahead of follow-ups, or in an earlier one).
            state = market.get_assignment(target)["AssignmentStatus"]
            if state == "Approved":
                return _Applied("override (already applied)")
            if state != "Rejected":
                raise RejectionPending(state, f"assignment {target} is not rejected yet")
            market.override_rejection(target, payload.get("feedback"))
        elif action in ("expire", "extend"):
            # Pausing, cancelling, resuming and extending a campaign: one entry for its HITs.
            # Setting the same expiry again is harmless, so a retried entry redoes them all.
            when = utcnow() if action == "expire" else datetime.fromisoformat(payload["expire_at"])
            for hit_id in payload["hits"]:
                market.update_expiration(hit_id, when)
            outcome = f"{action} ({len(payload['hits'])} HITs)"
        elif action == "retype":
            # Adaptive gold's HITs for trusted workers opened to everyone (``trust.open_trusted_hits``);
            # moving a HIT to the type it has already is harmless, so a retried entry redoes them all.
            for hit_id in payload["hits"]:
                market.update_hit_type_of_hit(hit_id, payload["hit_type_id"])
            outcome = f"retype ({len(payload['hits'])} HITs opened to everyone)"
        elif action == "mirror":
            # Only ever relayed (the marketplace holds the grant already); it reaches here when no
            # study the worker holds a place in mirrors the qualification any more.
            return _Applied("mirror (not needed: no study mirrors it now)", not_needed=True)
        elif action == "unblock":
            market.unblock_worker(payload["worker_id"])  # lifting a missing block is harmless
        elif action == "revoke":
            held = market.qualification_score(payload["qualification_type_id"], payload["worker_id"])
            if held is None:
                return _Applied(
                    "revoke (not needed: the worker holds no such qualification)", not_needed=True
                )
            market.disassociate_qualification(payload["qualification_type_id"], payload["worker_id"])
            return _Applied("revoke", recorded={PREVIOUS_SCORE: held})
        elif action == "block":
            market.block_worker(payload["worker_id"], payload["reason"])  # blocking again is harmless
        elif action == "notify":
            failures = market.notify([payload["worker_id"]], payload["subject"], payload["message"])
            if failures:
                outcome = f"notify (not delivered: {failures[0].get('NotifyWorkersFailureCode')})"
        elif action == "reviewing":
            try:
                market.set_reviewing(payload["hit_id"])
            except InvalidHITState:
                # A re-post opened it again since: it is not finished, leave it listed.
                outcome = "reviewing (not set: the HIT is open again)"
        elif action == "repost":
            # Only work that really ended rejected is offered again: the marketplace may have
            # approved it first (the rejection then superseded), and paying twice for one slot
            # is a cost the budget guard never counted.
            state = market.get_assignment(target)["AssignmentStatus"]
            if state == "Approved":
                return _Applied("repost (not needed: approved on the marketplace)", not_needed=True)
            if state != "Rejected":
                raise RejectionPending(state, f"assignment {target} is not rejected yet")
            if payload.get("exclude"):
                moved_to = exclude_from_hit(market, payload["hit_id"], payload["exclude"])
            market.add_assignments(payload["hit_id"], 1, unique_request_token=f"hitforge-repost-{claim.id}")
        else:
            raise ValueError(f"unknown outbox action {action}")
    except DuplicateRequest:
        # The row's token was processed: a previous attempt paid or added, and its
        # bookkeeping was lost (a crash, a timeout after the marketplace acted).
        if action not in ("bonus", "repost"):
            raise
        outcome = f"{action} (already applied)"
    except InvalidAssignmentState:
        if action not in ("approve", "reject"):
            raise
        state = market.get_assignment(target)["AssignmentStatus"]
        expected = {"approve": "Approved", "reject": "Rejected"}[action]
        if state == expected:
            outcome = f"{action} (already applied)"
        elif state in _DECIDED:
            # The marketplace decided first (its auto-approval, or a decision made outside
            # hitforge): it is the authority, and retrying would only fail again forever.
            return _Applied(f"{action} (superseded: {state} on the marketplace)", _DECIDED[state])
        else:
            raise
    if action == "repost":
        # How many assignments the HIT allows now, read after the call: a sync that read the HIT
        # before it saw fewer, and must not close it from that (``pipeline.stale_after_repost``).
        allowed = market.get_hit(payload["hit_id"])["MaxAssignments"]
        return _Applied(outcome, moved_to=moved_to, recorded={MAX_ASSIGNMENTS_AFTER: allowed})
    return _Applied(outcome, moved_to=moved_to)


def _bonus_already_paid(market: Marketplace, payload: dict[str, Any]) -> bool:
    """Whether the assignment already carries this bonus (same worker, amount and reason).

    Asked only when retrying: the token stops a replay for 24 hours, MTurk's
    window, but an attempt that died after paying may be retried later than
    that (workers down for a day), and the token is then a new request. The
    policy grants one bonus per worker and campaign, so a matching payment on
    the assignment is this one.
    """
    amount = Decimal(payload["amount"])
    return any(
        paid.get("WorkerId") == payload["worker_id"]
        and Decimal(str(paid.get("BonusAmount"))) == amount
        and paid.get("Reason") == payload["reason"]
        for paid in market.bonus_payments(payload["assignment_id"])
    )


#: Assignment statuses that are final decisions, and the decision each is.
_DECIDED = {"Approved": "approve", "Rejected": "reject"}


#: The payload key a done redo records the HIT type its HIT was moved to under (``running_hit_types``).
MOVED_TO = "moved_to_hit_type"


def _record_done(session: Session, done: list[tuple[_Claim, _Applied]]) -> None:
    """Mark entries done; re-open re-posted HITs; count decisions on the workers' records.

    Rows are touched in the order a sync batch locks them: HITs, then worker
    records, then campaigns (the budget guard's lock), so the two never wait
    on each other in a cycle.
    """
    if not done:
        return
    now = utcnow()
    session.execute(
        update(OutboxEntry)
        .where(OutboxEntry.id.in_([c.id for c, _ in done]))
        # Its claim ends with it: an entry set pending again (a replay) is anyone's to apply.
        .values(status="done", applied_at=now, last_error=None, claimed_until=None)
    )
    reposts = sorted((c for c, a in done if c.action == "repost" and not a.not_needed), key=lambda c: c.id)
    for claim, applied in done:
        learnt = {**applied.recorded, **({MOVED_TO: applied.moved_to} if applied.moved_to else {})}
        if learnt:
            entry = session.get(OutboxEntry, claim.id)
            if entry is not None:  # a new dict: the JSON column sees a reassignment, not an edit
                entry.payload = {**entry.payload, **learnt}
    reopen_hits(session, [c.payload["hit_id"] for c in reposts])
    decided = {
        c.target: applied.superseded_by or c.action
        for c, applied in done
        if c.action in ("approve", "reject")
    }
    _record_superseded(session, [(c, a) for c, a in done if a.superseded_by is not None])
    count_decisions(session, decided)
    count_overrides(
        session, [c.target for c, a in done if c.action == "override" and a.outcome == "override"]
    )
    reopen_campaigns(session, [c.campaign_id for c in reposts])


def _record_superseded(session: Session, superseded: list[tuple[_Claim, _Applied]]) -> None:
    """Submissions the marketplace decided the other way take its decision, with the evidence why."""
    if not superseded:
        return
    by_assignment = {c.target: (c, a) for c, a in superseded}
    for submission in session.scalars(
        select(Submission).where(Submission.assignment_id.in_(list(by_assignment))).order_by(Submission.id)
    ):
        claim, applied = by_assignment[submission.assignment_id]
        submission.decision = applied.superseded_by
        submission.evidence = {
            **(submission.evidence or {}),
            "decided_by": "marketplace",
            "superseded": f"hitforge's {claim.action} came after the marketplace's decision",
        }


def count_decisions(session: Session, decided: dict[str, str]) -> None:
    """Add approvals and rejections (action by assignment id) to the workers' records.

    The records must exist (grading makes them); those applied through the
    outbox, and those the marketplace made itself (counted by the sync).
    """
    if not decided:
        return
    counts: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for assignment_id, worker_id, campaign_id in session.execute(
        select(Submission.assignment_id, Submission.worker_id, PublishedHIT.campaign_id)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(Submission.assignment_id.in_(list(decided)))
    ):
        counts[(campaign_id, worker_id)][0 if decided[assignment_id] == "approve" else 1] += 1
    if not counts:
        # Decisions on assignments no campaign graded (a batch's): no worker record to count on.
        return
    # The records exist (grading made them): one relative UPDATE statement, run
    # for every worker in worker order (executemany), needs no read first.
    stats = cast(Table, WorkerStats.__table__)
    session.execute(
        update(stats)
        .where(stats.c.campaign_id == bindparam("c"), stats.c.worker_id == bindparam("w"))
        .values(approved=stats.c.approved + bindparam("a"), rejected=stats.c.rejected + bindparam("r")),
        [{"c": c, "w": w, "a": a, "r": r} for (c, w), (a, r) in sorted(counts.items())],
    )


def count_overrides(session: Session, assignment_ids: list[str]) -> None:
    """Rejections overridden on the marketplace move from the workers' rejected count to approved."""
    if not assignment_ids:
        return
    moved: dict[tuple[int, str], int] = defaultdict(int)
    for worker_id, campaign_id in session.execute(
        select(Submission.worker_id, PublishedHIT.campaign_id)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(Submission.assignment_id.in_(assignment_ids))
    ):
        moved[(campaign_id, worker_id)] += 1
    stats = cast(Table, WorkerStats.__table__)
    session.execute(
        update(stats)
        .where(stats.c.campaign_id == bindparam("c"), stats.c.worker_id == bindparam("w"))
        .values(approved=stats.c.approved + bindparam("n"), rejected=stats.c.rejected - bindparam("n")),
        [{"c": c, "w": w, "n": n} for (c, w), n in sorted(moved.items())],
    )


def reopen_hits(session: Session, mturk_hit_ids: list[str]) -> None:
    """Re-posted HITs (another assignment) are being worked on again: locked, in id order."""
    if not mturk_hit_ids:
        return
    for published in session.scalars(
        select(PublishedHIT)
        .where(PublishedHIT.mturk_hit_id.in_(mturk_hit_ids))
        .order_by(PublishedHIT.id)
        .with_for_update()
    ):
        published.status = "open"
    session.flush()


def reopen_campaigns(session: Session, campaign_ids: list[int]) -> None:
    """The campaigns of re-posted HITs are running again (after :func:`reopen_hits`, and after
    any worker records: the lock order of the requester side)."""
    # Locked and read fresh (in id order, after the HITs): ``finish_campaigns`` takes the same
    # lock before it moves a campaign to review, so one of the two sees the other's work.
    if not campaign_ids:
        return
    for campaign in session.scalars(
        select(Campaign)
        .where(Campaign.id.in_(sorted(set(campaign_ids))))
        .order_by(Campaign.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ):
        if campaign.status == "review":
            campaign.status = "running"
    session.flush()


def claim_stale_entries(session: Session, access_key_id: str, sent_before: datetime) -> list[int]:
    """Pending outbox entries last sent before ``sent_before``, marked as sent now.

    Marking them means a long queue is not flooded with copies of entries that
    are merely waiting their turn: each is re-sent once per staleness period.
    """
    rows = session.scalars(
        select(OutboxEntry)
        .join(Campaign, Campaign.id == OutboxEntry.campaign_id)
        .where(
            Campaign.access_key_id == access_key_id,
            OutboxEntry.status == "pending",
            func.coalesce(OutboxEntry.queued_at, OutboxEntry.created_at) < sent_before,
            # Not while a task holds it: that one is applying it, a copy would only be skipped.
            or_(OutboxEntry.claimed_until.is_(None), OutboxEntry.claimed_until < utcnow()),
        )
        .order_by(OutboxEntry.id)
        .with_for_update()
    ).all()
    now = utcnow()
    for entry in rows:
        entry.queued_at = now
    return [entry.id for entry in rows]
