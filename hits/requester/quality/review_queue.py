"""The QA review queue: who and what waits for a person, most valuable decision first.

A row is one worker in one campaign with something to decide: a flag the
quality model raised and nobody has confirmed or cleared yet, or assignments
held for a person (held on a flag, or held when the campaign ended with the
worker still undecided). Rows are ordered by the money a decision settles (the
held assignments' rewards), then by how close the worker's gold accuracy is to
the campaign's threshold (a worker at the line is where a person's judgement
counts most), then by name. Reads only; the dashboard decides.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from hits.requester.files.campaign import stored_policy, stored_reward
from hits.requester.tables.campaigns import Campaign, WorkerStats
from hits.requester.tables.counters import held_by_worker

Reason = Literal["flagged", "held"]
#: What each reason means, as the queue's filter says it.
REASONS: dict[Reason, str] = {
    "flagged": "flagged, waiting for a reviewer",
    "held": "work held for a person",
}
PER_PAGE = 50


@dataclass(frozen=True)
class QueueRow:
    """One worker in one campaign with a decision waiting."""

    campaign_id: int
    campaign_name: str
    template: str
    worker_id: str
    reason: Reason
    flag_reason: str | None
    held: int
    at_stake: Decimal
    gold_correct: int
    gold_total: int
    threshold: float

    @property
    def accuracy(self) -> float | None:
        """Gold accuracy so far (None before any gold)."""
        return self.gold_correct / self.gold_total if self.gold_total else None

    @property
    def margin(self) -> float | None:
        """Accuracy minus the threshold: negative below the line."""
        return None if self.accuracy is None else self.accuracy - self.threshold


@dataclass(frozen=True)
class QueuePage:
    """One page of the queue, with what paging and the filters need."""

    rows: list[QueueRow]
    total: int
    page: int
    per_page: int
    #: The filters' choices, from every row the user may see (not only this page's).
    campaigns: list[tuple[int, str]]
    templates: list[str]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def _order(row: QueueRow) -> tuple[Decimal, float, str, str]:
    distance = abs(row.margin) if row.margin is not None else 1.0
    return (-row.at_stake, distance, row.campaign_name, row.worker_id)


def review_queue(
    session: Session,
    visible: Collection[int] | Select[int],
    *,
    campaign_id: int | None = None,
    template: str | None = None,
    reason: Reason | None = None,
    page: int = 1,
    per_page: int = PER_PAGE,
) -> QueuePage:
    """The queue over the campaigns in ``visible`` (ids, or a query of them), filtered, one page of it."""
    # Kept per worker as submissions are held and decided: a row a worker, not a read of the held work.
    held = {(c, w): n for c, w, n in session.execute(held_by_worker(visible))}
    flagged = {
        (s.campaign_id, s.worker_id): s
        for s in session.scalars(
            select(WorkerStats).where(
                WorkerStats.campaign_id.in_(visible),
                WorkerStats.flagged.is_(True),
                WorkerStats.flag_review.is_(None),
            )
        )
    }
    keys = set(held) | set(flagged)
    campaigns = {
        c.id: c for c in session.scalars(select(Campaign).where(Campaign.id.in_({c for c, _ in keys})))
    }
    stats = dict(flagged)
    missing = [k for k in held if k not in stats]
    for campaign, workers in _by_campaign(missing).items():
        for s in session.scalars(
            select(WorkerStats).where(WorkerStats.campaign_id == campaign, WorkerStats.worker_id.in_(workers))
        ):
            stats[(s.campaign_id, s.worker_id)] = s
    # Read once per campaign, not per row: the queue may hold hundreds of a campaign's workers.
    terms = {
        c: (stored_reward(x.spec), stored_policy(x.spec).accuracy_threshold) for c, x in campaigns.items()
    }
    rows = [
        _row(campaigns[c], terms[c], w, held.get((c, w), 0), stats.get((c, w)), (c, w) in flagged)
        for c, w in keys
    ]
    choices = sorted({(r.campaign_id, r.campaign_name) for r in rows}, key=lambda c: c[1])
    templates = sorted({r.template for r in rows})
    rows = [
        r
        for r in rows
        if (campaign_id is None or r.campaign_id == campaign_id)
        and (template is None or r.template == template)
        and (reason is None or r.reason == reason)
    ]
    rows.sort(key=_order)
    page = max(1, page)
    start = (page - 1) * per_page
    return QueuePage(rows[start : start + per_page], len(rows), page, per_page, choices, templates)


def _by_campaign(keys: list[tuple[int, str]]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for campaign, worker in keys:
        out.setdefault(campaign, []).append(worker)
    return out


def _row(
    campaign: Campaign,
    terms: tuple[Decimal, float],
    worker_id: str,
    held: int,
    stats: WorkerStats | None,
    flagged: bool,
) -> QueueRow:
    reward, threshold = terms
    return QueueRow(
        campaign_id=campaign.id,
        campaign_name=campaign.name,
        template=campaign.template,
        worker_id=worker_id,
        reason="flagged" if flagged else "held",
        flag_reason=stats.flag_reason if stats is not None else None,
        held=held,
        at_stake=reward * held,
        gold_correct=stats.gold_correct if stats is not None else 0,
        gold_total=stats.gold_total if stats is not None else 0,
        threshold=threshold,
    )
