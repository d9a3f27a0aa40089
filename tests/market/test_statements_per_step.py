"""What a submission and an approval ask the database: each thing once, in as few statements as it takes.

Read twice, a row costs a round trip and its ORM work every time; on the
worker path (a crowd submitting all day) that was a fifth of the statements.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

import pytest
from sqlalchemy import update

from hits.db import session_scope
from hits.market import assignment_ops, decisions
from hits.market.accounts import create_worker
from hits.market.errors import RequestError
from hits.market.models import Assignment, Worker
from hits.wire.documents import answers_to_xml
from tests.helpers import hit_params, statements_sent


def statements_of(market_sessions) -> AbstractContextManager[list[str]]:  # type: ignore[no-untyped-def]
    """The statements sent on the marketplace's engine inside the block (but by its background threads)."""
    return statements_sent(market_sessions.kw["bind"])


def _reads(sent: list[str], table: str) -> list[str]:
    """Statements that read rows of ``table`` on their own (not joined to what was read with them)."""
    return [s for s in sent if s.startswith(f"SELECT {table}.") and "count(*)" not in s]


def _accepted(mturk, market_sessions, name: str, **params) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=1, **params))["HIT"]["HITId"]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"{name}-{hit_id[:8]}", "a-long-password")
        assignment = assignment_ops.accept(session, worker, hit_id)
        return worker.id, assignment.id


def test_a_submission_reads_its_hit_and_review_policies_with_the_assignment(mturk, market_sessions) -> None:
    worker_id, assignment_id = _accepted(mturk, market_sessions, "once")
    with session_scope(market_sessions) as session, statements_of(market_sessions) as sent:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        assignment_ops.submit(session, worker, assignment_id, answers_to_xml([("q", "a")]))
    # The HIT has no review policies: asked for in the assignment's query, never on their own
    # (the assignment's policy and then the HIT's, as it turned reviewable, each asked again).
    assert _reads(sent, "market_review_policies") == []
    assert _reads(sent, "market_hits") == []
    assert len(_reads(sent, "market_assignments")) == 1, sent
    with session_scope(market_sessions) as session:
        stored = session.get(Assignment, assignment_id)
        assert stored is not None and stored.status == "Submitted"
        assert stored.hit.status == "Reviewable"


def test_an_approval_without_a_requester_reads_the_hit_once(mturk, market_sessions) -> None:
    worker_id, assignment_id = _accepted(mturk, market_sessions, "approve")
    with session_scope(market_sessions) as session:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        assignment_ops.submit(session, worker, assignment_id, answers_to_xml([("q", "a")]))
    # As the clocks' auto-approval calls it: no requester to check the HIT against.
    with session_scope(market_sessions) as session, statements_of(market_sessions) as sent:
        approved = decisions.approve(session, None, assignment_id)
        assert approved.status == "Approved"
    # The HIT came with the assignment; paying the reward did not read it again.
    assert _reads(sent, "market_hits") == []
    assert len(_reads(sent, "market_assignments")) == 1, sent


def test_a_hit_with_a_known_answer_policy_still_has_it_applied(mturk, market_sessions) -> None:
    policy = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": "q", "Values": ["a"]}]},
            {"Key": "ApproveIfKnownAnswerScoreIsAtLeast", "Values": ["100"]},
        ],
    }
    worker_id, assignment_id = _accepted(mturk, market_sessions, "policy", AssignmentReviewPolicy=policy)
    with session_scope(market_sessions) as session:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        assignment_ops.submit(session, worker, assignment_id, answers_to_xml([("q", "a")]))
    assert mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]["AssignmentStatus"] == "Approved"


def test_a_decision_reads_the_assignment_again_even_when_its_session_already_holds_it(
    mturk, market_sessions
) -> None:
    """Fewer statements never at the price of a stale status: a decision's locked read is always fresh.

    The session read the assignment (Submitted) before another decision
    rejected it; approving then must see Rejected and refuse, not pay from the
    copy it holds.
    """
    worker_id, assignment_id = _accepted(mturk, market_sessions, "stale")
    with session_scope(market_sessions) as session:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        assignment_ops.submit(session, worker, assignment_id, answers_to_xml([("q", "a")]))
    with session_scope(market_sessions) as session:
        held = session.get(Assignment, assignment_id)
        assert held is not None and held.status == "Submitted"
        # Another decision's write, which this session's copy knows nothing of.
        session.connection().execute(
            update(Assignment.__table__)
            .where(Assignment.__table__.c.id == assignment_id)
            .values(status="Rejected")
        )
        with pytest.raises(RequestError, match="assignment is Rejected"):
            decisions.approve(session, None, assignment_id)
        assert held.status == "Rejected"
