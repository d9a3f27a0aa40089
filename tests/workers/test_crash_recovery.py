"""Kill the Celery worker while it applies decisions, restart it: everything ends decided exactly once."""

from __future__ import annotations

import os
import signal
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from demo.crowd import Profile
from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.market.models import LedgerEntry
from hits.requester.quality import pipeline, sync_queue
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.workers.test_review_pipeline import wait_for, worker_env
from workers.app import create_celery_app

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
            "worker_model": False,  # two workers: see tests/deploy/test_stack.py
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
        wait_for(lambda: done_count() >= 1, timeout=90)  # a worker starting on a loaded machine
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


def test_follow_ups_made_by_a_killed_attempt_are_recognised_on_redelivery(
    tmp_path, settings, live_server, requester, market, requester_sessions, market_sessions
) -> None:
    """The kill landed between a bonus's or re-post's call and its bookkeeping (deterministically).

    The batch is synced in the test; the calls the killed attempt made go
    through the facade with the entries' tokens; then the redelivered message
    reaches a real worker process, which records them as applied once.
    """
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=2,
        name="crash-follow",
        quality={
            "accuracy_threshold": 0.6,
            "confidence": 0.75,
            "min_gold": 2,
            "worker_model": False,  # two workers: see tests/deploy/test_stack.py
            "repost_rejected": True,
            "bonus": {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9},
        },
    )
    balance_before = market.balance()
    good = campaign_bot(live_server.url, "crash-f-good", Profile("perfect", 1.0), truth, "crash-follow")
    bad = campaign_bot(live_server.url, "crash-f-bad", Profile("always-off", 0.0), truth, "crash-follow")
    assert good.run(max_hits=2).submitted == 2
    assert bad.run(max_hits=2).submitted == 2
    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(requester_sessions) as session:
        ids = pipeline.review_hits(session, fetched)
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(ids))).all()
    (bonus,) = [e for e in entries if e.action == "bonus"]
    reposts = [e for e in entries if e.action == "repost"]
    assert len(reposts) == 2
    # What the killed attempt did before it died: paid the bonus, added the assignments.
    market.send_bonus(
        bonus.payload["worker_id"],
        bonus.payload["assignment_id"],
        Decimal(bonus.payload["amount"]),
        bonus.payload["reason"],
        unique_request_token=f"hitforge-bonus-{bonus.id}",
    )
    for repost in reposts:
        market.add_assignments(
            repost.payload["hit_id"], 1, unique_request_token=f"hitforge-repost-{repost.id}"
        )
    # acks_late: the message the dead worker held is delivered again.
    create_celery_app(settings).send_task("hitforge.apply_decisions", args=[ids])
    worker = spawn_worker(worker_env(settings, requester), tmp_path / "celery-follow.log")
    try:

        def all_done() -> bool:
            with session_scope(requester_sessions) as session:
                return all(
                    e.status == "done"
                    for e in session.scalars(
                        select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)
                    )
                )

        wait_for(all_done, timeout=60)
    finally:
        stop_process(worker)
    paid = market.client.list_bonus_payments(AssignmentId=bonus.payload["assignment_id"])["BonusPayments"]
    assert [p["WorkerId"] for p in paid] == [good.result.worker_id]
    for repost in reposts:
        assert market.get_hit(repost.payload["hit_id"])["MaxAssignments"] == 3  # added once
    # Two approved rewards and one bonus, each with its fee, exactly once.
    assert balance_before - market.balance() == Decimal("0.24") + Decimal("0.06")
    with session_scope(market_sessions) as session:
        assert session.scalar(select(func.sum(LedgerEntry.amount))) == 0
    with session_scope(requester_sessions) as session:
        # Re-opened: the re-posted work will be synced and reviewed.
        hits = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)).all()
        assert {h.status for h in hits} == {"open"}
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None and campaign.status == "running"
