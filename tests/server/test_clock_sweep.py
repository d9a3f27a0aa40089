"""The marketplace clocks' sweep runs beside requests, never inside one."""

from __future__ import annotations

import time
from datetime import timedelta

from botocore.config import Config
from sqlalchemy import select

from hits.db import session_scope, utcnow
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.models import Assignment
from tests.conftest import boto3_client
from tests.helpers import hit_params

# A call that waited for the sweep would time out here: the lock it would queue for is held for the
# whole test (SQLite gives up after 60 s, PostgreSQL waits for ever), while a loaded machine can
# take seconds to answer a call that does not wait.
IMPATIENT = Config(read_timeout=30, retries={"max_attempts": 1})


def test_a_request_that_finds_the_sweep_due_does_not_wait_for_it(
    live_server, mturk, requester, market_sessions
) -> None:
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"sweep-{hit_id[:8]}", "a-long-password")
        late = assignment_ops.accept(session, worker, hit_id)
        late.deadline = utcnow() - timedelta(seconds=1)
        late_id = late.id
    client = boto3_client(live_server.url, requester, IMPATIENT)
    clock = live_server.server.app.extensions.setdefault("hitforge_clock", {})
    with session_scope(market_sessions) as holder:
        # Hold the overdue assignment's row (PostgreSQL) and, on SQLite, the write lock:
        # the sweep that abandons it must wait for this transaction.
        holder.scalars(select(Assignment).where(Assignment.id == late_id).with_for_update()).one()
        clock["last"] = 0.0  # a sweep is due: the next call finds it so
        started = time.monotonic()
        balance = client.get_account_balance()["AvailableBalance"]
        assert time.monotonic() - started < 15, "the call waited for the sweep"
        assert balance
        assert clock["last"] > 0.0, "the call did not start the sweep"
    # Released: the sweep started by that call finishes on its own, no other request needed.
    deadline = time.monotonic() + 60
    status = ""
    while time.monotonic() < deadline:
        with session_scope(market_sessions) as session:
            status = session.scalar(select(Assignment.status).where(Assignment.id == late_id)) or ""
        if status == "Abandoned":
            break
        time.sleep(0.2)
    assert status == "Abandoned"
