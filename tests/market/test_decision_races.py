"""Changes to one thing sent at the same moment take turns: none is lost, none undoes another.

A requester's script retried by two workers of its own, or an approve and a
reject of the same assignment from two tools: really concurrent calls through
the real boto3 client against the live server. On PostgreSQL without a lock
several of them succeeded and the last write won: an assignment paid and then
read Rejected, eight extensions of one assignment each leaving two, a HIT
deleted four times, a qualification request both granted and denied.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from hits.db import session_scope
from hits.market import qualification_admin
from hits.market.models import Worker
from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params
from tests.market.test_conformance import new_worker, work_on

CALLERS = 8
TRIALS = 4
ONE_CALL = Config(retries={"max_attempts": 1}, max_pool_connections=CALLERS)


def _race(calls: list) -> list[str]:  # type: ignore[type-arg]
    """Run ``calls`` at once (released together); what each did: its name, or its error code."""
    start = threading.Barrier(len(calls))

    def run(call) -> str:  # type: ignore[no-untyped-def]
        start.wait()
        try:
            call()
        except ClientError as exc:
            status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
            return f"{status} {exc.response['Error'].get('Code')}"
        return "done"

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def test_concurrent_approve_and_reject_take_exactly_one(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "100.00")
    clients = [boto3_client(live_server.url, key, ONE_CALL) for _ in range(CALLERS)]
    owner = clients[0]
    spent = Decimal(0)
    for _ in range(TRIALS):
        hit_id = owner.create_hit(**hit_params(Reward="1.00", MaxAssignments=1))["HIT"]["HITId"]
        _worker, assignment_id = work_on(market_sessions, hit_id)
        decisions = [
            partial(c.approve_assignment, AssignmentId=assignment_id)
            if n % 2
            else partial(c.reject_assignment, AssignmentId=assignment_id, RequesterFeedback="no")
            for n, c in enumerate(clients)
        ]
        outcomes = _race(decisions)
        taken = [n for n, outcome in enumerate(outcomes) if outcome == "done"]
        refused = {outcome for outcome in outcomes if outcome != "done"}
        assert len(taken) == 1, outcomes
        assert refused <= {"400 RequestError"}, outcomes
        status = owner.get_assignment(AssignmentId=assignment_id)["Assignment"]["AssignmentStatus"]
        assert status == ("Approved" if taken[0] % 2 else "Rejected")
        spent += Decimal("1.20") if status == "Approved" else 0
        assert Decimal(owner.get_account_balance()["AvailableBalance"]) == Decimal("100.00") - spent


def test_concurrent_extensions_all_count(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    """Each extension taken adds its assignments: none is lost to another written at the same time."""
    key = new_requester(market_sessions, "100.00")
    clients = [boto3_client(live_server.url, key, ONE_CALL) for _ in range(CALLERS)]
    owner = clients[0]
    hit_id = owner.create_hit(**hit_params(Reward="0.01", MaxAssignments=10))["HIT"]["HITId"]
    outcomes = _race(
        [
            partial(c.create_additional_assignments_for_hit, HITId=hit_id, NumberOfAdditionalAssignments=1)
            for c in clients
        ]
    )
    assert outcomes == ["done"] * CALLERS
    assert owner.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 10 + CALLERS
    # A HIT of fewer than 10 may not reach 10 however the extensions are timed.
    small = owner.create_hit(**hit_params(Reward="0.01", MaxAssignments=5))["HIT"]["HITId"]
    outcomes = _race(
        [
            partial(c.create_additional_assignments_for_hit, HITId=small, NumberOfAdditionalAssignments=4)
            for c in clients
        ]
    )
    assert outcomes.count("done") == 1, outcomes
    assert owner.get_hit(HITId=small)["HIT"]["MaxAssignments"] == 9


def test_concurrent_deletes_and_extensions_of_a_hit_take_turns(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "100.00")
    clients = [boto3_client(live_server.url, key, ONE_CALL) for _ in range(CALLERS)]
    owner = clients[0]
    hit_id = owner.create_hit(**hit_params(Reward="0.01", MaxAssignments=1))["HIT"]["HITId"]
    owner.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    deletes = [partial(c.delete_hit, HITId=hit_id) for c in clients[: CALLERS // 2]]
    extends = [
        partial(c.create_additional_assignments_for_hit, HITId=hit_id, NumberOfAdditionalAssignments=1)
        for c in clients[CALLERS // 2 :]
    ]
    outcomes = _race(deletes + extends)
    deleted, extended = outcomes[: len(deletes)], outcomes[len(deletes) :]
    assert deleted.count("done") == 1, outcomes  # a second DeleteHIT is refused, as MTurk refuses it
    hit = owner.get_hit(HITId=hit_id)["HIT"]
    assert hit["HITStatus"] == "Disposed"
    assert hit["MaxAssignments"] == 1 + extended.count("done")


def test_concurrent_answers_to_a_qualification_request_take_exactly_one(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "100.00")
    clients = [boto3_client(live_server.url, key, ONE_CALL) for _ in range(CALLERS)]
    owner = clients[0]
    qtype = owner.create_qualification_type(
        Name=f"Raced {uuid.uuid4().hex[:8]}", Description="d", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    worker_id = new_worker(market_sessions)
    with session_scope(market_sessions) as session:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        request_id = qualification_admin.create_request(session, worker, qtype, answer="please").id
    answers = [
        partial(c.accept_qualification_request, QualificationRequestId=request_id, IntegerValue=n)
        if n % 2
        else partial(c.reject_qualification_request, QualificationRequestId=request_id, Reason="no")
        for n, c in enumerate(clients)
    ]
    outcomes = _race(answers)
    taken = [n for n, outcome in enumerate(outcomes) if outcome == "done"]
    assert len(taken) == 1, outcomes
    if taken[0] % 2:
        score = owner.get_qualification_score(QualificationTypeId=qtype, WorkerId=worker_id)
        assert score["Qualification"]["IntegerValue"] == taken[0]
    else:
        with pytest.raises(ClientError):
            owner.get_qualification_score(QualificationTypeId=qtype, WorkerId=worker_id)
