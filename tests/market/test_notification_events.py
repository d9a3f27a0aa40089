"""Notification events reach an HTTP receiver after each change, in order, even if it was down."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from hits.db import session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.questions import answers_to_xml
from server.runner import free_port
from tests.helpers import hit_params


class Receiver:
    """A real HTTP endpoint that records the event documents POSTed to it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.documents: list[dict[str, Any]] = []
        received = self.documents

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append(json.loads(body))
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


def wait_until(predicate, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("events did not arrive")


def _setup(mturk, port: int, events: list[str]) -> str:  # type: ignore[no-untyped-def]
    params = hit_params(MaxAssignments=1)
    hit_type = mturk.create_hit_type(
        Title=params["Title"],
        Description=params["Description"],
        Reward=params["Reward"],
        AssignmentDurationInSeconds=600,
        AutoApprovalDelayInSeconds=3600,
    )["HITTypeId"]
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
    return str(
        mturk.create_hit_with_hit_type(
            HITTypeId=hit_type, MaxAssignments=1, LifetimeInSeconds=3600, Question=params["Question"]
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
    time.sleep(1.0)  # the first delivery has failed by now
    receiver = Receiver(port)
    try:
        # Any later activity sweeps the clocks, which retries what is pending.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not receiver.documents:
            mturk.get_account_balance()
            time.sleep(0.5)
        assert receiver.events() == [("AssignmentSubmitted", assignment_id)]
    finally:
        receiver.stop()
