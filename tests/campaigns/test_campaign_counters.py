"""The campaign counters equal a recount of the rows after a real run, and under concurrent deciders.

The counters (``hits.requester.tables.counters``) are kept by each commit from what
its flushes did; these tests compare them with :func:`counters.recount` (run in a
transaction that is rolled back), so a path that changed rows without being counted,
a savepoint's changes counted twice or kept after its rollback, or an upsert that
lost a race, shows as a difference.
"""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.campaigns import control
from hits.requester.quality import outbox, qa_review, staff_actions
from hits.requester.quality.pipeline import finish_campaigns
from hits.requester.tables import counters
from hits.requester.tables.campaigns import Campaign, Item, OutboxEntry, PublishedHIT, Submission
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review

STRICT = {
    "accuracy_threshold": 0.6,
    "confidence": 0.999,
    "min_gold": 2,
    "flagged_action": "reject",
    "flagged_worker": "soft_block",
}
TABLES = (
    counters.CampaignItemCount,
    counters.CampaignHITCount,
    counters.CampaignDecisionCount,
    counters.CampaignHourlySubmissions,
    counters.CampaignWorkerHeld,
)


def _snapshot(session: Any, campaign_id: int) -> list[list[tuple[Any, ...]]]:
    """Every counter row of the campaign with a count, per table."""
    return [
        sorted(
            tuple(row)
            for row in session.execute(
                select(table.__table__).where(table.campaign_id == campaign_id, table.n != 0)
            )
        )
        for table in TABLES
    ]


def kept_and_recounted(sessions: Any, campaign_id: int) -> tuple[list[Any], list[Any]]:
    """(the counters as kept, the counters recounted from the rows); the recount is rolled back."""
    with sessions() as session:
        kept = _snapshot(session, campaign_id)
        counters.recount(session, campaign_id)
        recounted = _snapshot(session, campaign_id)
        session.rollback()
    return kept, recounted


def _apply_pending(sessions: Any, market: Any, campaign_id: int) -> None:
    with session_scope(sessions) as session:
        ids = list(
            session.scalars(
                select(OutboxEntry.id)
                .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status == "pending")
                .order_by(OutboxEntry.id)
            )
        )
    report = outbox.apply_entries(sessions, market, ids)
    assert not report.failures, report.failures


def test_the_counters_equal_a_recount_after_grading_decisions_overrides_and_a_cancel(
    tmp_path, live_server, market, requester_sessions
) -> None:
    name = f"count-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path / "data",
        market,
        requester_sessions,
        live_server.url,
        hits=4,
        name=name,
        quality=STRICT,
        gold_per_hit=2,
        seed=3,
    )
    copycat = campaign_bot(live_server.url, f"{name}-c", PROFILES["copycat"], truth, name, seed=1)
    diligent = campaign_bot(live_server.url, f"{name}-d", PROFILES["diligent"], truth, name, seed=2)
    assert copycat.run(max_hits=3).submitted == 3
    assert diligent.run(max_hits=2).submitted == 2
    review(requester_sessions, market)  # grading and the automatic decisions, through the outbox
    kept, recounted = kept_and_recounted(requester_sessions, campaign_id)
    assert kept == recounted
    assert sum(n for _, _, n in kept[2]) == 5 and sum(n for _, _, n in kept[3]) == 5
    # The copycat's held work, kept per worker (what the review queue lists).
    assert [w for _, w, _ in kept[4]] == [copycat.result.worker_id]

    # A person decides the held work (one rejected, the rest approved), then overrides the rejection.
    with session_scope(requester_sessions) as session:
        staff = control.command_line_user(session)
        held = list(
            session.scalars(
                select(Submission.id)
                .where(Submission.decision == "held")
                .join(PublishedHIT)
                .where(PublishedHIT.campaign_id == campaign_id)
                .order_by(Submission.id)
            )
        )
        assert held, "the strict policy holds the copycat's work for a person"
        qa_review.decide_held(session, held[0], "reject", staff, "flat", feedback="Flat ratings.")
        for other in held[1:]:
            qa_review.decide_held(session, other, "approve", staff, "fine after all")
    _apply_pending(requester_sessions, market, campaign_id)
    with session_scope(requester_sessions) as session:
        rejected = session.get(Submission, held[0])
        assert rejected is not None and rejected.decision == "reject"
        staff_actions.override_rejection(session, rejected, staff, "second look")
    _apply_pending(requester_sessions, market, campaign_id)
    kept, recounted = kept_and_recounted(requester_sessions, campaign_id)
    assert kept == recounted
    assert sum(n for _, _, n in kept[2]) == 5 and (campaign_id, "reject", 1) not in kept[2]
    assert kept[4] == []  # all of it decided by a person: nobody's work waits any more

    # Cancelled with HITs still open: their state and the campaign's finish are counted too.
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        done = control.change_campaign(session, campaign, "cancel", staff, "enough")
    assert done.entry_ids
    _apply_pending(requester_sessions, market, campaign_id)
    with session_scope(requester_sessions) as session:
        finish_campaigns(session, market.access_key_id)
    kept, recounted = kept_and_recounted(requester_sessions, campaign_id)
    assert kept == recounted
    assert kept[0] == [(campaign_id, 8)] and sum(n for _, _, n in kept[1]) == 4


def _campaign_with_hits(sessions: Any, hits: int) -> tuple[int, list[int]]:
    with session_scope(sessions) as session:
        campaign = Campaign(
            name=f"cc-{uuid.uuid4().hex[:8]}", template="rating", spec={}, budget=Decimal("1")
        )
        session.add(campaign)
        session.flush()
        rows = [PublishedHIT(campaign_id=campaign.id, status="open") for _ in range(hits)]
        session.add_all(rows)
        session.add(Item(campaign_id=campaign.id, position=0, external_id="i0", payload={}))
        session.flush()
        return campaign.id, [h.id for h in rows]


def test_a_savepoint_rolled_back_is_not_counted_and_one_released_is(requester_sessions) -> None:
    campaign_id, (hit,) = _campaign_with_hits(requester_sessions, 1)
    when = datetime(2026, 12, 6, 10, 30, tzinfo=UTC)
    with session_scope(requester_sessions) as session:
        for n, kept in enumerate((True, False)):
            try:
                with session.begin_nested():
                    session.add(
                        Submission(
                            assignment_id=f"3SP{n}{uuid.uuid4().hex[:12]}",
                            published_hit_id=hit,
                            worker_id="ASAVEPOINT",
                            answers={},
                            submitted_at=when,
                        )
                    )
                    session.flush()
                    if not kept:
                        raise RuntimeError("roll this savepoint back")
            except RuntimeError:
                pass
    with session_scope(requester_sessions) as session:
        assert counters.decision_counts(session, campaign_id) == {None: 1}
        assert counters.hourly_counts(session, campaign_id, when - timedelta(days=1), when) == {
            when.replace(minute=0): 1
        }
    # A whole transaction rolled back counts nothing.
    with requester_sessions() as session:
        session.add(
            Submission(
                assignment_id=f"3RB{uuid.uuid4().hex[:12]}",
                published_hit_id=hit,
                worker_id="AROLLBACK",
                answers={},
                submitted_at=when,
            )
        )
        session.flush()
        session.rollback()
    kept, recounted = kept_and_recounted(requester_sessions, campaign_id)
    assert kept == recounted and kept[2] == [(campaign_id, "", 1)]


def test_concurrent_deciders_of_one_campaign_keep_the_counters_exact(requester_sessions) -> None:
    """Several threads add, decide and re-decide one campaign's assignments at once, some under
    the campaign's budget lock (as a decision with a payment takes it): no update is lost and no
    transaction deadlocks (each retries nothing; any error fails the test)."""
    threads, rounds = 6, 5
    campaign_id, hit_ids = _campaign_with_hits(requester_sessions, threads)
    now = datetime.now(UTC)
    start = threading.Barrier(threads)
    errors: list[BaseException] = []

    def decider(k: int) -> None:
        try:
            start.wait(timeout=60)
            for r in range(rounds):
                with session_scope(requester_sessions) as session:
                    # Each round: two new submissions (an hour of their own and the current one), and
                    # this thread's earlier ones moved on to another decision.
                    for j, hours_ago in enumerate((0, k % 3 + 1)):
                        session.add(
                            Submission(
                                assignment_id=f"3CC{k}{r}{j}{uuid.uuid4().hex[:10]}",
                                published_hit_id=hit_ids[(k + j) % threads],
                                worker_id=f"AW{k}",
                                answers={},
                                submitted_at=now - timedelta(hours=hours_ago),
                            )
                        )
                    mine = session.scalars(select(Submission).where(Submission.worker_id == f"AW{k}"))
                    for submission in mine:
                        submission.decision = ("approve", "reject", "held", None)[(r + submission.id) % 4]
                    session.get(PublishedHIT, hit_ids[k]).status = ("open", "reviewable")[r % 2]  # type: ignore[union-attr]
                    if k % 2:
                        # The budget guard's lock, taken before the commit adds to the counters.
                        session.scalar(
                            select(Campaign.budget)
                            .where(Campaign.id == campaign_id)
                            .with_for_update(key_share=True)
                        )
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    workers = [threading.Thread(target=decider, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
    assert not errors, errors
    kept, recounted = kept_and_recounted(requester_sessions, campaign_id)
    assert kept == recounted
    assert sum(n for _, _, n in kept[2]) == threads * rounds * 2
    assert sum(n for _, _, n in kept[1]) == threads
