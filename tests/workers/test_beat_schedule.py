"""Periodic tasks do not pile up behind a long queue."""

from __future__ import annotations

from workers.app import create_celery_app


def test_every_periodic_task_expires_within_its_period(settings) -> None:  # type: ignore[no-untyped-def]
    app = create_celery_app(settings)
    schedule = app.conf.beat_schedule
    assert {"sync-submissions", "resend-stuck-decisions"} <= set(schedule)
    for name, entry in schedule.items():
        expires = entry.get("options", {}).get("expires")
        assert expires is not None and 0 < expires <= float(entry["schedule"]), name
    assert schedule["sync-submissions"]["schedule"] == settings.sync_interval_seconds
