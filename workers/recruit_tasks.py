"""The recruiting tasks: settle every study's places (poll, decide, apply once), on the beat; apply
relays as soon as the outbox hands them over.

Only when a Prolific token is set: without one nothing recruits, and the
tasks do nothing at all. ``hitforge.apply_relays`` is sent by the outbox's
tasks once the transaction that wrote the relays commits; the beat's
``recruit_settle`` applies any it missed (a lost message, a worker down).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Celery, Task

from hits.db import session_scope
from hits.requester.campaigns.recruitment import recruiting_campaigns, settle_places
from hits.requester.recruit.base import RecruitError
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.relay import apply_relays

log = logging.getLogger(__name__)
#: Seconds between two settlings: Prolific is polled, every page of every study, this often.
INTERVAL = 60.0


def settle_all(rt: Any, outbox_sender: Callable[[list[int]], object] | None = None) -> dict[str, int]:
    """Settle the places of every recruiting campaign; counts by what happened.

    ``outbox_sender`` sends the task applying the ``mirror`` entries settling queues.
    """
    counts = {"campaigns": 0, "applied": 0, "failed": 0}
    if not rt.settings.prolific_token:
        return counts
    recruiter = ProlificClient.from_settings(rt.settings)
    with session_scope(rt.sessions) as session:
        campaign_ids = recruiting_campaigns(session)
    for campaign_id in campaign_ids:
        try:
            report = settle_places(rt.sessions, recruiter, campaign_id, send_outbox=outbox_sender)
        except RecruitError as exc:
            # One study's trouble does not hold up the others; the next beat tries again.
            log.warning("recruit: campaign %s not settled: %s", campaign_id, exc)
            counts["failed"] += 1
            continue
        counts["campaigns"] += 1
        counts["applied"] += len(report.applied)
        counts["failed"] += len(report.failed)
    return counts


def apply_some(rt: Any, relay_ids: list[int]) -> dict[str, list[int]]:
    """Apply the given relays now (those already applied or taken are skipped); ids by what happened."""
    if not rt.settings.prolific_token:
        return {"applied": [], "failed": [], "held": []}
    report = apply_relays(rt.sessions, ProlificClient.from_settings(rt.settings), relay_ids=relay_ids)
    return {
        "applied": sorted(report.outcomes),
        "failed": sorted(i for i, e in report.failures.items() if e.retryable),
        "held": sorted(report.held),
    }


def register(app: Celery) -> None:
    """Define the recruiting task on ``app``."""

    @app.task(name="hitforge.recruit_settle", bind=True, acks_late=True)
    def recruit_settle(self: Task) -> dict[str, int]:
        """Poll every study's places, decide the finished ones, apply each decision once."""
        app = self.app
        return settle_all(
            app.hitforge,  # type: ignore[attr-defined]
            lambda ids: app.send_task("hitforge.apply_decisions", args=[ids]),
        )

    @app.task(name="hitforge.apply_relays", bind=True, acks_late=True, max_retries=5)
    def apply_relays_now(self: Task, relay_ids: list[int]) -> dict[str, list[int]]:
        """Apply relays just handed over; those that failed on throttling or a fault are tried again soon."""
        done = apply_some(self.app.hitforge, relay_ids)  # type: ignore[attr-defined]
        if done["failed"]:
            raise self.retry(args=[done["failed"]], countdown=int(min(60, 2 ** (self.request.retries + 1))))
        return done
