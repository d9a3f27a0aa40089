"""Notification events reach an HTTP receiver after each change, in order, even if it was down."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from sqlalchemy import select

from demo.runner import free_port
from hits.db import session_scope
from hits.market import assignment_ops, events
from hits.market.accounts import create_worker
from hits.market.models import Assignment, MarketEvent
from hits.wire.documents import answers_to_xml
from tests.helpers import hit_params

# The receivers here listen on loopback: the operator has allowed private destinations, for the
# API calls (hook_server) and for events committed through the tests' own sessions.
pytestmark = pytest.mark.usefixtures("private_hooks_for_direct_calls")


@pytest.fixture
def mturk(hook_mturk):  # type: ignore[no-untyped-def]
    return hook_mturk


class Receiver:
    """A real HTTP endpoint that records the event documents POSTed to it."""

    def __init__(self, port: int, refuse_first: int = 0) -> None:
        self.port = port
        self.documents: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        received, refused = self.documents, self.refused

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if len(refused) < refuse_first:
                    refused.append(body)
                    self.send_response(503)  # a receiver having a bad moment
                else:
                    received.append(body)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def events(self) -> list[tuple[str, str | None]]:
        return [(d["Events"][0]["EventType"], d["Events"][0].get("AssignmentId")) for d in self.documents]


def wait_until(predicate, timeout: float = 60.0, every: float = 0.1) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(every)
    raise AssertionError("events did not arrive")


def _event_row(market_sessions, hit_id: str, event_type: str) -> MarketEvent:  # type: ignore[no-untyped-def]
    """The stored ``event_type`` event of ``hit_id`` (other tests' events share the table)."""
    with session_scope(market_sessions) as session:
        rows = session.scalars(select(MarketEvent).where(MarketEvent.event_type == event_type))
        (mine,) = [r for r in rows if r.document["Events"][0]["HITId"] == hit_id]
        return mine


def _subscribe(mturk, hit_type: str, port: int, events: list[str]) -> None:  # type: ignore[no-untyped-def]
    """An active notification setting for ``hit_type``: ``events`` posted to a hook on ``port``."""
    mturk.update_notification_settings(
        HITTypeId=hit_type,
        Notification={
            "Destination": f"http://127.0.0.1:{port}/hook",
            "Transport": "Email",
            "Version": "2006-05-05",
            "EventTypes": events,
        },
        Active=True,
    )


def _setup(mturk, port: int, events: list[str], max_assignments: int = 1, **extra: Any) -> str:  # type: ignore[no-untyped-def]
    params = hit_params(MaxAssignments=max_assignments)
    hit_type = mturk.create_hit_type(
        Title=params["Title"],
        Description=params["Description"],
        Reward=params["Reward"],
        AssignmentDurationInSeconds=600,
        AutoApprovalDelayInSeconds=3600,
    )["HITTypeId"]
    _subscribe(mturk, hit_type, port, events)
    return str(
        mturk.create_hit_with_hit_type(
            HITTypeId=hit_type,
            MaxAssignments=max_assignments,
            LifetimeInSeconds=3600,
            Question=params["Question"],
            **extra,
        )["HIT"]["HITId"]
    )


def _work(market_sessions, hit_id: str, name: str) -> str:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, name, "a-long-password")
        assignment = assignment_ops.accept(session, worker, hit_id)
        assignment_ops.submit(session, worker, assignment.id, answers_to_xml([("q", "a")]))
        return assignment.id


def test_events_arrive_in_order_for_the_types_asked_for(mturk, market_sessions) -> None:
    receiver = Receiver(free_port())
    try:
        wanted = [
            "HITCreated",
            "AssignmentAccepted",
            "AssignmentSubmitted",
            "HITReviewable",
            "AssignmentApproved",
        ]
        hit_id = _setup(mturk, receiver.port, wanted)
        assignment_id = _work(market_sessions, hit_id, f"events-{hit_id[:8]}")
        mturk.approve_assignment(AssignmentId=assignment_id)
        wait_until(lambda: len(receiver.documents) == 5)
        assert receiver.events() == [
            ("HITCreated", None),
            ("AssignmentAccepted", assignment_id),
            ("AssignmentSubmitted", assignment_id),
            ("HITReviewable", None),
            ("AssignmentApproved", assignment_id),
        ]
        assert {d["Events"][0]["HITId"] for d in receiver.documents} == {hit_id}
        assert len({d["EventDocId"] for d in receiver.documents}) == 5
        time.sleep(0.5)
        assert len(receiver.documents) == 5  # nothing twice, nothing not asked for
    finally:
        receiver.stop()


def test_an_event_waits_for_a_receiver_that_is_down(mturk, market_sessions) -> None:
    port = free_port()
    hit_id = _setup(mturk, port, ["AssignmentSubmitted"])  # nobody listens on the port yet
    assignment_id = _work(market_sessions, hit_id, f"late-{hit_id[:8]}")
    # The first delivery has failed (on a loaded machine it can take longer than a fixed pause).
    wait_until(lambda: _event_row(market_sessions, hit_id, "AssignmentSubmitted").attempts >= 1)
    receiver = Receiver(port)
    try:
        # Any later activity sweeps the clocks, which retries what is pending.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not receiver.documents:
            mturk.get_account_balance()
            time.sleep(0.5)
        assert receiver.events() == [("AssignmentSubmitted", assignment_id)]
    finally:
        receiver.stop()


def _sweep_until(mturk, predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Keep the API busy (every request may sweep the clocks, which retries pending events)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        mturk.get_account_balance()
        time.sleep(0.5)
    assert predicate()


def test_a_refused_event_holds_back_the_later_ones_for_its_receiver(mturk, market_sessions) -> None:
    receiver = Receiver(free_port(), refuse_first=1)
    try:
        hit_id = _setup(mturk, receiver.port, ["AssignmentAccepted", "AssignmentSubmitted"])
        # Accepted and Submitted commit together, so one pass carries both; the first is refused.
        assignment_id = _work(market_sessions, hit_id, f"refused-{hit_id[:8]}")
        wait_until(lambda: len(receiver.refused) == 1)
        assert receiver.refused[0]["Events"][0]["EventType"] == "AssignmentAccepted"
        time.sleep(0.5)
        assert receiver.documents == []  # Submitted did not overtake Accepted
        _sweep_until(mturk, lambda: len(receiver.documents) == 2)
        assert receiver.events() == [
            ("AssignmentAccepted", assignment_id),
            ("AssignmentSubmitted", assignment_id),
        ]
        # The retry is the same document: a receiver can de-duplicate on EventDocId.
        assert receiver.documents[0]["EventDocId"] == receiver.refused[0]["EventDocId"]
    finally:
        receiver.stop()


def test_returned_abandoned_rejected_extended_expired_and_disposed(mturk, market_sessions) -> None:
    receiver = Receiver(free_port())
    try:
        wanted = [
            "AssignmentReturned",
            "AssignmentAbandoned",
            "AssignmentRejected",
            "HITExtended",
            "HITExpired",
            "HITDisposed",
        ]
        hit_id = _setup(mturk, receiver.port, wanted)
        with session_scope(market_sessions) as session:
            worker = create_worker(session, f"returns-{hit_id[:8]}", "a-long-password")
            returned = assignment_ops.accept(session, worker, hit_id).id
            assignment_ops.return_assignment(session, worker, returned)
        with session_scope(market_sessions) as session:
            worker = create_worker(session, f"abandons-{hit_id[:8]}", "a-long-password")
            abandoned = assignment_ops.accept(session, worker, hit_id)
            abandoned_id, late = abandoned.id, abandoned.deadline + timedelta(seconds=1)
        with session_scope(market_sessions) as session:
            assignment_ops.run_clocks(session, now=late)
            assert session.get(Assignment, abandoned_id).status == "Abandoned"  # type: ignore[union-attr]
        rejected = _work(market_sessions, hit_id, f"rejected-{hit_id[:8]}")
        mturk.reject_assignment(AssignmentId=rejected, RequesterFeedback="Not what was asked.")
        hit = mturk.get_hit(HITId=hit_id)["HIT"]
        mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=hit["Expiration"] + timedelta(hours=1))
        mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=hit["CreationTime"])
        mturk.delete_hit(HITId=hit_id)
        wait_until(lambda: len(receiver.documents) == 6)
        assert receiver.events() == [
            ("AssignmentReturned", returned),
            ("AssignmentAbandoned", abandoned_id),
            ("AssignmentRejected", rejected),
            ("HITExtended", None),
            ("HITExpired", None),
            ("HITDisposed", None),
        ]
        assert {d["Events"][0]["HITId"] for d in receiver.documents} == {hit_id}
    finally:
        receiver.stop()


def _extend_on_a_wrong_answer(up_to: int) -> dict[str, Any]:
    """A ScoreMyKnownAnswers policy adding an assignment (up to ``up_to``) when q is not "right"."""
    return {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": "q", "Values": ["right"]}]},
            {"Key": "ExtendIfKnownAnswerScoreIsLessThan", "Values": ["100"]},
            {"Key": "ExtendMaximumAssignments", "Values": [str(up_to)]},
        ],
    }


def test_more_assignments_extend_the_hit(mturk, market_sessions) -> None:
    receiver = Receiver(free_port())
    try:
        policy = _extend_on_a_wrong_answer(up_to=4)
        hit_id = _setup(
            mturk, receiver.port, ["HITExtended"], max_assignments=2, AssignmentReviewPolicy=policy
        )
        token = f"more-{hit_id[:8]}"
        mturk.create_additional_assignments_for_hit(
            HITId=hit_id, NumberOfAdditionalAssignments=1, UniqueRequestToken=token
        )
        wait_until(lambda: len(receiver.documents) == 1)
        assert receiver.events() == [("HITExtended", None)]
        with pytest.raises(mturk.exceptions.RequestError):  # the same request again extends nothing
            mturk.create_additional_assignments_for_hit(
                HITId=hit_id, NumberOfAdditionalAssignments=1, UniqueRequestToken=token
            )
        _work(market_sessions, hit_id, f"extends-{hit_id[:8]}")  # wrong known answer: the policy adds one
        wait_until(lambda: len(receiver.documents) == 2)
        assert receiver.events() == [("HITExtended", None), ("HITExtended", None)]
        assert mturk.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 4
        assert {(d["Events"][0]["HITId"], d["Events"][0]["HITTypeId"]) for d in receiver.documents} == {
            (hit_id, mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"])
        }
        time.sleep(0.5)
        assert len(receiver.documents) == 2
    finally:
        receiver.stop()


def test_a_failed_review_action_does_not_hold_back_the_event(mturk, market_sessions) -> None:
    receiver = Receiver(free_port())
    try:
        policy = _extend_on_a_wrong_answer(up_to=1)  # the HIT has 1: extending fails
        hit_id = _setup(mturk, receiver.port, ["AssignmentSubmitted"], AssignmentReviewPolicy=policy)
        assignment_id = _work(market_sessions, hit_id, f"failed-action-{hit_id[:8]}")
        # No API call meanwhile (no clock sweep): the commit's own delivery pass must carry it,
        # although the failed action's savepoint was rolled back after the event was written.
        wait_until(lambda: len(receiver.documents) == 1)
        assert receiver.events() == [("AssignmentSubmitted", assignment_id)]
        actions = mturk.list_review_policy_results_for_hit(HITId=hit_id, PolicyLevels=["Assignment"])[
            "AssignmentReviewReport"
        ]["ReviewActions"]
        assert [(a["ActionName"], a["Status"]) for a in actions] == [("extend", "Failed")]
        assert actions[0]["ErrorCode"] == "AWS.MechanicalTurk.InvalidParameterValue"
    finally:
        receiver.stop()


def test_a_failed_event_backs_off_before_it_is_tried_again(mturk, market_sessions) -> None:
    port = free_port()
    hit_id = _setup(mturk, port, ["AssignmentSubmitted"])  # nobody listens yet
    _work(market_sessions, hit_id, f"backoff-{hit_id[:8]}")

    def row() -> MarketEvent:
        return _event_row(market_sessions, hit_id, "AssignmentSubmitted")

    # The held-back check must come within the second after the failure: look often, query little.
    wait_until(lambda: row().attempts == 1, every=0.02)
    receiver = Receiver(port)
    try:
        engine = market_sessions.kw["bind"]
        assert events.deliver_pending(engine) == 0  # held back: the first retry waits a second
        assert receiver.documents == []
        assert row().delivered_at is None and row().last_error == "ConnectionError"
        time.sleep(1.2)
        assert events.deliver_pending(engine) == 1
        assert len(receiver.documents) == 1 and row().delivered_at is not None and row().attempts == 2
    finally:
        receiver.stop()


def _stored(market_sessions, hit_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        rows = session.scalars(select(MarketEvent).order_by(MarketEvent.id)).all()
        return [r.event_type for r in rows if r.document["Events"][0].get("HITId") == hit_id]


def test_create_hit_of_a_type_with_a_setting_records_hit_created(mturk, market_sessions) -> None:
    # CreateHIT reads the setting with the HIT type it finds (no query of its own).
    port = free_port()  # nobody listens: the event stays stored
    title = f"Setting read with the type {port}"
    params = hit_params(Title=title, MaxAssignments=1)
    hit_type = mturk.create_hit_type(
        Title=title,
        Description=params["Description"],
        Reward=params["Reward"],
        AssignmentDurationInSeconds=params["AssignmentDurationInSeconds"],
    )["HITTypeId"]
    without = mturk.create_hit(**params)["HIT"]
    assert without["HITTypeId"] == hit_type
    _subscribe(mturk, hit_type, port, ["HITCreated", "AssignmentRejected"])
    with_setting = mturk.create_hit(**params)["HIT"]
    assert with_setting["HITTypeId"] == hit_type
    assert _stored(market_sessions, without["HITId"]) == []
    assert _stored(market_sessions, with_setting["HITId"]) == ["HITCreated"]
    assignment_id = _work(market_sessions, with_setting["HITId"], f"rejected-{hit_type[:8]}")
    mturk.reject_assignment(AssignmentId=assignment_id, RequesterFeedback="no")
    assert _stored(market_sessions, with_setting["HITId"]) == ["HITCreated", "AssignmentRejected"]


def test_a_setting_made_after_its_absence_was_noted_is_used(market_sessions, requester) -> None:
    from hits.market import hit_ops, notifications

    params = hit_params(Title="Absence noted, then a setting", MaxAssignments=1)
    spec = {
        "Destination": "http://127.0.0.1:9/hook",
        "Transport": "Email",
        "Version": "2006-05-05",
        "EventTypes": ["HITCreated"],
    }
    with session_scope(market_sessions) as session:
        hit_type = hit_ops.find_or_create_hit_type(
            session, requester.requester_id, hit_ops.hit_type_spec(params)
        )
        first = hit_ops.create_hit(session, requester.requester_id, hit_type, hit_ops.hit_spec(params))
        # The same session, the same transaction: the setting made now counts at once.
        notifications.update_settings(
            session, requester.requester_id, hit_type.id, spec, True, allow_private=True
        )
        second = hit_ops.create_hit(session, requester.requester_id, hit_type, hit_ops.hit_spec(params))
        first_id, second_id = first.id, second.id
    assert _stored(market_sessions, first_id) == []
    assert _stored(market_sessions, second_id) == ["HITCreated"]
    # Absence noted in one transaction is not trusted in the next.
    later = {**params, "Title": "Absence noted, then a setting elsewhere"}
    session = market_sessions()
    try:
        hit_type = hit_ops.find_or_create_hit_type(
            session, requester.requester_id, hit_ops.hit_type_spec(later)
        )
        session.commit()
        with session_scope(market_sessions) as other:
            notifications.update_settings(
                other, requester.requester_id, hit_type.id, spec, True, allow_private=True
            )
        third = hit_ops.create_hit(session, requester.requester_id, hit_type, hit_ops.hit_spec(later))
        session.commit()
    finally:
        session.close()
    assert _stored(market_sessions, third.id) == ["HITCreated"]
