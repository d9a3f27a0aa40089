"""How far a campaign has got: HITs and assignments by state, money, throughput and a finish estimate.

What the campaign page and ``hitforge campaign status`` show. HITs by status,
assignments by decision and submissions per hour are read from the counters
their writers keep (``hits.requester.tables.counters``): a few rows whatever the
campaign's size, so the page costs the same at 1,000 HITs as at 100,000. The
rest are aggregates over the campaign's workers and paid extras. Reads only;
the counters hold what was committed, so a transaction's own uncommitted
changes are not in its figures yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.quality.followups import (
    PAID_ACTIONS,
    assignments_per_hit,
    committed_cost,
    stored_assignment_cost,
)
from hits.requester.tables.campaigns import Campaign, OutboxEntry, WorkerStats
from hits.requester.tables.counters import decision_counts, hit_counts, hourly_counts

#: Throughput is counted in buckets of this many seconds: an hour, the hourly counters' own
#: buckets (``counters.hour_of``), which a different bucket would need recounted ...
BUCKET_SECONDS = 3600
#: ... over at most this many of the latest buckets (two days).
MAX_BUCKETS = 48
#: The finish estimate uses the rate over this many latest buckets that saw work.
RATE_BUCKETS = 3
#: Decisions in the order and words the page shows them.
DECISION_WORDS = {
    "approve": "approved",
    "reject": "rejected",
    "held": "held for a person",
    "void": "void (never confirmed)",
    None: "not decided yet",
}


@dataclass(frozen=True)
class Throughput:
    """Submissions per hour: bucket start times and counts, oldest first (hours with none included)."""

    starts: list[datetime]
    counts: list[int]

    @property
    def recent_rate(self) -> float | None:
        """Submissions per hour over the latest buckets that saw work (None: no work yet)."""
        busy = [c for c in self.counts if c][-RATE_BUCKETS:]
        return sum(busy) / len(busy) if busy else None


@dataclass
class CampaignProgress:
    """A campaign's state in figures."""

    campaign: Campaign
    hits: dict[str, int] = field(default_factory=dict)
    planned_assignments: int = 0
    decisions: dict[str | None, int] = field(default_factory=dict)
    budget: Decimal = Decimal("0")
    committed: Decimal = Decimal("0")
    #: Rewards with fees of approved work, and bonuses and re-posts the marketplace has applied.
    spent: Decimal = Decimal("0")
    throughput: Throughput = field(default_factory=lambda: Throughput([], []))
    workers: int = 0
    now: datetime = field(default_factory=utcnow)

    @property
    def submitted(self) -> int:
        return sum(self.decisions.values())

    @property
    def hit_count(self) -> int:
        return sum(self.hits.values())

    @property
    def share_done(self) -> float:
        """Submitted assignments over planned ones, 0..1."""
        return min(1.0, self.submitted / self.planned_assignments) if self.planned_assignments else 0.0

    @property
    def remaining(self) -> int:
        return max(0, self.planned_assignments - self.submitted)

    @property
    def estimated_finish(self) -> datetime | None:
        """When the planned assignments are all in at the recent rate (None: no rate, or done)."""
        rate = self.throughput.recent_rate
        if not self.remaining or not rate or self.campaign.status not in ("running", "publishing"):
            return None
        return self.now + timedelta(hours=self.remaining / rate)


def campaign_progress(session: Session, campaign: Campaign, now: datetime | None = None) -> CampaignProgress:
    """The campaign's progress (``now``: the clock's time, for the throughput window)."""
    progress = CampaignProgress(campaign, now=now or utcnow())
    progress.hits = hit_counts(session, campaign.id)
    progress.planned_assignments = progress.hit_count * assignments_per_hit(session, campaign)
    progress.decisions = decision_counts(session, campaign.id)
    progress.budget = campaign.budget
    progress.committed = committed_cost(session, campaign, hits=progress.hit_count)
    approved = progress.decisions.get("approve", 0)
    extras = session.scalars(
        select(OutboxEntry.payload).where(
            OutboxEntry.campaign_id == campaign.id,
            OutboxEntry.action.in_(PAID_ACTIONS),
            OutboxEntry.status == "done",
        )
    )
    progress.spent = stored_assignment_cost(campaign) * approved + sum(
        (Decimal(str(p.get("cost", "0"))) for p in extras), Decimal("0")
    )
    progress.workers = int(
        session.scalar(
            select(func.count()).select_from(WorkerStats).where(WorkerStats.campaign_id == campaign.id)
        )
        or 0
    )
    progress.throughput = throughput(session, campaign.id, progress.now)
    return progress


def throughput(session: Session, campaign_id: int, now: datetime) -> Throughput:
    """Submissions per hour over the latest ``MAX_BUCKETS`` hours, from the hourly counters."""
    end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    start = end - timedelta(seconds=BUCKET_SECONDS * MAX_BUCKETS)
    counted = hourly_counts(session, campaign_id, start, end)
    starts = [start + timedelta(seconds=BUCKET_SECONDS * i) for i in range(MAX_BUCKETS)]
    counts = [counted.get(s, 0) for s in starts]
    # Leading empty hours say nothing: the series starts at the first hour with work.
    first = next((i for i, c in enumerate(counts) if c), MAX_BUCKETS - 1)
    return Throughput(starts[first:], counts[first:])


def gold_accuracies(session: Session, campaign_id: int) -> list[tuple[str, int, int]]:
    """Each worker's gold in the campaign: (worker id, right, graded), workers with any gold only."""
    return [
        (w, c, t)
        for w, c, t in session.execute(
            select(WorkerStats.worker_id, WorkerStats.gold_correct, WorkerStats.gold_total).where(
                WorkerStats.campaign_id == campaign_id, WorkerStats.gold_total > 0
            )
        ).all()
    ]
