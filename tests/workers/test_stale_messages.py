"""A broker message naming a campaign its worker cannot read is dropped or left alone, not a traceback.

A broker can outlive or be shared beyond one database (a second instance, a restored backup, test
runs one after another): a worker must log such a message and go on.
"""

from __future__ import annotations

import re
import uuid

from sqlalchemy import select

from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.batches.publish import publish_batch
from hits.requester.mturk import Marketplace
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import PublishedHIT, Submission
from tests.batches.test_batch_gold import accept_and_post, make
from tests.conftest import new_requester
from tests.server.worker_helpers import WorkerClient
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


def _rows(requester_sessions, batch_id: int) -> list[tuple[int, int, str]]:  # type: ignore[no-untyped-def]
    """(campaign id, published HIT id, marketplace HIT id) of each of the batch's HITs: a sync target."""
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None
        rows = session.execute(
            select(BatchRow.published_hit_id, BatchRow.mturk_hit_id)
            .where(BatchRow.batch_id == batch_id)
            .order_by(BatchRow.position)
        ).all()
        return [(batch.campaign_id, int(p), str(h)) for p, h in rows]


def _synced(requester_sessions, assignment_id: str) -> bool:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return bool(
            session.scalar(select(Submission.synced).where(Submission.assignment_id == assignment_id))
        )


def test_a_sync_holding_another_requesters_hit_and_a_deleted_one_still_syncs_its_own(
    tmp_path, settings, live_server, requester, market, market_sessions, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    """One broker, two requesters' workers, and a HIT deleted on the marketplace: each HIT of a
    sync message is read with its own campaign's credentials or left alone, a deleted one is
    closed, and none fails the rest."""
    other = new_requester(market_sessions)
    other_market = Marketplace.connect(live_server.url, other.access_key_id, other.secret_access_key)
    batches = {}
    for who, on in (("mine", market), ("theirs", other_market)):
        (tmp_path / who).mkdir()
        batches[who] = make(requester_sessions, tmp_path / who)
        publish_batch(requester_sessions, on, batches[who])
    mine, theirs = (
        _rows(requester_sessions, batches["mine"])[0],
        _rows(requester_sessions, batches["theirs"])[0],
    )
    crowd = WorkerClient(live_server.url, "both")
    my_work = accept_and_post(crowd, mine[2], {"count": "3", "animal": "cat"})
    their_work = accept_and_post(crowd, theirs[2], {"count": "3", "animal": "cat"})
    with session_scope(requester_sessions) as session:
        # A HIT of my campaign that the marketplace no longer has (deleted by my own script).
        gone = PublishedHIT(
            campaign_id=mine[0], mturk_hit_id="3" + uuid.uuid4().hex[:29].upper(), status="open"
        )
        session.add(gone)
        session.flush()
        deleted = (mine[0], gone.id, str(gone.mturk_hit_id))

    log_path = tmp_path / "celery.log"
    create_celery_app(settings).send_task(
        "hitforge.sync_hits", args=[[[*theirs, None], [*deleted, None], [*mine, None]]]
    )
    worker = spawn_worker(worker_env(settings, requester), log_path, beat=False)  # only that message
    try:
        wait_for(
            lambda: (
                log_path.exists()
                and re.search(r"sync_hits\[[^]]+\] (succeeded|raised|retry)", log_path.read_text())
                is not None
            ),
            timeout=90,
        )
    finally:
        stop_process(worker)
    log = log_path.read_text()
    assert "Traceback" not in log, log[-3000:]
    assert f"HIT {theirs[2]} of campaign {theirs[0]} skipped: published with another access key" in log
    assert f"HIT {deleted[2]} of campaign {mine[0]} is gone from the marketplace" in log
    assert _synced(requester_sessions, my_work)  # mine, in the same message, is synced
    assert not _synced(requester_sessions, their_work)  # theirs is left for their worker
    with session_scope(requester_sessions) as session:
        # Deleted on the marketplace: closed, so its campaign can finish; theirs still open.
        assert session.get(PublishedHIT, deleted[1]).status == "complete"  # type: ignore[union-attr]
        assert session.get(PublishedHIT, theirs[1]).status == "open"  # type: ignore[union-attr]
