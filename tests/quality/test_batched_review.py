"""The review pipeline in batches: several HITs in one transaction, decisions applied several at a time."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope
from hits.market.requester_options import set_options
from hits.requester.mturk import Marketplace, ServiceUnavailable
from hits.requester.quality import outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT, Submission, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign

CONFIDENT = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2}


def _submit(live_server, truth, name: str, hits: int) -> list[str]:  # type: ignore[no-untyped-def]
    workers = []
    for username, profile in (
        (f"{name}-good", Profile("perfect", 1.0)),
        (f"{name}-bad", Profile("always-off", 0.0)),
    ):  # the demo campaign's HITs take two assignments each
        bot = campaign_bot(live_server.url, username, profile, truth, name)
        assert bot.run(max_hits=hits).submitted == hits
        workers.append(bot.result.worker_id)
    return workers


def _own_submissions(session, campaign_id: int) -> list[Submission]:  # type: ignore[no-untyped-def]
    # The requester database is shared by the session's tests: keep to this campaign.
    query = (
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id)
    )
    return list(session.scalars(query))


def _own_stats(session, campaign_id: int) -> dict[str, WorkerStats]:  # type: ignore[no-untyped-def]
    return {
        s.worker_id: s
        for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
    }


def test_a_batch_of_hits_is_graded_and_decided_in_one_transaction(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name="batch-1", quality=CONFIDENT
    )
    good, bad = _submit(live_server, truth, "batch-1", hits=3)
    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    assert len(targets) == 3
    # What ListReviewableHITs said of a HIT stands in for GetHIT; the others are read.
    listed = {h["HITId"]: pipeline.hit_snapshot(h) for h in mturk.list_hits()["HITs"]}
    known = {targets[0][2]: listed[targets[0][2]]}
    fetched = pipeline.fetch_hits(market, targets, known=known)
    assert sorted(len(f.assignments) for f in fetched) == [2, 2, 2]
    by_id = {f.hit["HITId"]: f.hit for f in fetched}
    assert by_id[targets[0][2]] is known[targets[0][2]]
    assert all(by_id[h] == listed[h] for h in by_id)
    with session_scope(requester_sessions) as session:
        entries = pipeline.review_hits(session, fetched)
    # Syncing the same HITs again records, grades and decides nothing more.
    with session_scope(requester_sessions) as session:
        assert pipeline.review_hits(session, pipeline.fetch_hits(market, targets)) == []
    with session_scope(requester_sessions) as session:
        submissions = _own_submissions(session, campaign_id)
        assert len(submissions) == 6 and all(s.graded and s.synced for s in submissions)
        stats = _own_stats(session, campaign_id)
        for worker, record in stats.items():
            own = [s for s in submissions if s.worker_id == worker]
            assert record.assignments == len(own) == 3
            assert record.gold_total == sum(s.gold_total for s in own) == 3
            assert record.gold_correct == sum(s.gold_correct for s in own)
        assert stats[good].gold_correct == 3 and stats[bad].gold_correct == 0 and stats[bad].flagged
        decided = Counter((s.worker_id, s.decision) for s in submissions)
        assert decided[(good, "approve")] == 3 and decided[(bad, "reject")] == 3
        queued = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(entries))).all()
        assert sorted(e.target for e in queued if e.action in ("approve", "reject")) == sorted(
            s.assignment_id for s in submissions if s.decision in ("approve", "reject")
        )
        # Every HIT's work is in: each is closed, and queued once to be set to Reviewing.
        marks = sorted(e.payload["hit_id"] for e in queued if e.action == "reviewing")
        assert marks == sorted(t[2] for t in targets)
        hit_rows = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)).all()
        assert {p.status for p in hit_rows} == {"complete"}
        assert all(p.sync_queued_at is None for p in hit_rows)


def test_decisions_are_applied_several_at_a_time_and_throttled_ones_on_the_retry(
    tmp_path, live_server, market, mturk, requester, requester_sessions, market_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name="batch-2", quality=CONFIDENT
    )
    workers = _submit(live_server, truth, "batch-2", hits=3)
    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(requester_sessions) as session:
        entries = pipeline.review_hits(session, fetched)
    decisions = len(entries)
    assert decisions >= 6
    # A marketplace that lets about one call a second through: most of a burst is throttled.
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id, throttle_rate=1.0)
    first = outbox.apply_entries(requester_sessions, market, entries, threads=4)
    again = first.retryable()
    assert again and len(first.outcomes) + len(again) == decisions
    assert set(first.failures) == set(again)
    with session_scope(requester_sessions) as session:
        rows = {e.id: e for e in session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(entries)))}
        assert {i for i, e in rows.items() if e.status == "done"} == set(first.outcomes)
        assert all("Rate exceeded" in (rows[i].last_error or "") for i in again)
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id)
    second = outbox.apply_entries(requester_sessions, market, again)
    assert not second.failures and set(second.outcomes) == set(again)
    # Everything is applied once: a redelivered message skips it all.
    replay = outbox.apply_entries(requester_sessions, market, entries)
    assert set(replay.outcomes.values()) == {"skipped"}
    with session_scope(requester_sessions) as session:
        submissions = _own_submissions(session, campaign_id)
        stats = _own_stats(session, campaign_id)
        for worker in workers:
            own = [s for s in submissions if s.worker_id == worker]
            assert stats[worker].approved == sum(s.decision == "approve" for s in own)
            assert stats[worker].rejected == sum(s.decision == "reject" for s in own)
        applied = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(entries))).all()
        assert all(e.status == "done" and e.attempts >= 1 for e in applied)
    states = Counter(
        a["AssignmentStatus"]
        for f in fetched
        for a in mturk.list_assignments_for_hit(HITId=f.hit["HITId"])["Assignments"]
    )
    with session_scope(requester_sessions) as session:
        wanted = Counter(s.decision for s in _own_submissions(session, campaign_id))
    assert states["Approved"] == wanted["approve"] and states["Rejected"] == wanted["reject"]


def test_an_unreachable_marketplace_is_a_retryable_error() -> None:
    from demo.runner import free_port

    market = Marketplace.connect(f"http://127.0.0.1:{free_port()}", "AKIDNOTHINGHERE0", "secret")
    with pytest.raises(ServiceUnavailable) as raised:
        market.get_hit("3HITDOESNOTMATTER")
    assert raised.value.retryable and raised.value.code == "Unreachable"
