"""A ``<crowd-bounding-box>`` gold row, graded by a real Celery worker: a box drawn a few pixels
off passes (boxes are compared by overlap), one far off fails, and each feeds its worker's record."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.batches.publish import publish_batch
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import Submission, WorkerStats
from tests.batches.test_batch_flow import hit_ids
from tests.batches.test_batch_gold import accept_and_post, make
from tests.server.worker_helpers import WorkerClient
from tests.workers.test_review_pipeline import wait_for, worker_env

pytestmark = pytest.mark.celery

LAYOUT = """<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<crowd-form>
  <crowd-bounding-box name="annotatedResult" src="${image_url}" header="Draw a box around each animal"
    labels="['cat', 'dog']"></crowd-bounding-box>
</crowd-form>
"""
CAT = {"label": "cat", "left": 100, "top": 50, "width": 80, "height": 60}
DOG = {"label": "dog", "left": 300, "top": 200, "width": 120, "height": 90}
GOLD = json.dumps([CAT, DOG]).replace('"', '""')  # CSV quoting
CSV = f'image_url,Gold.annotatedResult.boundingBoxes\nhttps://example.org/1.jpg,\nhttps://example.org/2.jpg,"{GOLD}"\n'
IMAGE = {"width": 640, "height": 480}


def task_answers(*boxes: dict[str, object]) -> dict[str, str]:
    """What crowd-form posts for the page: one ``taskAnswers`` field, a JSON array of one object."""
    value = {"annotatedResult": {"boundingBoxes": list(boxes), "inputImageProperties": IMAGE}}
    return {"taskAnswers": json.dumps([value])}


# Drawn in another order, each box a few pixels off (IoU about 0.8 each).
NEAR = task_answers({**DOG, "left": 306, "top": 196}, {**CAT, "left": 96, "width": 84, "top": 55})
# The cat's box slid by most of its width (IoU about 0.14): the dog alone does not pass the row.
FAR = task_answers({**CAT, "left": 160}, DOG)
PLAIN = task_answers(CAT)


def test_a_slightly_off_box_passes_gold_and_a_far_off_one_fails(
    tmp_path, settings, live_server, requester, market, requester_sessions
) -> None:
    batch_id = make(
        requester_sessions,
        tmp_path,
        csv=CSV,
        layout=LAYOUT,
        assignments=2,
        gold_field_tolerance={"annotatedResult": {"iou": 0.6}},
        quality={"min_gold": 5},  # judge nobody yet: this test is about the gold records
    )
    publish_batch(requester_sessions, market, batch_id)
    plain, gold = hit_ids(requester_sessions, batch_id)
    careful, sloppy = WorkerClient(live_server.url, "boxer"), WorkerClient(live_server.url, "slider")
    assignments = {}
    for who, answer in ((careful, NEAR), (sloppy, FAR)):
        accept_and_post(who, plain, PLAIN)
        assignments[who.worker_id] = accept_and_post(who, gold, answer)
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None
        campaign_id = batch.campaign_id

    def records() -> dict[str, tuple[int, int]]:
        with session_scope(requester_sessions) as session:
            stats = session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
            return {s.worker_id: (s.gold_correct, s.gold_total) for s in stats}

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        wait_for(lambda: {total for _, total in records().values()} == {1} and len(records()) == 2)
    finally:
        stop_process(process)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    assert records() == {careful.worker_id: (1, 1), sloppy.worker_id: (0, 1)}
    with session_scope(requester_sessions) as session:
        graded = {
            s.assignment_id: (s.gold_correct, s.gold_total)
            for s in session.scalars(
                select(Submission).where(Submission.assignment_id.in_(assignments.values()))
            )
        }
    assert graded == {assignments[careful.worker_id]: (1, 1), assignments[sloppy.worker_id]: (0, 1)}
