"""A web hook's scheme is case-insensitive: ``HTTP://`` is posted to like ``http://``."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from demo.runner import free_port
from hits.db import session_scope
from hits.market.models import MarketEvent
from tests.helpers import hit_params
from tests.market.test_notification_events import Receiver, _work, wait_until

pytestmark = pytest.mark.usefixtures("private_hooks_for_direct_calls")


@pytest.mark.parametrize("scheme", ["HTTP", "Http"])
def test_an_upper_case_scheme_is_delivered(hook_mturk, market_sessions, scheme: str) -> None:
    receiver = Receiver(free_port())
    try:
        params = hit_params(MaxAssignments=1)
        hit_type = hook_mturk.create_hit_type(
            Title=params["Title"],
            Description=params["Description"],
            Reward=params["Reward"],
            AssignmentDurationInSeconds=600,
        )["HITTypeId"]
        # Accepted as a web hook when stored (the destination check reads the scheme in any case)...
        hook_mturk.update_notification_settings(
            HITTypeId=hit_type,
            Notification={
                "Destination": f" {scheme}://127.0.0.1:{receiver.port}/hook",
                "Transport": "Email",
                "Version": "2006-05-05",
                "EventTypes": ["AssignmentSubmitted"],
            },
            Active=True,
        )
        hit_id = hook_mturk.create_hit_with_hit_type(
            HITTypeId=hit_type, LifetimeInSeconds=3600, Question=params["Question"]
        )["HIT"]["HITId"]
        # ... so it must be posted to as well, not stored and forgotten.
        assignment_id = _work(market_sessions, hit_id, f"scheme-{hit_id[:8]}")
        wait_until(lambda: len(receiver.documents) == 1)
        assert receiver.events() == [("AssignmentSubmitted", assignment_id)]
        with session_scope(market_sessions) as session:
            stored = select(MarketEvent.destination).where(MarketEvent.hit_type_id == hit_type)
            assert list(session.scalars(stored)) == [f"http://127.0.0.1:{receiver.port}/hook"]
    finally:
        receiver.stop()
