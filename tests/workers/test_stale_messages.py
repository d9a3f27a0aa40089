"""A broker message naming a campaign its worker's database does not hold is dropped, not a traceback.

A broker can outlive or be shared beyond one database (a second instance, a restored backup, test
runs one after another): a worker must log such a message and go on.
"""

from __future__ import annotations

from server.runner import spawn_worker, stop_process
from tests.workers.test_review_pipeline import wait_for, worker_env
from workers.app import create_celery_app


def test_store_results_for_a_campaign_that_does_not_exist_is_dropped_with_a_warning(
    tmp_path, settings, requester
) -> None:  # type: ignore[no-untyped-def]
    log_path = tmp_path / "celery.log"
    create_celery_app(settings).send_task("hitforge.store_results", args=[987_654_321])
    worker = spawn_worker(worker_env(settings, requester), log_path)
    try:
        # Either outcome ends the wait: the warning (fixed) or the task's traceback (before).
        wait_for(lambda: log_path.exists() and "987654321" in log_path.read_text(), timeout=90)
    finally:
        stop_process(worker)
    log = log_path.read_text()
    assert "campaign 987654321 does not exist; message dropped" in log
    assert "Traceback" not in log, log[-3000:]
