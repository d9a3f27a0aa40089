"""What an API call does before its unit of work, and how a new HIT joins the session.

SQLite's writers take turns, one write transaction at a time across every
thread and process. So a call checks who signed it, and CreateHIT validates
its question and members, before the call's unit of work begins: a call that
is refused never waits for another writer, and a writer holds the lock only
for its own statements. (On PostgreSQL nothing here waits either way; the
checks of the refusals run there too.)
"""

from __future__ import annotations

import threading
import time

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from sqlalchemy import select, text

from hits.db import session_scope
from hits.market import hit_ops
from hits.market.accounts import IssuedKey
from hits.market.models import HIT
from tests.conftest import BACKEND, boto3_client
from tests.helpers import hit_params

# A call that waited for the lock would time out here, well before SQLite's own 60 s.
IMPATIENT = Config(read_timeout=30, retries={"max_attempts": 1})  # the writer below holds the lock longer


def test_refused_calls_do_not_wait_for_another_writer(live_server, requester, market_sessions) -> None:
    client = boto3_client(live_server.url, requester, IMPATIENT)
    stranger = boto3_client(live_server.url, IssuedKey("nobody", "AKIDNOTAKEYATALL000", "x"), IMPATIENT)
    created: list[str] = []
    # Any call runs the marketplace clocks when due (a write, at most every 5 s):
    # mark them just run, so that none falls due while this test holds the lock.
    live_server.server.app.extensions.setdefault("hitforge_clock", {})["last"] = time.monotonic()
    with session_scope(market_sessions) as writer:
        writer.execute(text("SELECT 1"))  # a write unit of work is open: on SQLite it holds the lock

        with pytest.raises(ClientError) as bad_question:
            client.create_hit(**hit_params(Question="<NotAQuestion/>"))
        assert bad_question.value.response["Error"]["Code"] == "RequestError"

        with pytest.raises(ClientError) as bad_lifetime:
            client.create_hit(**hit_params(LifetimeInSeconds=5))
        assert bad_lifetime.value.response["Error"]["Code"] == "RequestError"

        with pytest.raises(ClientError) as unknown_key:
            stranger.create_hit(**hit_params())
        assert unknown_key.value.response["Error"]["Code"] == "UnrecognizedClientException"

        # A valid CreateHIT does need the lock: on SQLite it waits for this writer.
        waiting = threading.Thread(
            target=lambda: created.append(client.create_hit(**hit_params())["HIT"]["HITId"])
        )
        waiting.start()
        waiting.join(timeout=0.5)
        if BACKEND == "embedded":
            assert waiting.is_alive(), "CreateHIT did not wait for the open write transaction"
    waiting.join(timeout=60)
    assert len(created) == 1
    assert client.get_hit(HITId=created[0])["HIT"]["HITStatus"] == "Assignable"


def test_a_created_hit_is_in_the_session_and_later_changes_are_saved(market_sessions, requester) -> None:
    params = hit_params(MaxAssignments=3, RequesterAnnotation="batch 7")
    with session_scope(market_sessions) as session:
        hit_type = hit_ops.find_or_create_hit_type(
            session, requester.requester_id, hit_ops.hit_type_spec(params)
        )
        hit = hit_ops.create_hit(session, requester.requester_id, hit_type, hit_ops.hit_spec(params))
        assert hit in session and hit.hit_type is hit_type
        assert session.get(HIT, hit.id) is hit  # the same object, not a second copy
        assert not session.dirty and not session.new  # inserted already, nothing pending
        hit.max_assignments = 5  # an UPDATE at commit, not a second INSERT
        hit_id = hit.id
    with session_scope(market_sessions) as session:
        saved = session.scalars(select(HIT).where(HIT.id == hit_id)).one()
        assert (saved.max_assignments, saved.requester_annotation, saved.review_status) == (
            5,
            "batch 7",
            "NotReviewed",
        )
        assert saved.hit_type_id == hit_type.id and saved.status == "Assignable"
