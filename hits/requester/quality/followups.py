"""What a campaign's policy does beyond approve and reject: blocks, messages, bonuses, re-posts.

Each follow-up is an outbox entry created in the same transaction as the
decision that caused it, and applied through the API exactly once by
:func:`hits.requester.quality.outbox.apply_entry`. Money-moving follow-ups (bonuses,
re-posts) pass the budget guard first: a campaign's committed cost never
exceeds its budget. Tokens sent to the marketplace derive from outbox rows.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.money import format_amount, mturk_fee
from hits.requester.files.campaign import CampaignSpec, QualityPolicy, stored_reward
from hits.requester.quality import spot_checks
from hits.requester.quality.platform_bonus import BonusCurrencyError, platform_bonus
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import (
    CANCELLING,
    PAUSED,
    Campaign,
    OutboxEntry,
    PublishedHIT,
    Submission,
    WorkerStats,
)
from hits.requester.tables.recruiting import Recruitment

#: Outbox actions that cost money, and so count against the budget.
PAID_ACTIONS = ("bonus", "repost")


class OverBudget(Exception):
    """A payment that would take the campaign past its budget."""


def campaign_spec(campaign: Campaign) -> CampaignSpec:
    return CampaignSpec.model_validate({k: v for k, v in campaign.spec.items() if k != "media_path"})


def assignment_cost(spec: CampaignSpec) -> Decimal:
    """One assignment's reward plus the marketplace's fee."""
    return spec.reward + mturk_fee(spec.reward, max_assignments=spec.assignments_per_hit)


def stored_assignment_cost(campaign: Campaign) -> Decimal:
    """One assignment's reward plus fee, read from the stored spec as it is (an older campaign's
    spec need not validate against today's campaign file to be counted)."""
    reward = stored_reward(campaign.spec)
    return reward + mturk_fee(reward, max_assignments=_stored_per_hit(campaign))


def _stored_per_hit(campaign: Campaign) -> int:
    value = campaign.spec.get("assignments_per_hit", 3)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 3


def committed_cost(session: Session, campaign: Campaign, hits: int | None = None) -> Decimal:
    """Everything the campaign has committed to pay: its HITs' assignments, bonuses, re-posts and
    its recruiting study (rewards and the platform's fees).

    ``hits``: the number of its published HITs when the caller has it (the campaign page, from
    the counters); else they are counted here, seeing this transaction's own.
    """
    if hits is None:
        hits = session.scalar(
            select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == campaign.id)
        )
    total = stored_assignment_cost(campaign) * assignments_per_hit(session, campaign) * int(hits or 0)
    extras = session.scalars(
        select(OutboxEntry.payload).where(
            OutboxEntry.campaign_id == campaign.id, OutboxEntry.action.in_(PAID_ACTIONS)
        )
    )
    # A recruiting study's rewards and Prolific's fees, counted when it was launched (recruitment.py).
    studies = session.scalar(
        select(func.coalesce(func.sum(Recruitment.study_cost), 0)).where(
            Recruitment.campaign_id == campaign.id
        )
    )
    total += Decimal(str(studies or 0))
    return total + sum((Decimal(str(p.get("cost", "0"))) for p in extras), Decimal("0"))


def assignments_per_hit(session: Session, campaign: Campaign) -> int:
    """How many assignments each of the campaign's HITs was published with.

    A layout batch may ask for more than a campaign file's limit of 100, which
    its spec is capped at (see ``hits.requester.batches.plan.campaign_spec_of``): its own
    settings hold the real number, and every one of them is paid for.
    """
    settings = session.scalar(select(Batch.settings).where(Batch.campaign_id == campaign.id))
    if not settings:
        return _stored_per_hit(campaign)
    return int(settings.get("assignments", _stored_per_hit(campaign)))


def check_budget(session: Session, campaign: Campaign, cost: Decimal, what: str) -> None:
    """Raise :class:`OverBudget`, with the figures, if ``cost`` does not fit in what is left.

    The campaign's row is locked first, for the rest of the transaction: two
    batches queueing payments for one campaign at once (on PostgreSQL) take
    turns, the second reading what the first committed. Callers hold their
    HIT rows and worker records already; the campaign is locked last, the
    order the outbox's bookkeeping keeps too (SQLite already serialises
    writers). ``FOR NO KEY UPDATE``, not ``FOR UPDATE``: the key-share locks
    that inserting the batch's outbox rows and worker records takes on the
    campaign do not conflict with it, so two batches that both inserted
    before checking queue here instead of deadlocking.
    """
    budget = session.scalar(
        select(Campaign.budget).where(Campaign.id == campaign.id).with_for_update(key_share=True)
    )
    assert budget is not None
    committed = committed_cost(session, campaign)
    if committed + cost > budget:
        raise OverBudget(
            f"{what} would cost {format_amount(cost)}, but campaign {campaign.name!r} has committed "
            f"{format_amount(committed)} of its {format_amount(budget)} budget"
        )


def enqueue_once(
    session: Session, campaign_id: int, action: str, target: str, payload: dict[str, Any]
) -> int | None:
    """Add an outbox entry once per (action, target); ``None`` if it already exists.

    A form posted twice, or a decision two workers race to, queues one entry.
    """
    if session.scalar(
        select(OutboxEntry.id).where(OutboxEntry.action == action, OutboxEntry.target == target)
    ):
        return None
    try:
        with session.begin_nested():
            entry = OutboxEntry(campaign_id=campaign_id, action=action, target=target, payload=payload)
            session.add(entry)
    except IntegrityError:
        return None  # a concurrent decision queued it first
    return entry.id


def decided_in_outbox(session: Session, assignment_ids: list[str]) -> dict[str, str]:
    """The approve or reject already queued for each of the assignments that has one.

    A decision made elsewhere (a batch's reviewed results file) may be queued
    before its submission says so: a second, different decision would
    contradict it, and the same one would clash with its unique key.
    """
    if not assignment_ids:
        return {}
    rows = session.execute(
        select(OutboxEntry.target, OutboxEntry.action).where(
            OutboxEntry.target.in_(assignment_ids), OutboxEntry.action.in_(("approve", "reject"))
        )
    )
    return {str(target): str(action) for target, action in rows}


def on_flagged(session: Session, campaign: Campaign, policy: QualityPolicy, worker_id: str) -> list[int]:
    """Blocks and a message for a worker who has just been flagged."""
    created = []
    key = f"c{campaign.id}:{worker_id}"
    if policy.flagged_worker == "soft_block" and campaign.block_qualification_type_id:
        created.append(
            enqueue_once(
                session,
                campaign.id,
                "qualify",
                f"block-{key}",
                {
                    "qualification_type_id": campaign.block_qualification_type_id,
                    "worker_id": worker_id,
                    "value": 1,
                },
            )
        )
    elif policy.flagged_worker == "hard_block":
        created.append(
            enqueue_once(
                session, campaign.id, "block", key, {"worker_id": worker_id, "reason": policy.block_reason}
            )
        )
    if policy.notify_flagged:
        subject = f"About your work on: {campaign_spec(campaign).title}"[:200]
        created.append(
            enqueue_once(
                session,
                campaign.id,
                "notify",
                key,
                {"worker_id": worker_id, "subject": subject, "message": policy.notify_flagged},
            )
        )
    return [c for c in created if c is not None]


def on_rejected(
    session: Session, campaign: Campaign, policy: QualityPolicy, submission: Submission
) -> int | None:
    """Re-post a rejected assignment's work to someone else, if the policy and budget allow."""
    if not policy.repost_rejected:
        return None
    cost = assignment_cost(campaign_spec(campaign))
    try:
        check_budget(session, campaign, cost, "re-posting a rejected assignment")
    except OverBudget as exc:
        submission.evidence = {**(submission.evidence or {}), "not_reposted": str(exc)}
        return None
    return queue_repost(session, campaign.id, submission, cost)


def queue_repost(
    session: Session,
    campaign_id: int,
    submission: Submission,
    cost: Decimal,
    exclude: list[dict[str, Any]] | None = None,
) -> int | None:
    """Queue one more assignment of a rejected submission's HIT, once per assignment; the entry's id.

    The caller has checked that ``cost`` fits the budget (a campaign's, or a
    workflow's across its stages). ``exclude``: ``{qualification_type_id,
    workers}`` rules the HIT is made to keep out first (``outbox.exclude_from_hit``).
    ``None`` when it was queued already.
    """
    payload: dict[str, Any] = {"hit_id": submission.published_hit.mturk_hit_id, "cost": format_amount(cost)}
    if exclude:
        payload["exclude"] = exclude
    return enqueue_once(session, campaign_id, "repost", submission.assignment_id, payload)


def on_approved(
    session: Session, campaign: Campaign, policy: QualityPolicy, stats: WorkerStats, assignment_id: str
) -> int | None:
    """A bonus for high gold accuracy, once per worker and campaign, within budget."""
    rule = policy.bonus
    if rule is None or stats.gold_total < rule.min_gold:
        return None
    if stats.gold_correct / stats.gold_total < rule.min_gold_accuracy:
        return None
    try:
        # A participant recruited on Prolific is paid there, in the study's currency, with its fee.
        on_platform = platform_bonus(
            session, campaign, campaign_spec(campaign), stats.worker_id, assignment_id, rule.amount
        )
    except BonusCurrencyError:
        return None  # the campaign file does not say how to pay it there: no bonus, never a wrong one
    cost = on_platform.cost if on_platform is not None else rule.amount + mturk_fee(rule.amount)
    try:
        check_budget(session, campaign, cost, f"a bonus for worker {stats.worker_id}")
    except OverBudget:
        return None  # the bonus is a reward, not an obligation: no budget, no bonus
    payload = {
        "worker_id": stats.worker_id,
        "assignment_id": assignment_id,
        "amount": format_amount(rule.amount),
        "reason": rule.reason,
        "cost": format_amount(cost),
        "gold": f"{stats.gold_correct}/{stats.gold_total}",
        **(on_platform.payload() if on_platform is not None else {}),
    }
    return enqueue_once(session, campaign.id, "bonus", f"c{campaign.id}:{stats.worker_id}", payload)


def on_hits_complete(session: Session, closed: list[tuple[PublishedHIT, int]]) -> list[OutboxEntry]:
    """Set HITs whose work is all taken in to Reviewing on the marketplace.

    ``closed``: (HIT, number of submissions) of HITs just closed, whose rows
    the caller holds locked. ListReviewableHITs would otherwise return every
    finished HIT of the campaign on every sync, ever more pages as the
    campaign grows. The target carries the number of submissions: a HIT
    re-opened by a re-post and finished again is marked again.
    """
    wanted = {f"{p.mturk_hit_id}@{n}": p for p, n in closed if p.mturk_hit_id}
    if not wanted:
        return []
    # The HITs' rows are locked by the caller: no concurrent sync queues these targets.
    queued = set(
        session.scalars(
            select(OutboxEntry.target).where(
                OutboxEntry.action == "reviewing", OutboxEntry.target.in_(list(wanted))
            )
        )
    )
    entries = [
        OutboxEntry(
            campaign_id=p.campaign_id, action="reviewing", target=target, payload={"hit_id": p.mturk_hit_id}
        )
        for target, p in wanted.items()
        if target not in queued
    ]
    session.add_all(entries)
    return entries


def due_before_deadline(session: Session, access_key_id: str, now: datetime) -> list[int]:
    """Approve work the marketplace would otherwise auto-approve: nothing is decided by default.

    An assignment still undecided or held for QA when its auto-approval
    deadline (minus the policy's margin) arrives is approved explicitly, with
    that reason as evidence, so hitforge's records match what is paid.
    """
    created = []
    campaigns = session.scalars(
        select(Campaign).where(
            Campaign.access_key_id == access_key_id,
            Campaign.status.in_(("running", "review", PAUSED, CANCELLING)),
        )
    )
    for campaign in campaigns:
        spec = campaign_spec(campaign)
        delay = spec.auto_approval_delay_seconds
        # The margin never eats more than a tenth of the delay: a short delay still leaves
        # the review pipeline most of it to decide on evidence.
        cutoff = now - timedelta(seconds=delay - min(spec.quality.deadline_margin_seconds, delay // 10))
        due = session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(
                PublishedHIT.campaign_id == campaign.id,
                # Only work the marketplace has confirmed: a page's answers alone are no assignment.
                Submission.synced.is_(True),
                Submission.submitted_at.is_not(None),
                Submission.submitted_at <= cutoff,
                (Submission.decision.is_(None)) | (Submission.decision == "held"),
            )
        ).all()
        queued = decided_in_outbox(session, [s.assignment_id for s in due])
        for submission in due:
            if submission.assignment_id in queued:
                submission.decision = queued[submission.assignment_id]  # decided already, not by default
                continue
            entry = enqueue_once(session, campaign.id, "approve", submission.assignment_id, {})
            if entry is None:
                continue
            submission.decision = "approve"
            submission.evidence = {
                **(submission.evidence or {}),
                "reason": "approved before the marketplace's auto-approval deadline; no decision was reached",
            }
            created.append(entry)
        # Approved with no person looking: spot checks draw from these too.
        approved = [s for s in due if s.decision == "approve" and s.assignment_id not in queued]
        spot_checks.sample_approved(session, campaign, spec.quality, approved)
    session.flush()
    return created
