"""The outbox: decisions and follow-ups applied through the API exactly once.

An entry is written in the transaction of the decision that caused it; the
task that applies it makes one API call with no database transaction open,
then records the outcome. Tokens sent to the marketplace derive from the row.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.campaigns.models import Campaign, OutboxEntry, PublishedHIT, Submission
from hits.db import session_scope, utcnow
from hits.mturk import InvalidAssignmentState, Marketplace


def apply_entry(sessions: Callable[[], Session], market: Marketplace, entry_id: int) -> str:
    """Apply one outbox decision through the API, exactly once.

    If a previous attempt's call succeeded but its bookkeeping was lost (a
    crash), the marketplace reports the assignment already decided; the
    assignment's actual state is then read back and recorded.
    """
    with session_scope(sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        if entry is None or entry.status == "done":
            return "skipped"
        campaign = session.get(Campaign, entry.campaign_id)
        if campaign is None or campaign.access_key_id != market.access_key_id:
            # Another requester's decision: only its own credentials may apply it.
            return "skipped (published with another access key)"
        entry.attempts += 1
        action, target, payload = entry.action, entry.target, dict(entry.payload)
    outcome = action
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
            market.send_bonus(
                payload["worker_id"],
                payload["assignment_id"],
                Decimal(payload["amount"]),
                payload["reason"],
                unique_request_token=f"hitforge-bonus-{entry_id}",
            )
        elif action == "block":
            market.block_worker(payload["worker_id"], payload["reason"])  # blocking again is harmless
        elif action == "notify":
            failures = market.notify([payload["worker_id"]], payload["subject"], payload["message"])
            if failures:
                outcome = f"notify (not delivered: {failures[0].get('NotifyWorkersFailureCode')})"
        elif action == "repost":
            market.add_assignments(payload["hit_id"], 1, unique_request_token=f"hitforge-repost-{entry_id}")
        else:
            raise ValueError(f"unknown outbox action {action}")
    except InvalidAssignmentState:
        if action not in ("approve", "reject"):
            raise
        state = market.get_assignment(target)["AssignmentStatus"]
        expected = {"approve": "Approved", "reject": "Rejected"}[action]
        if state != expected:
            raise
        outcome = f"{action} (already applied)"
    with session_scope(sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None
        entry.status, entry.applied_at, entry.last_error = "done", utcnow(), None
        if action == "repost":
            reopen(session, entry.campaign_id, payload["hit_id"])
        submission = session.scalar(select(Submission).where(Submission.assignment_id == target))
        if submission is not None and action in ("approve", "reject"):
            published = submission.published_hit
            from hits.quality.pipeline import worker_stats  # the pipeline imports this module

            stats = worker_stats(session, published.campaign_id, submission.worker_id)
            if action == "approve":
                stats.approved += 1
            else:
                stats.rejected += 1
    return outcome


def reopen(session: Session, campaign_id: int, mturk_hit_id: str) -> None:
    """A HIT that got another assignment is being worked on again, and so is its campaign."""
    published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == mturk_hit_id))
    if published is not None:
        published.status = "open"
    campaign = session.get(Campaign, campaign_id)
    if campaign is not None and campaign.status == "review":
        campaign.status = "running"


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
        )
        .order_by(OutboxEntry.id)
        .with_for_update()
    ).all()
    now = utcnow()
    for entry in rows:
        entry.queued_at = now
    return [entry.id for entry in rows]


def record_failure(sessions: Callable[[], Session], entry_id: int, error: str) -> None:
    with session_scope(sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        if entry is not None:
            entry.last_error = error[:2000]
