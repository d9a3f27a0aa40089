"""The budget guard on PostgreSQL: two batches queueing payments at once cannot overrun the budget."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import pytest
from sqlalchemy import func, select, text

from hits.db import session_scope
from hits.money import mturk_fee
from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality import followups
from hits.requester.tables.campaigns import Campaign, OutboxEntry, WorkerStats
from tests.conftest import BACKEND
from tests.helpers import launch_demo_campaign

BONUS = {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9}


def _waiting_on_a_lock(sessions, pid: int) -> bool:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        wait = session.scalar(
            text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
        )
    return wait == "Lock"


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
    first_queued, release, second_done = threading.Event(), threading.Event(), threading.Event()
    second_pid: list[int] = []
    results: dict[str, int | None] = {}
    errors: list[BaseException] = []

    def bonus(worker_id: str) -> int | None:
        # What a sync batch does when it approves a worker with good gold.
        with session_scope(requester_sessions) as session:
            if worker_id == "W-SECOND":
                second_pid.append(session.scalar(text("SELECT pg_backend_pid()")))
            campaign = session.get(Campaign, campaign_id)
            assert campaign is not None
            stats = WorkerStats(campaign_id=campaign_id, worker_id=worker_id, gold_correct=3, gold_total=3)
            entry = followups.on_approved(session, campaign, policy, stats, f"A-{worker_id}")
            if worker_id == "W-FIRST":
                first_queued.set()
                # Not committed yet: held until the other batch waits for it (or has read past it).
                assert release.wait(timeout=60)
            return entry

    def run(worker_id: str) -> None:
        try:
            if worker_id == "W-SECOND":
                assert first_queued.wait(timeout=60)
            results[worker_id] = bonus(worker_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            first_queued.set()
        finally:
            if worker_id == "W-SECOND":
                second_done.set()

    threads = [threading.Thread(target=run, args=(worker_id,)) for worker_id in ("W-FIRST", "W-SECOND")]
    for thread in threads:
        thread.start()
    waited = False
    try:
        assert first_queued.wait(timeout=60)
        # Keep the first batch open until the second is seen waiting on a lock, or has finished
        # without waiting (as it would without the lock): not a guess at how long it takes.
        deadline = time.monotonic() + 60
        while not second_done.is_set() and time.monotonic() < deadline:
            if second_pid and _waiting_on_a_lock(requester_sessions, second_pid[0]):
                waited = True
                break
            time.sleep(0.02)
    finally:
        release.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors
    # The first batch queued its bonus; the second waited for it, saw it committed, and queued none.
    assert results["W-FIRST"] is not None and results["W-SECOND"] is None
    assert waited, "the second batch was never seen waiting on a lock"
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
