"""Decisions wait in a queue of their own, so they are applied while syncs are still queued.

Through the real broker of the run (the embedded one, or Redis): what the web
and the workers send lands in the queue ``hits.task_queues`` names, and a
real worker process drains the decisions' queue.
"""

from __future__ import annotations

from typing import Any

import pytest

from demo.runner import spawn_worker, stop_process
from hits.task_queues import DECISIONS_QUEUE, DEFAULT_QUEUE
from server.requester.metrics import _waiting
from server.task_queue import _producer
from tests.workers.test_review_pipeline import wait_for, worker_env
from workers import create_celery_app

pytestmark = pytest.mark.celery


def depths(app: Any) -> dict[str, int]:
    with app.connection_for_write() as connection:
        return {
            queue: _waiting(connection.default_channel, queue) for queue in (DEFAULT_QUEUE, DECISIONS_QUEUE)
        }


def test_a_decision_sent_behind_syncs_waits_in_its_own_queue_and_a_worker_takes_it(
    tmp_path, settings, requester
) -> None:  # type: ignore[no-untyped-def]
    web, workers = _producer(settings), create_celery_app(settings)
    before = depths(web)
    # A page of syncs queued at once, then the decisions of a batch, then one from a page of the web.
    for _ in range(5):
        workers.send_task("hitforge.sync_hits", args=[[]])
    workers.send_task("hitforge.apply_decisions", args=[[]])
    web.send_task("hitforge.apply_decisions", args=[[]])
    web.send_task("hitforge.apply_decision", args=[0])
    after = depths(web)
    assert after[DEFAULT_QUEUE] - before[DEFAULT_QUEUE] == 5
    assert after[DECISIONS_QUEUE] - before[DECISIONS_QUEUE] == 3
    worker = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log", concurrency=1, beat=False)
    try:
        wait_for(lambda: depths(web)[DECISIONS_QUEUE] == 0 and depths(web)[DEFAULT_QUEUE] == 0)
    finally:
        stop_process(worker)
