"""A full assignment lifecycle through a real Celery worker process and the real API."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from sqlalchemy import select

from demo.crowd import Profile
from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.quality.aggregation import aggregate_campaign
from hits.requester.tables.campaigns import Campaign, CampaignResult, OutboxEntry, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign

pytestmark = pytest.mark.celery


def worker_env(settings, requester) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_BROKER_URL": settings.broker_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_PUBLIC_URL": settings.public_url,
        "HITFORGE_MTURK_ENDPOINT_URL": settings.public_url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
        "HITFORGE_SYNC_INTERVAL": "0.5",
    }


def wait_for(predicate, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError("timed out waiting for the pipeline")


def test_assignments_are_graded_decided_and_applied_exactly_once(
    tmp_path, settings, live_server, requester, market, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=2,
        name="lifecycle",
        # Gold alone: two workers, each the other's only consensus under the worker model, so the
        # order of the syncs would decide approve or hold (see tests/deploy/test_stack.py).
        quality={"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "worker_model": False},
    )
    balance_before = market.balance()
    good = campaign_bot(live_server.url, "life-good", Profile("perfect", 1.0), truth, "lifecycle")
    bad = campaign_bot(live_server.url, "life-bad", Profile("always-off", 0.0), truth, "lifecycle")
    assert good.run(max_hits=2).submitted == 2
    assert bad.run(max_hits=2).submitted == 2

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:

        def finished() -> bool:
            with session_scope(requester_sessions) as session:
                entries = session.scalars(
                    select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)
                ).all()
                campaign = session.get(Campaign, campaign_id)
                # Four decisions, and each of the two finished HITs set to Reviewing.
                return (
                    campaign is not None
                    and campaign.status == "review"
                    and sorted(e.action for e in entries)
                    == ["approve"] * 2 + ["reject"] * 2 + ["reviewing"] * 2
                    and all(e.status == "done" for e in entries)
                    # The finished campaign's labels are aggregated and kept by a task of their own.
                    and session.get(CampaignResult, campaign_id) is not None
                )

        wait_for(finished)
    finally:
        stop_process(process)
    log = (tmp_path / "celery.log").read_text()
    assert "Traceback" not in log, log[-3000:]

    statuses: dict[str, list[str]] = {}
    with session_scope(requester_sessions) as session:
        hit_ids = [
            h for (h,) in session.execute(select(Campaign.hit_type_id).where(Campaign.id == campaign_id))
        ]
        assert hit_ids
        entries = session.scalars(
            select(OutboxEntry).where(
                OutboxEntry.campaign_id == campaign_id, OutboxEntry.action.in_(("approve", "reject"))
            )
        ).all()
        marks = session.scalars(
            select(OutboxEntry).where(
                OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "reviewing"
            )
        ).all()
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
    for entry in entries:
        assignment = market.get_assignment(entry.target)
        statuses.setdefault(assignment["WorkerId"], []).append(assignment["AssignmentStatus"])
    assert statuses[good.result.worker_id] == ["Approved", "Approved"]
    assert statuses[bad.result.worker_id] == ["Rejected", "Rejected"]
    assert len({e.target for e in entries}) == 4  # one decision per assignment
    # Finished HITs no longer come back from ListReviewableHITs: nothing left to page through.
    assert {market.get_hit(m.payload["hit_id"])["HITStatus"] for m in marks} == {"Reviewing"}
    assert not list(market.reviewable_hits(hit_ids[0]))
    assert stats[bad.result.worker_id].flagged and not stats[good.result.worker_id].flagged
    assert (stats[good.result.worker_id].approved, stats[bad.result.worker_id].rejected) == (2, 2)
    with session_scope(requester_sessions) as session:
        result = session.get(CampaignResult, campaign_id)
        assert result is not None
        # Only the approved worker's answers count: two assignments of two real items each.
        assert result.assignments == 2 and len(result.labels) == 4
        assert {r["item_id"]: r["label"] for r in result.labels} == {
            a.item_id: a.label for a in aggregate_campaign(session, campaign_id)
        }
        assert all(r["votes"] == 1 and r["confidence"] > 0 for r in result.labels)
    # Two approvals at $0.10 plus a 20% fee each; rejections cost nothing.
    assert balance_before - market.balance() == Decimal("0.24")
