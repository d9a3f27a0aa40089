"""An outbox entry is applied by one task at a time: a copy of its message meanwhile calls nothing.

The resend sweep re-sends an entry still pending 20 s after it was sent; a
message that was only waiting behind long syncs then runs beside its copy.
Before claims were leased both called the marketplace (about 2.5% of decisions
in the review pipeline's benchmark were applied twice). Here two tasks get the
same entries at the same moment, with a marketplace slow enough that the
second claims while the first is still calling.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from hits.db import session_scope, utcnow
from hits.requester.quality import outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import OutboxEntry
from tests.helpers import launch_demo_campaign
from tests.quality.test_batched_review import CONFIDENT, _submit


class _SlowCounting:
    """The test's marketplace client: each decision takes a while, and every call is counted."""

    def __init__(self, market: Any) -> None:
        self.market, self.calls, self.lock = market, Counter[tuple[str, str]](), threading.Lock()
        self._real = market._call

    def __call__(self, name: str, **params: Any) -> dict[str, Any]:
        if name in ("approve_assignment", "reject_assignment"):
            with self.lock:
                self.calls[(name, params["AssignmentId"])] += 1
            time.sleep(0.3)
        return self._real(name, **params)  # type: ignore[no-any-return]


def _decisions(tmp_path, live_server, market, requester_sessions, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    _, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name=name, quality=CONFIDENT
    )
    _submit(live_server, truth, name, hits=2)
    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(requester_sessions) as session:
        entries = pipeline.review_hits(session, fetched)
        actions = dict(
            session.execute(
                select(OutboxEntry.id, OutboxEntry.action).where(OutboxEntry.id.in_(entries))
            ).all()
        )
    decisions = [e for e in entries if actions[e] in ("approve", "reject")]
    assert len(decisions) >= 4
    return decisions


def test_two_tasks_given_the_same_decisions_at_once_call_the_marketplace_once_each(
    tmp_path, live_server, market, requester_sessions, monkeypatch
) -> None:
    entries = _decisions(tmp_path, live_server, market, requester_sessions, "claims-1")
    counting = _SlowCounting(market)
    monkeypatch.setattr(market, "_call", counting)
    start = threading.Barrier(2)
    reports: list[outbox.ApplyReport] = []

    def task() -> None:
        start.wait()
        reports.append(outbox.apply_entries(requester_sessions, market, entries, threads=1))

    threads = [threading.Thread(target=task) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(reports) == 2 and not any(r.failures for r in reports)
    assert set(counting.calls.values()) == {1}, counting.calls
    assert len(counting.calls) == len(entries)
    # Each entry was applied by one task; the other skipped it, saying why.
    for entry_id in entries:
        outcomes = sorted(r.outcomes[entry_id] for r in reports)
        assert sum(not o.startswith("skipped") for o in outcomes) == 1, outcomes
    with session_scope(requester_sessions) as session:
        rows = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(entries))).all()
        assert {e.status for e in rows} == {"done"} and {e.attempts for e in rows} == {1}


def test_a_claim_left_by_a_task_that_died_is_taken_over_once_its_lease_has_passed(
    tmp_path, live_server, market, requester_sessions
) -> None:
    entry_id, *_ = _decisions(tmp_path, live_server, market, requester_sessions, "claims-2")
    # A task claimed it and died before recording anything.
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None
        entry.claimed_until = utcnow() + timedelta(minutes=4)
        entry.queued_at = utcnow() - timedelta(minutes=1)
    with session_scope(requester_sessions) as session:
        # Not re-sent while the lease holds, and a copy that arrives anyway calls nothing.
        assert entry_id not in outbox.claim_stale_entries(session, market.access_key_id, utcnow())
    assert outbox.apply_entry(requester_sessions, market, entry_id).startswith("skipped (being applied")
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None and entry.status == "pending"
        entry.claimed_until = utcnow() - timedelta(seconds=1)
    with session_scope(requester_sessions) as session:
        assert entry_id in outbox.claim_stale_entries(session, market.access_key_id, utcnow())
    assert outbox.apply_entry(requester_sessions, market, entry_id) in ("approve", "reject")
