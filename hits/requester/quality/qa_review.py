"""What QA staff decide on the dashboard, turned into outbox entries.

A reviewer decides about a worker (confirm or clear a flag) or about one
held assignment (approve or reject). Either way the decision goes through
the same follow-ups as the pipeline's own decisions (re-posting rejected
work, bonuses, blocks and messages, each within the budget) and leaves an
audit row. Like all domain code this flushes and never commits: the
dashboard request owns the transaction and sends the returned outbox ids
once it commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.money import mturk_fee
from hits.requester.files.campaign import QualityPolicy, stored_policy, stored_reward
from hits.requester.quality import followups
from hits.requester.quality.review import lock_worker_stats
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    Submission,
    WorkerStats,
)

WorkerReview = Literal["confirm", "clear"]
HeldDecision = Literal["approve", "reject"]


class NotHeld(ValueError):
    """The assignment is not waiting for a reviewer (already decided, or never held)."""


class NotFlagged(ValueError):
    """Confirm and clear are for a flagged worker: this one is not (or no longer) flagged."""


@dataclass(frozen=True)
class WorkerReviewDone:
    """What a confirm or clear did: the outbox ids to send, and what it left as it was."""

    entry_ids: list[int]
    decided: int
    #: Work the quality model had already rejected (or approved): a flag's review does not undo it.
    already_rejected: int
    already_approved: int


def held_submissions(session: Session, campaign_id: int, worker_id: str) -> list[Submission]:
    """The worker's assignments in the campaign that wait for a reviewer, oldest first, row-locked.

    Locked and read afresh, so that work a sync or the deadline approval
    decided a moment ago is not decided again. Submissions are locked before
    the worker's record, the order the sync takes them in.
    """
    return list(
        session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(
                PublishedHIT.campaign_id == campaign_id,
                Submission.worker_id == worker_id,
                Submission.decision == "held",
            )
            .order_by(Submission.id)
            .with_for_update(of=Submission)
            .execution_options(populate_existing=True)
        )
    )


def review_worker(
    session: Session,
    campaign_id: int,
    worker_id: str,
    action: WorkerReview,
    staff_id: int,
    note: str,
    evidence_sha256: str | None = None,
) -> WorkerReviewDone:
    """Confirm or clear a worker's flag; decide their held work accordingly.

    Refused (:class:`NotFlagged`) for a worker who is not flagged: clearing
    would otherwise approve held work with no flag to clear. Work the model
    decided already stays decided (the result says how much of it there is).

    ``confirm``: the worker is not doing the work: their held assignments are
    rejected (with the campaign's feedback and re-posting policy) and the
    flagged-worker policy (block, message) is applied. ``clear``: the flag was
    wrong: the flag is lifted, the held assignments are approved (with any
    bonus the policy grants), and the pipeline will not flag this worker
    again in this campaign (its later flags hold work for a person instead).
    """
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise LookupError(f"no campaign {campaign_id}")
    held = held_submissions(session, campaign_id, worker_id)
    record = lock_worker_stats(session, campaign_id, [worker_id]).get(worker_id)
    if record is None:
        raise LookupError(f"no worker {worker_id} in campaign {campaign_id}")
    if not record.flagged:
        raise NotFlagged(f"worker {worker_id} is not flagged in campaign {campaign.name}")
    policy = stored_policy(campaign.spec)
    created: list[int | OutboxEntry | None] = []
    record.flag_review = action
    if action == "clear":
        record.flagged = False
    else:
        record.flagged = True
        created.extend(followups.on_flagged(session, campaign, policy, worker_id))
    for submission in held:
        created.extend(_decide(session, campaign, policy, record, submission, _as_decision(action), None))
    session.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id=worker_id,
            staff_user_id=staff_id,
            action=action,
            note=note,
            assignments=[s.assignment_id for s in held],
            evidence_sha256=evidence_sha256,
        )
    )
    session.flush()
    decided = _decided_counts(session, campaign_id, worker_id, exclude={s.id for s in held})
    return WorkerReviewDone(_ids(created), len(held), decided.get("reject", 0), decided.get("approve", 0))


def _decided_counts(session: Session, campaign_id: int, worker_id: str, exclude: set[int]) -> dict[str, int]:
    """The worker's other assignments in the campaign by decision (approve, reject, ...)."""
    counts: dict[str, int] = {}
    for submission_id, decision in session.execute(
        select(Submission.id, Submission.decision)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker_id)
    ):
        if submission_id not in exclude and decision:
            counts[decision] = counts.get(decision, 0) + 1
    return counts


def decide_held(
    session: Session,
    submission_id: int,
    action: HeldDecision,
    staff_id: int,
    note: str,
    feedback: str | None = None,
    evidence_sha256: str | None = None,
) -> list[int]:
    """Approve or reject one held assignment, with the campaign's follow-ups. Outbox ids, in order.

    ``feedback``: for a rejection, what the worker reads (RequesterFeedback); the campaign's
    default rejection feedback when None. ``evidence_sha256``: the digest of the evidence the
    reviewer's page showed, kept in the audit log.
    """
    # One assignment is a selection of one: the same locks, the same audit row.
    done = decide_many(session, [submission_id], action, staff_id, note, feedback, evidence_sha256)
    if not done.decided:
        raise NotHeld(f"assignment {done.skipped[0] if done.skipped else submission_id} is not held")
    return done.entry_ids


@dataclass(frozen=True)
class BulkDone:
    """What a decision on a selection did: outbox ids to send, and which assignments it decided."""

    entry_ids: list[int]
    decided: list[str]
    #: Selected assignments that were no longer waiting (decided meanwhile): left as they are.
    skipped: list[str]


def decide_many(
    session: Session,
    submission_ids: list[int],
    action: HeldDecision,
    staff_id: int,
    note: str,
    feedback: str | None = None,
    evidence_sha256: str | None = None,
) -> BulkDone:
    """Approve or reject a selection of held assignments, each once, with one audit row each.

    The submissions are row-locked in id order and read afresh, then the workers' records in
    worker order (the order a sync takes them in); an assignment decided meanwhile (by the
    pipeline, the deadline approval or another reviewer) is skipped, not decided twice.
    """
    selected = list(
        session.scalars(
            select(Submission)
            .where(Submission.id.in_(sorted(set(submission_ids))))
            .order_by(Submission.id)
            .with_for_update(of=Submission)
            .execution_options(populate_existing=True)
        )
    )
    held = [s for s in selected if s.decision == "held"]
    skipped = [s.assignment_id for s in selected if s.decision != "held"]
    created: list[int | OutboxEntry | None] = []
    by_campaign: dict[int, list[Submission]] = {}
    for submission in held:
        by_campaign.setdefault(submission.published_hit.campaign_id, []).append(submission)
    # Every worker record first, in (campaign, worker) order, before any decision locks a
    # campaign's row for its budget: the outbox takes worker records, then campaigns.
    records = {
        campaign_id: lock_worker_stats(session, campaign_id, sorted({s.worker_id for s in submissions}))
        for campaign_id, submissions in sorted(by_campaign.items())
    }
    for campaign_id, submissions in sorted(by_campaign.items()):
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        policy = stored_policy(campaign.spec)
        for submission in submissions:
            record = records[campaign_id][submission.worker_id]
            created.extend(_decide(session, campaign, policy, record, submission, action, feedback))
            session.add(
                ReviewAction(
                    campaign_id=campaign_id,
                    worker_id=submission.worker_id,
                    staff_user_id=staff_id,
                    action=action,
                    note=note,
                    assignments=[submission.assignment_id],
                    evidence_sha256=evidence_sha256,
                )
            )
    session.flush()
    return BulkDone(_ids(created), [s.assignment_id for s in held], skipped)


@dataclass(frozen=True)
class SelectionCost:
    """What approving a selection pays: the rewards, and the marketplace's fees on them."""

    assignments: int
    rewards: Decimal
    fees: Decimal

    @property
    def total(self) -> Decimal:
        return self.rewards + self.fees


def selection_cost(session: Session, submissions: list[Submission]) -> SelectionCost:
    """The money a selection's approval moves (each campaign's reward and fee rate)."""
    rewards = fees = Decimal("0.00")
    for submission in submissions:
        campaign = session.get(Campaign, submission.published_hit.campaign_id)
        assert campaign is not None
        reward = stored_reward(campaign.spec)
        rewards += reward
        fees += mturk_fee(reward, max_assignments=int(campaign.spec.get("assignments_per_hit", 1) or 1))
    return SelectionCost(len(submissions), rewards, fees)


def _as_decision(action: WorkerReview) -> HeldDecision:
    return "reject" if action == "confirm" else "approve"


def _decide(
    session: Session,
    campaign: Campaign,
    policy: QualityPolicy,
    record: WorkerStats,
    submission: Submission,
    action: HeldDecision,
    feedback: str | None,
) -> list[int | OutboxEntry | None]:
    """The outbox entry for one reviewed assignment, then its follow-up (re-post or bonus).

    ``record``: the worker's record, locked by the caller.
    """
    payload = {"feedback": feedback or policy.rejection_feedback} if action == "reject" else {}
    entry = OutboxEntry(
        campaign_id=campaign.id, action=action, target=submission.assignment_id, payload=payload
    )
    session.add(entry)
    submission.decision = action
    submission.evidence = {**(submission.evidence or {}), "decided_by": "qa"}
    if action == "reject":
        follow = followups.on_rejected(session, campaign, policy, submission)
    else:
        follow = followups.on_approved(session, campaign, policy, record, submission.assignment_id)
    return [entry, follow]


def _ids(created: list[int | OutboxEntry | None]) -> list[int]:
    return [c if isinstance(c, int) else c.id for c in created if c is not None]
