"""The Celery app factory. Nothing connects or reads settings at import time."""

from __future__ import annotations

from dataclasses import dataclass

from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

from hits import task_queues
from hits.db import make_engine, make_session_factory
from hits.requester.mturk import Marketplace
from hits.settings import Settings, load_settings


@dataclass
class WorkerRuntime:
    """What tasks share in one worker process: settings, sessions, the marketplace."""

    settings: Settings
    sessions: sessionmaker[Session]
    _market: Marketplace | None = None

    @property
    def market(self) -> Marketplace:
        if self._market is None:
            self._market = Marketplace.from_settings(self.settings)
        return self._market


def create_celery_app(settings: Settings | None = None) -> Celery:
    """Build the Celery app for ``settings`` (default: from the environment)."""
    settings = settings or load_settings()
    app = Celery("hitforge", set_as_current=False)
    task_queues.configure(app.conf, settings)
    app.conf.update(
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_retry_on_startup=True,
        # A periodic task not started within its period is dropped (``expires``):
        # behind a long queue of syncs and decisions, beats would otherwise pile
        # up and each page through ListReviewableHITs, or re-send work that is
        # merely waiting its turn, once the queue reaches them.
        beat_schedule={
            "sync-submissions": {
                "task": "hitforge.sync_submissions",
                "schedule": settings.sync_interval_seconds,
                "options": {"expires": settings.sync_interval_seconds},
            },
            "resend-stuck-decisions": {
                "task": "hitforge.resend_pending",
                "schedule": 30.0,
                "options": {"expires": 30.0},
            },
            # Recruited places (docs/recruiting.md); a no-op without a Prolific token.
            "recruit-settle": {
                "task": "hitforge.recruit_settle",
                "schedule": 60.0,
                "options": {"expires": 60.0},
            },
        },
    )
    app.conf.beat_schedule_filename = str(settings.var_dir / "celerybeat-schedule")
    # One scheduler per schedule file, dying with the worker that embeds it (workers/beat.py).
    app.conf.beat_scheduler = "workers.beat:SingleScheduler"
    app.hitforge = WorkerRuntime(  # type: ignore[attr-defined]
        settings=settings, sessions=make_session_factory(make_engine(settings.database_url))
    )
    from workers import recruit_tasks, tasks

    tasks.register(app)
    recruit_tasks.register(app)
    return app
