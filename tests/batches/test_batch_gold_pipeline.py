"""A batch's gold rows feed the review pipeline, run by a real Celery worker process:
worker records, approve / reject / bonus / flag through the outbox, the dashboard's QA list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select

from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.batches.publish import publish_batch
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import OutboxEntry, WorkerStats
from tests.batches.test_batch_flow import hit_ids
from tests.batches.test_batch_gold import accept_and_post, make
from tests.server.test_dashboard_roles import Dashboard, make_user
from tests.server.worker_helpers import WorkerClient
from tests.workers.test_review_pipeline import wait_for, worker_env

pytestmark = pytest.mark.celery

# Rows 2 and 4 are gold: 3 cats (a number within 0.5 counts), then "Two  Dogs" (text compared
# with whitespace and case normalised).
CSV = (
    "image_url,alt,Gold.count,Gold.animal\n"
    "https://example.org/1.jpg,A field,,\n"
    "https://example.org/2.jpg,A yard,3,cat\n"
    "https://example.org/3.jpg,A road,,\n"
    "https://example.org/4.jpg,A park,2,two dogs\n"
)
RIGHT = [
    {"count": "5", "animal": "cow"},
    {"count": "3.4", "animal": "Cat"},
    {"count": "1", "animal": "horse"},
    {"count": "2", "animal": " Two  Dogs"},
]
WRONG = [{"count": "7", "animal": "cat"}] * 4


def gold_batch(market, requester_sessions, tmp_path: Path, **settings: object) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    """A published batch of the four rows (two gold), two assignments each; its id and HITs.

    ``settings`` override the batch's (a budget, another quality section).
    """
    batch_id = make(
        requester_sessions,
        tmp_path,
        csv=CSV,
        **{
            "assignments": 2,
            "gold_tolerance": 0.5,
            "gold_normalise_text": True,
            "quality": {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2},
            **settings,
        },
    )
    publish_batch(requester_sessions, market, batch_id)
    return batch_id, hit_ids(requester_sessions, batch_id)


def test_gold_rows_grade_workers_who_are_approved_bonused_rejected_and_flagged(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    batch_id, hits = gold_batch(
        market,
        requester_sessions,
        tmp_path,
        budget="5.00",  # room above the rewards for the bonus
        quality={
            "accuracy_threshold": 0.6,
            "confidence": 0.75,
            "min_gold": 2,
            "bonus": {"amount": "0.05", "min_gold_accuracy": 0.9, "min_gold": 2},
        },
    )
    good, bad = WorkerClient(live_server.url, "careful"), WorkerClient(live_server.url, "sloppy")
    done = {
        (who.worker_id, hit): accept_and_post(who, hit, answers[i])
        for who, answers in ((good, RIGHT), (bad, WRONG))
        for i, hit in enumerate(hits)
    }
    with session_scope(requester_sessions) as session:
        batch = session.get(Batch, batch_id)
        assert batch is not None
        campaign_id = batch.campaign_id

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:

        def decided() -> bool:
            with session_scope(requester_sessions) as session:
                entries = session.scalars(
                    select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)
                ).all()
                actions = sorted(e.action for e in entries if e.action != "reviewing")
                return actions == ["approve"] * 4 + ["bonus"] + ["reject"] * 4 and all(
                    e.status == "done" for e in entries
                )

        wait_for(decided)
    finally:
        stop_process(process)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]

    status = {
        key: mturk.get_assignment(AssignmentId=a)["Assignment"]["AssignmentStatus"] for key, a in done.items()
    }
    assert {s for (w, _), s in status.items() if w == good.worker_id} == {"Approved"}
    assert {s for (w, _), s in status.items() if w == bad.worker_id} == {"Rejected"}
    bonuses = [b for key, a in done.items() if key[0] == good.worker_id for b in market.bonus_payments(a)]
    assert [(b["WorkerId"], b["BonusAmount"]) for b in bonuses] == [(good.worker_id, "0.05")]
    with session_scope(requester_sessions) as session:
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
    # Each saw both gold rows; the careful one got them right within the tolerance and normalising.
    assert (stats[good.worker_id].gold_correct, stats[good.worker_id].gold_total) == (2, 2)
    assert (stats[bad.worker_id].gold_correct, stats[bad.worker_id].gold_total) == (0, 2)
    assert stats[bad.worker_id].flagged and not stats[good.worker_id].flagged
    # The flagged worker is on the QA staff's list, linked to the evidence page.
    dash = Dashboard(live_server.url, make_user(requester_sessions, "requester", requester.access_key_id))
    assert f"/dashboard/workers/{campaign_id}/{bad.worker_id}" in dash.home()
    evidence = dash.get(f"/dashboard/workers/{campaign_id}/{bad.worker_id}")
    # The worker model's reason ("... gold 0/2: ..."), or gold alone's ("gold accuracy 0/2 ...").
    assert evidence.status_code == 200 and re.search(r"gold (accuracy )?0/2", evidence.text)
