"""A worker across the campaigns a user may see: standing, gold over time, the recent window, actions.

What the requester side knows of a worker: each campaign's record, their
assignments with their gold and decisions, what the outbox did to them
(bonuses, blocks, messages, qualification scores) and their qualification
test attempts. Reads only.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from hits.requester.files.campaign import stored_policy, stored_reward
from hits.requester.quality.outbox import PREVIOUS_SCORE
from hits.requester.quality.policy import GoldRecord, recent_window
from hits.requester.quality.spot_checks import SpotCheckSummary, spot_check_summary
from hits.requester.quality.trust import TRUST_PREFIX
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, Submission, WorkerStats
from hits.requester.tables.qualification import QualificationAttempt, QualificationTest

#: Outbox actions that are about a worker rather than one assignment, in words.
WORKER_ACTIONS = {
    "bonus": "bonus",
    "block": "blocked",
    "unblock": "block lifted",
    "notify": "message sent",
    "qualify": "qualification score sent",
    "revoke": "qualification revoked",
    "mirror": "qualification mirrored to a Prolific group",
    "override": "rejection overridden: approved and paid",
}


@dataclass(frozen=True)
class CampaignStanding:
    """The worker's record in one campaign."""

    campaign_id: int
    campaign_name: str
    template: str
    stats: WorkerStats
    threshold: float
    #: The latest complete block of ``recent_gold`` answers the recent-work test judges (None: none yet).
    recent: GoldRecord | None
    #: What reviewers found when they looked again at approved work (``spot_checks``).
    spot_checks: SpotCheckSummary | None = None


@dataclass(frozen=True)
class GoldPoint:
    """Cumulative gold accuracy after one graded assignment, in submission order."""

    when: datetime | None
    campaign_name: str
    correct: int
    total: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None


@dataclass(frozen=True)
class WorkerAction:
    """Something the outbox did (or is to do) to the worker."""

    when: datetime
    campaign_name: str
    what: str
    detail: str
    status: str


@dataclass
class WorkerProfile:
    """Everything the dashboard shows of one worker."""

    worker_id: str
    campaigns: list[CampaignStanding] = field(default_factory=list)
    gold: list[GoldPoint] = field(default_factory=list)
    actions: list[WorkerAction] = field(default_factory=list)
    attempts: list[tuple[QualificationAttempt, str]] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    paid: Decimal = Decimal("0.00")
    #: Bonuses the marketplace has paid, and those queued but not applied yet.
    bonuses_paid: Decimal = Decimal("0.00")
    bonuses_waiting: Decimal = Decimal("0.00")


def _latest_block(gold: list[tuple[int, int]], size: int) -> GoldRecord | None:
    """The latest complete block of the recent-work test (the model's own ``recent_window``); None
    while the test is off or no block is complete."""
    recent = recent_window(gold, size)
    return recent.blocks[-1] if recent is not None and recent.blocks else None


def _detail(entry: OutboxEntry) -> str:
    payload: dict[str, Any] = entry.payload or {}
    if entry.target.startswith(TRUST_PREFIX):
        # Adaptive gold's trust: said in words, not as the qualification's id.
        if entry.action == "revoke":
            return "no longer trusted: back to the HITs with more gold"
        return "trusted: may take the campaign's HITs with less gold"
    if entry.action == "bonus":
        return f"${payload.get('amount', '?')}: {payload.get('reason', '')}".rstrip(": ")
    if entry.action == "notify":
        return str(payload.get("subject", ""))
    if entry.action == "block":
        return str(payload.get("reason", ""))
    if entry.action == "override":
        return f"assignment {entry.target}" + (f": {payload['feedback']}" if payload.get("feedback") else "")
    if entry.action == "unblock":
        return ""
    if entry.action == "revoke":
        held = payload.get(PREVIOUS_SCORE)
        return f"{payload.get('qualification_type_id', '')}" + (
            f" (score was {held})" if held is not None else ""
        )
    return f"{payload.get('qualification_type_id', '')} = {payload.get('value', '?')}"


def _about(entry: OutboxEntry, worker_id: str) -> bool:
    payload: dict[str, Any] = entry.payload or {}
    return payload.get("worker_id") == worker_id or entry.target.endswith(f":{worker_id}")


def worker_profile(
    session: Session,
    visible: Collection[int] | Select[int],
    worker_id: str,
    tests: Collection[int] | None = None,
) -> WorkerProfile:
    """The worker's profile over the campaigns in ``visible`` (and the qualification tests in
    ``tests``; None: every test); empty when they worked on none of those campaigns."""
    profile = WorkerProfile(worker_id)
    records = list(
        session.scalars(
            select(WorkerStats).where(
                WorkerStats.worker_id == worker_id, WorkerStats.campaign_id.in_(visible)
            )
        )
    )
    campaigns = {
        c.id: c
        for c in session.scalars(select(Campaign).where(Campaign.id.in_([r.campaign_id for r in records])))
    }
    submissions = session.execute(
        select(Submission, PublishedHIT.campaign_id)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(Submission.worker_id == worker_id, PublishedHIT.campaign_id.in_(list(campaigns)))
        .order_by(Submission.submitted_at, Submission.id)
    ).all()
    per_campaign: dict[int, list[tuple[int, int]]] = {}
    correct = total = 0
    for submission, campaign_id in submissions:
        decision = submission.decision or "not decided yet"
        profile.decisions[decision] = profile.decisions.get(decision, 0) + 1
        if submission.decision == "approve":
            profile.paid += stored_reward(campaigns[campaign_id].spec)
        if submission.graded and submission.gold_total:
            per_campaign.setdefault(campaign_id, []).append((submission.gold_correct, submission.gold_total))
            correct, total = correct + submission.gold_correct, total + submission.gold_total
            profile.gold.append(
                GoldPoint(submission.submitted_at, campaigns[campaign_id].name, correct, total)
            )
    for record in sorted(records, key=lambda r: campaigns[r.campaign_id].name):
        campaign = campaigns[record.campaign_id]
        policy = stored_policy(campaign.spec)
        profile.campaigns.append(
            CampaignStanding(
                campaign.id,
                campaign.name,
                campaign.template,
                record,
                policy.accuracy_threshold,
                _latest_block(per_campaign.get(campaign.id, []), policy.recent_gold),
                spot_check_summary(session, campaign.id, worker_id),
            )
        )
    for entry in session.scalars(
        select(OutboxEntry)
        .where(OutboxEntry.campaign_id.in_(list(campaigns)), OutboxEntry.action.in_(list(WORKER_ACTIONS)))
        .order_by(OutboxEntry.created_at, OutboxEntry.id)
    ):
        if _about(entry, worker_id):
            if entry.action == "bonus":
                amount = Decimal(str((entry.payload or {}).get("amount", "0")))
                if entry.status == "done":
                    profile.bonuses_paid += amount
                else:
                    profile.bonuses_waiting += amount
            profile.actions.append(
                WorkerAction(
                    entry.created_at,
                    campaigns[entry.campaign_id].name,
                    WORKER_ACTIONS[entry.action],
                    _detail(entry),
                    "done" if entry.status == "done" else "waiting to be applied",
                )
            )
    attempts = (
        select(QualificationAttempt, QualificationTest.name)
        .join(QualificationTest, QualificationTest.id == QualificationAttempt.test_id)
        .where(QualificationAttempt.worker_id == worker_id)
        .order_by(QualificationAttempt.started_at)
    )
    if tests is not None:
        attempts = attempts.where(QualificationAttempt.test_id.in_(list(tests)))
    profile.attempts = [(attempt, name) for attempt, name in session.execute(attempts).all()]
    return profile


def gold_plot_data(profile: WorkerProfile) -> dict[str, Any]:
    """The gold-over-time series the profile plots: when, accuracy in percent, and each campaign's
    threshold (the line a reader compares against)."""
    points = [g for g in profile.gold if g.when is not None and g.accuracy is not None]
    return {
        "when": [g.when for g in points if g.when is not None],
        "accuracy": [round((g.accuracy or 0.0) * 100, 1) for g in points],
        "thresholds": sorted({round(c.threshold * 100, 1) for c in profile.campaigns}),
    }
