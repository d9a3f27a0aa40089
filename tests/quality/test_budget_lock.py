"""The budget guard on PostgreSQL: two batches queueing payments at once cannot overrun the budget."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from hits.campaigns.models import Campaign, OutboxEntry, WorkerStats
from hits.campaigns.spec import QualityPolicy
from hits.db import session_scope
from hits.money import mturk_fee
from hits.quality import followups
from tests.conftest import BACKEND
from tests.helpers import launch_demo_campaign

BONUS = {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9}


def test_two_concurrent_batches_with_room_for_one_bonus_queue_exactly_one(
    tmp_path, live_server, market, requester_sessions
) -> None:
    if BACKEND == "embedded":
        pytest.skip("PostgreSQL only: SQLite writers are serialised by BEGIN IMMEDIATE, so they cannot race")
    quality = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "bonus": BONUS}
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="budget-lock", quality=quality
    )
    bonus_cost = Decimal("0.05") + mturk_fee(Decimal("0.05"))
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        # Room for one bonus and a bit, not for two.
        campaign.budget = followups.committed_cost(session, campaign) + bonus_cost + Decimal("0.01")
    policy = QualityPolicy.model_validate(quality)
    first_queued, second_started, second_done = threading.Event(), threading.Event(), threading.Event()
    results: dict[str, int | None] = {}
    errors: list[BaseException] = []

    def bonus(worker_id: str) -> int | None:
        # What a sync batch does when it approves a worker with good gold.
        with session_scope(requester_sessions) as session:
            campaign = session.get(Campaign, campaign_id)
            assert campaign is not None
            stats = WorkerStats(campaign_id=campaign_id, worker_id=worker_id, gold_correct=3, gold_total=3)
            entry = followups.on_approved(session, campaign, policy, stats, f"A-{worker_id}")
            if worker_id == "W-FIRST":
                first_queued.set()
                # Not committed yet: give the other batch every chance to read past it.
                second_done.wait(timeout=2)
            return entry

    def run(worker_id: str, before: threading.Event | None, started: threading.Event | None) -> None:
        try:
            if before is not None:
                assert before.wait(timeout=30)
            if started is not None:
                started.set()
            results[worker_id] = bonus(worker_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
        finally:
            if worker_id == "W-SECOND":
                second_done.set()

    threads = [
        threading.Thread(target=run, args=("W-FIRST", None, None)),
        threading.Thread(target=run, args=("W-SECOND", first_queued, second_started)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert second_started.is_set()
    # The first batch queued its bonus; the second waited for it, saw it committed, and queued none.
    assert results["W-FIRST"] is not None and results["W-SECOND"] is None
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        queued = session.scalar(
            select(func.count())
            .select_from(OutboxEntry)
            .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "bonus")
        )
        assert queued == 1
        assert followups.committed_cost(session, campaign) <= campaign.budget
