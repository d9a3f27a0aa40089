"""Review-pipeline tasks. Each takes ids, is ``acks_late``, and is one unit of work.

Tasks are sent only after the transaction that produced their ids commits
(``call_after_commit``), so a worker never looks for a row that is not there.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

from celery import Celery, Task

from hits.db import call_after_commit, session_scope, utcnow
from hits.mturk import MarketplaceError
from hits.quality import followups, pipeline

log = logging.getLogger(__name__)
# A decision still pending after this long lost its message (or its worker): send it again.
_STALE = timedelta(seconds=20)


def runtime(task: Task) -> Any:
    return task.app.hitforge  # type: ignore[attr-defined]


def register(app: Celery) -> None:
    """Define the tasks on ``app``."""

    @app.task(name="hitforge.sync_submissions", bind=True, acks_late=True)
    def sync_submissions(self: Task) -> dict[str, int]:
        """Find HITs with new work and sync each in its own task; finish campaigns; mind deadlines."""
        rt = runtime(self)
        with session_scope(rt.sessions) as session:
            hit_types = pipeline.running_hit_types(session, rt.market.access_key_id)
        reviewable = {h["HITId"] for t in hit_types for h in rt.market.reviewable_hits(t)}
        with session_scope(rt.sessions) as session:
            targets = pipeline.hits_to_sync(session, rt.market.access_key_id, reviewable)
            for target in targets:
                call_after_commit(session, partial(sync_hit.delay, *target))
        counts = {"hits": len(targets)}
        with session_scope(rt.sessions) as session:
            counts["finished_campaigns"] = len(pipeline.finish_campaigns(session, rt.market.access_key_id))
        with session_scope(rt.sessions) as session:
            # Nothing waits past the marketplace's auto-approval: approve it ourselves first.
            due = followups.due_before_deadline(session, rt.market.access_key_id, utcnow())
            if due:
                call_after_commit(session, partial(apply_decisions.delay, due))
            counts["deadline_approvals"] = len(due)
        return counts

    @app.task(name="hitforge.sync_hit", bind=True, acks_late=True)
    def sync_hit(self: Task, campaign_id: int, published_id: int, mturk_hit_id: str) -> dict[str, int]:
        """Pull one HIT's Submitted assignments, grade gold, decide, and queue decisions."""
        rt = runtime(self)
        # Read the HIT first: if it is Reviewable with nothing pending, no
        # submission can arrive after the listing below, so closing is safe.
        hit = rt.market.get_hit(mturk_hit_id)
        assignments = pipeline.fetch_submitted(rt.market, mturk_hit_id)
        with session_scope(rt.sessions) as session:
            new_ids = pipeline.record_submissions(session, published_id, assignments)
            workers = {pipeline.grade(session, submission_id).worker_id for submission_id in new_ids}
            outbox: list[int] = []
            for worker_id in sorted(workers):
                outbox.extend(pipeline.decide_worker(session, campaign_id, worker_id))
            if hit["HITStatus"] in ("Reviewable", "Reviewing") and hit["NumberOfAssignmentsPending"] == 0:
                completed = hit["NumberOfAssignmentsCompleted"] + len(assignments)
                pipeline.close_finished_hits(session, {published_id: completed})
            pipeline.sync_done(session, published_id)
            if outbox:
                call_after_commit(session, partial(apply_decisions.delay, outbox))
        return {"submissions": len(new_ids), "decisions": len(outbox)}

    @app.task(
        name="hitforge.apply_decision",
        bind=True,
        acks_late=True,
        max_retries=8,
    )
    def apply_decision(self: Task, entry_id: int) -> str:
        """Apply one outbox decision through the API; back off on throttling and faults."""
        rt = runtime(self)
        try:
            return pipeline.apply_entry(rt.sessions, rt.market, entry_id)
        except MarketplaceError as exc:
            pipeline.record_failure(rt.sessions, entry_id, str(exc))
            if exc.retryable:
                raise self.retry(exc=exc, countdown=min(60, 2**self.request.retries)) from exc
            raise

    @app.task(
        name="hitforge.apply_decisions",
        bind=True,
        acks_late=True,
        max_retries=8,
    )
    def apply_decisions(self: Task, entry_ids: list[int]) -> list[str]:
        """Apply outbox decisions in order, one API call each; back off on throttling and faults.

        One message for a HIT's decisions instead of one each: the broker, not
        the API, is what limits a task per decision. On a retryable error the
        task is retried with the entries not yet applied; any other error is
        recorded on its entry and raised (the resend sweep tries it again later).
        """
        rt = runtime(self)
        outcomes = []
        for position, entry_id in enumerate(entry_ids):
            try:
                outcomes.append(pipeline.apply_entry(rt.sessions, rt.market, entry_id))
            except MarketplaceError as exc:
                pipeline.record_failure(rt.sessions, entry_id, str(exc))
                if exc.retryable:
                    countdown = min(60, 2**self.request.retries)
                    raise self.retry(args=[entry_ids[position:]], exc=exc, countdown=countdown) from exc
                raise
        return outcomes

    @app.task(name="hitforge.resend_pending", bind=True, acks_late=True)
    def resend_pending(self: Task) -> int:
        """Re-send decisions still pending a while after they were last sent (a lost message, a crash)."""
        rt = runtime(self)
        with session_scope(rt.sessions) as session:
            stale = pipeline.claim_stale_entries(session, rt.market.access_key_id, utcnow() - _STALE)
            if stale:
                call_after_commit(session, partial(apply_decisions.delay, stale))
        return len(stale)
