"""Review-pipeline tasks. Each takes ids, is ``acks_late``, and is one unit of work.

Tasks are sent only after the transaction that produced their ids commits
(``call_after_commit``), so a worker never looks for a row that is not there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from celery import Celery, Task
from sqlalchemy.exc import OperationalError

from hits.db import call_after_commit, session_scope, utcnow
from hits.requester.mturk import MarketplaceError
from hits.requester.quality import aggregation, followups, outbox, pipeline, sync_queue, trust
from hits.requester.tables.campaigns import Campaign
from hits.requester.workflows.publish import run_step, running_workflows

log = logging.getLogger(__name__)
# A decision still pending after this long lost its message (or its worker): send it again.
_STALE = timedelta(seconds=20)
#: HITs synced in one task (one transaction): fewer round trips and commits, a worker judged once a batch.
SYNC_BATCH = 25


def _backoff(task: Task) -> int:
    """Seconds before the next try: doubling from 1, at most a minute."""
    return int(min(60, 2**task.request.retries))


def runtime(task: Task) -> Any:
    return task.app.hitforge  # type: ignore[attr-defined]


def relays_sender(app: Celery) -> Callable[[list[int]], object]:
    """Sends the task applying relays written for recruited participants (``recruit_tasks``)."""
    return lambda relay_ids: app.send_task("hitforge.apply_relays", args=[relay_ids])


def register(app: Celery) -> None:
    """Define the tasks on ``app``."""

    @app.task(name="hitforge.sync_submissions", bind=True, acks_late=True)
    def sync_submissions(self: Task) -> dict[str, int]:
        """Find HITs with new work and sync each in its own task; finish campaigns; mind deadlines."""
        rt = runtime(self)
        counts = {"hits": sync_queue.queue_syncs(rt.sessions, rt.market, sync_hits.delay, SYNC_BATCH)}
        with session_scope(rt.sessions) as session:
            finished = pipeline.finish_campaigns(session, rt.market.access_key_id)
            if finished.outbox:
                call_after_commit(session, partial(apply_decisions.delay, finished.outbox))
            for campaign_id in finished.campaigns:
                call_after_commit(session, partial(store_results.delay, campaign_id))
            counts["finished_campaigns"] = len(finished.campaigns)
            counts["decided_at_finish"] = len(finished.outbox)
        with session_scope(rt.sessions) as session:
            # Adaptive gold: HITs for trusted workers left when nothing else is open go to everyone.
            opened = trust.open_trusted_hits(session, rt.market.access_key_id)
            if opened:
                call_after_commit(session, partial(apply_decisions.delay, opened))
            counts["opened_to_all"] = len(opened)
        with session_scope(rt.sessions) as session:
            # Nothing waits past the marketplace's auto-approval: approve it ourselves first.
            due = followups.due_before_deadline(session, rt.market.access_key_id, utcnow())
            if due:
                call_after_commit(session, partial(apply_decisions.delay, due))
            counts["deadline_approvals"] = len(due)
        with session_scope(rt.sessions) as session:
            # Each running workflow takes a step: chains advance on the decisions just made.
            workflows = running_workflows(session, rt.market.access_key_id)
            # A step not started by the next few beats is dropped: a later beat sends a fresh one,
            # so a slow step never leaves a queue of copies behind it.
            expires = max(5.0, 3 * rt.settings.sync_interval_seconds)
            for workflow_id in workflows:
                call_after_commit(
                    session, partial(workflow_step.apply_async, args=[workflow_id], expires=expires)
                )
            counts["workflows"] = len(workflows)
        return counts

    @app.task(
        name="hitforge.workflow_step",
        bind=True,
        acks_late=True,
        autoretry_for=(OperationalError,),
        retry_backoff=True,
        max_retries=5,
    )
    def workflow_step(self: Task, workflow_id: int) -> dict[str, Any]:
        """Advance a workflow's chains, seed them, and publish new rounds' HITs (each exactly once)."""
        rt = runtime(self)
        report = run_step(rt.sessions, rt.market, workflow_id, rt.settings.public_url + "/tasks/hit")
        for error in report.errors:
            log.warning("workflow %s: %s", workflow_id, error)
        if report.outbox:
            apply_decisions.delay(report.outbox)  # committed already: run_step owns its transactions
        return {"seeded": report.seeded, "created": report.created, "published": report.published}

    @app.task(
        name="hitforge.sync_hits",
        bind=True,
        acks_late=True,
        # A deadlock or a dropped connection rolls the whole batch back: run it again.
        autoretry_for=(OperationalError,),
        retry_backoff=True,
        max_retries=5,
    )
    def sync_hits(self: Task, targets: list[list[Any]]) -> dict[str, int]:
        """Pull several HITs' assignments, grade gold, decide, and queue the decisions.

        Submitted work is reviewed; work the marketplace already approved or
        rejected is recorded with its decision (and graded as evidence).

        ``targets`` are (campaign id, published HIT id, marketplace HIT id),
        optionally followed by what ListReviewableHITs said of the HIT. The
        API calls come first, with no transaction open; then one transaction
        records, grades and decides the whole batch.
        """
        rt = runtime(self)
        known = {str(t[2]): t[3] for t in targets if len(t) > 3 and t[3]}
        with session_scope(rt.sessions) as session:
            own, foreign = sync_queue.own_targets(
                session, rt.market.access_key_id, [(int(t[0]), int(t[1]), str(t[2])) for t in targets]
            )
        for campaign_id, _, mturk_hit_id in foreign:
            log.warning(
                "HIT %s of campaign %s skipped: published with another access key (or not in this "
                "database); a worker holding its credentials syncs it",
                mturk_hit_id,
                campaign_id,
            )
        fetched = pipeline.fetch_hits(rt.market, own, known=known)
        with session_scope(rt.sessions) as session:
            outbox = pipeline.review_hits(session, fetched)
            if outbox:
                call_after_commit(session, partial(apply_decisions.delay, outbox))
        return {
            "hits": len(fetched),
            "skipped": len(foreign),
            "submissions": sum(len(f.assignments) for f in fetched),
            "decisions": len(outbox),
        }

    @app.task(name="hitforge.sync_hit", bind=True, acks_late=True)
    def sync_hit(self: Task, campaign_id: int, published_id: int, mturk_hit_id: str) -> dict[str, int]:
        """One HIT's sync (messages queued by earlier versions use this name)."""
        return sync_hits.run([[campaign_id, published_id, mturk_hit_id]])  # type: ignore[no-any-return]

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
            return outbox.apply_entry(rt.sessions, rt.market, entry_id, relays_sender(self.app))
        except MarketplaceError as exc:
            if exc.retryable:
                raise self.retry(exc=exc, countdown=_backoff(self)) from exc
            raise

    @app.task(
        name="hitforge.apply_decisions",
        bind=True,
        acks_late=True,
        max_retries=8,
    )
    def apply_decisions(self: Task, entry_ids: list[int]) -> dict[str, str]:
        """Apply outbox decisions, one API call each; back off on throttling and faults.

        One message for a batch's decisions instead of one each: the broker,
        not the API, is what limits a task per decision. Entries that failed
        on throttling or a fault are retried together later; any other error
        is recorded on its entry and raised once the rest are applied (the
        resend sweep tries it again later).
        """
        rt = runtime(self)
        report = outbox.apply_entries(rt.sessions, rt.market, entry_ids, send_relays=relays_sender(self.app))
        again = report.retryable()
        if again:
            raise self.retry(args=[again], exc=report.failures[again[0]], countdown=_backoff(self))
        if report.failures:
            raise next(iter(report.failures.values()))
        return {str(k): v for k, v in report.outcomes.items()}

    @app.task(name="hitforge.resend_pending", bind=True, acks_late=True)
    def resend_pending(self: Task) -> int:
        """Re-send decisions still pending a while after they were last sent (a lost message, a crash)."""
        rt = runtime(self)
        with session_scope(rt.sessions) as session:
            stale = outbox.claim_stale_entries(session, rt.market.access_key_id, utcnow() - _STALE)
            if stale:
                call_after_commit(session, partial(apply_decisions.delay, stale))
        return len(stale)

    @app.task(name="hitforge.store_results", bind=True, acks_late=True)
    def store_results(self: Task, campaign_id: int) -> dict[str, Any]:
        """Aggregate a campaign's labels and agreement and keep them (it finished, or was asked)."""
        rt = runtime(self)
        with session_scope(rt.sessions) as session:
            if session.get(Campaign, campaign_id) is None:
                # The message outlived its campaign's database (a broker shared by another
                # instance, or a test run): nothing to store, and no traceback to retry on.
                log.warning("store_results: campaign %s does not exist; message dropped", campaign_id)
                return {"dropped": f"campaign {campaign_id} does not exist"}
            row = aggregation.store_results(session, campaign_id)
            return {"items": len(row.labels), "agreement": row.agreement, "assignments": row.assignments}
