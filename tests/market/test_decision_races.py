"""Decisions on one assignment sent at the same moment: exactly one is taken, and money follows it.

A requester's script retried by two workers of its own, or an approve and a
reject of the same assignment from two tools: really concurrent calls through
the real boto3 client against the live server. On PostgreSQL without a lock
several of them succeeded and the last write won, so an assignment could be
paid and then read Rejected.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from functools import partial

from botocore.config import Config
from botocore.exceptions import ClientError

from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params
from tests.market.test_conformance import work_on

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
