"""The recruiting task: settle every study's places (poll, decide, apply once), on the beat.

Only when a Prolific token is set: without one nothing recruits, and the
task does nothing at all.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, Task

from hits.db import session_scope
from hits.requester.campaigns.recruitment import recruiting_campaigns, settle_places
from hits.requester.recruit.base import RecruitError
from hits.requester.recruit.prolific.client import ProlificClient

log = logging.getLogger(__name__)
#: Seconds between two settlings: Prolific is polled, every page of every study, this often.
INTERVAL = 60.0


def settle_all(rt: Any) -> dict[str, int]:
    """Settle the places of every recruiting campaign; counts by what happened."""
    counts = {"campaigns": 0, "applied": 0, "failed": 0}
    if not rt.settings.prolific_token:
        return counts
    recruiter = ProlificClient.from_settings(rt.settings)
    with session_scope(rt.sessions) as session:
        campaign_ids = recruiting_campaigns(session)
    for campaign_id in campaign_ids:
        try:
            report = settle_places(rt.sessions, recruiter, campaign_id)
        except RecruitError as exc:
            # One study's trouble does not hold up the others; the next beat tries again.
            log.warning("recruit: campaign %s not settled: %s", campaign_id, exc)
            counts["failed"] += 1
            continue
        counts["campaigns"] += 1
        counts["applied"] += len(report.applied)
        counts["failed"] += len(report.failed)
    return counts


def register(app: Celery) -> None:
    """Define the recruiting task on ``app``."""

    @app.task(name="hitforge.recruit_settle", bind=True, acks_late=True)
    def recruit_settle(self: Task) -> dict[str, int]:
        """Poll every study's places, decide the finished ones, apply each decision once."""
        return settle_all(self.app.hitforge)  # type: ignore[attr-defined]
