"""The marketplace's clocks through the API: auto-approval pays, overdue work is abandoned."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal

from hits.db import session_scope, utcnow
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.models import Assignment, Worker
from hits.wire.documents import answers_to_xml
from tests.helpers import hit_params, in_own_session


def test_auto_approval_and_abandonment_happen_as_time_passes(mturk, market_sessions) -> None:
    hit_id = mturk.create_hit(**hit_params(AutoApprovalDelayInSeconds=0, Reward="0.50"))["HIT"]["HITId"]
    # Read the balance before any work exists: any API call may run the clocks, so reading it
    # after the submission could already include the auto-approval.
    before = Decimal(mturk.get_account_balance()["AvailableBalance"])
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"clock-{hit_id[:8]}", "a-long-password")
        other = create_worker(session, f"clock2-{hit_id[:8]}", "a-long-password")
        done = assignment_ops.accept(session, worker, hit_id)
        assignment_ops.submit(session, worker, done.id, answers_to_xml([("q", "a")]))
        late = assignment_ops.accept(session, other, hit_id)
        session.get(Assignment, late.id).deadline = utcnow() - timedelta(seconds=1)  # type: ignore[union-attr]
        done_id, late_id = done.id, late.id
    deadline = time.monotonic() + 60  # the clocks run at most every 5 s, later on a loaded machine
    status = ""
    while time.monotonic() < deadline:
        status = mturk.get_assignment(AssignmentId=done_id)["Assignment"]["AssignmentStatus"]
        if status == "Approved":
            break
        time.sleep(0.5)
    assert status == "Approved"
    after = Decimal(mturk.get_account_balance()["AvailableBalance"])
    assert before - after == Decimal("0.60")  # reward plus the 20% fee, charged once
    with session_scope(market_sessions) as session:
        assert session.get(Assignment, late_id).status == "Abandoned"  # type: ignore[union-attr]
    hit = mturk.get_hit(HITId=hit_id)["HIT"]
    assert hit["NumberOfAssignmentsAvailable"] == 1  # the abandoned slot is open again


def test_a_submission_committing_as_the_sweep_abandons_overdue_work_stands(mturk, market_sessions) -> None:
    """The sweep reads an assignment as overdue while its worker's submission is still committing.

    Before, the sweep read the row unlocked (Accepted, past its deadline), then
    wrote Abandoned over the Submitted that committed meanwhile (PostgreSQL): the
    worker's answers were dropped. Now it waits for the row and reads it again.
    """
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"inflight-{hit_id[:8]}", "a-long-password")
        assignment = assignment_ops.accept(session, worker, hit_id)
        assignment.deadline = utcnow() + timedelta(seconds=1)
        worker_id, assignment_id = worker.id, assignment.id
    holder = market_sessions()
    try:
        # The submission, in time, not yet committed when the deadline passes and the sweep runs.
        assignment_ops.submit(
            holder, holder.get(Worker, worker_id), assignment_id, answers_to_xml([("q", "kept")])
        )
        holder.flush()
        time.sleep(1.2)
        with ThreadPoolExecutor(1) as pool:
            sweep = pool.submit(in_own_session, market_sessions, assignment_ops.run_clocks)
            time.sleep(1.0)  # the sweep has read the row (and, before the fix, waits to write it)
            holder.commit()
            # Its own failure, if any, surfaces here. Not its count: the sweep runs over the whole
            # marketplace, where another test's overdue work may fall due at this very moment.
            sweep.result(timeout=60)
    finally:
        holder.close()
    with session_scope(market_sessions) as session:
        stored = session.get(Assignment, assignment_id)
        assert stored is not None and stored.status == "Submitted" and "kept" in (stored.answer or "")
