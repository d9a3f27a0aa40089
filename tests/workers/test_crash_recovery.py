"""Kill the Celery worker while it applies decisions, restart it: everything ends decided exactly once."""

from __future__ import annotations

import os
import signal
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from hits.campaigns.models import Campaign, OutboxEntry
from hits.crowd import Profile
from hits.db import session_scope
from hits.market.models import LedgerEntry
from server.runner import spawn_worker, stop_process
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.workers.test_review_pipeline import wait_for, worker_env

pytestmark = pytest.mark.celery


def test_a_killed_worker_loses_nothing_and_pays_nothing_twice(
    tmp_path, settings, live_server, requester, market, requester_sessions, market_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=6,
        name="crash",
        quality={
            "accuracy_threshold": 0.6,
            "confidence": 0.75,
            "min_gold": 2,
            "bonus": {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9},
        },
    )
    balance_before = market.balance()
    good = campaign_bot(live_server.url, "crash-good", Profile("perfect", 1.0), truth, "crash")
    bad = campaign_bot(live_server.url, "crash-bad", Profile("always-off", 0.0), truth, "crash")
    assert good.run(max_hits=6).submitted == 6
    assert bad.run(max_hits=6).submitted == 6

    def done_count() -> int:
        with session_scope(requester_sessions) as session:
            return int(
                session.scalar(
                    select(func.count())
                    .select_from(OutboxEntry)
                    .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status == "done")
                )
                or 0
            )

    env = worker_env(settings, requester)
    first = spawn_worker(env, tmp_path / "celery-1.log")
    try:
        wait_for(lambda: done_count() >= 1, timeout=60)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # no warm shutdown: the pool dies mid-task
        first.wait(10)
    killed_at = done_count()
    second = spawn_worker(env, tmp_path / "celery-2.log")
    try:

        def finished() -> bool:
            with session_scope(requester_sessions) as session:
                campaign = session.get(Campaign, campaign_id)
                entries = session.scalars(
                    select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)
                ).all()
            # 12 decisions, the good worker's bonus, and each finished HIT set to Reviewing.
            actions = sorted(e.action for e in entries)
            wanted = ["approve"] * 6 + ["bonus"] + ["reject"] * 6 + ["reviewing"] * 6
            return (
                campaign is not None
                and campaign.status == "review"
                and actions == wanted
                and all(e.status == "done" for e in entries)
            )

        wait_for(finished, timeout=120)
    finally:
        stop_process(second)
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
    statuses = {
        e.target: market.get_assignment(e.target) for e in entries if e.action in ("approve", "reject")
    }
    marked = {e.payload["hit_id"] for e in entries if e.action == "reviewing"}
    assert {market.get_hit(h)["HITStatus"] for h in marked} == {"Reviewing"} and len(marked) == 6
    (bonus,) = [e for e in entries if e.action == "bonus"]
    by_worker: dict[str, list[str]] = {}
    for a in statuses.values():
        by_worker.setdefault(a["WorkerId"], []).append(a["AssignmentStatus"])
    assert sorted(by_worker[good.result.worker_id]) == ["Approved"] * 6
    assert sorted(by_worker[bad.result.worker_id]) == ["Rejected"] * 6
    assert len(statuses) == 12 and killed_at >= 1  # the kill came after decisions had started
    # 6 rewards and one bonus, each with its fee, exactly once.
    assert balance_before - market.balance() == Decimal("0.72") + Decimal("0.06")
    paid = market.client.list_bonus_payments(AssignmentId=bonus.payload["assignment_id"])["BonusPayments"]
    assert [p["WorkerId"] for p in paid] == [good.result.worker_id]
    with session_scope(market_sessions) as session:
        assert session.scalar(select(func.sum(LedgerEntry.amount))) == 0
        rewards = session.scalar(
            select(func.count())
            .select_from(LedgerEntry)
            .where(LedgerEntry.kind == "reward", LedgerEntry.account == f"worker:{good.result.worker_id}")
        )
    assert rewards == 6
