"""What reading a HIT's work costs in API calls: a page of 100, and no empty page after a short one."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.mturk import Marketplace
from hits.requester.quality import pipeline
from hits.requester.tables.campaigns import PublishedHIT
from tests.helpers import campaign_bot, launch_demo_campaign


def _count_calls(market: Marketplace) -> list[tuple[str, dict[str, Any]]]:
    """Every call ``market``'s client makes from now on: (operation, its parameters)."""
    calls: list[tuple[str, dict[str, Any]]] = []

    def note(model: Any = None, params: Any = None, **_: Any) -> None:
        calls.append((model.name, dict(params or {})))

    market.client.meta.events.register("provide-client-params.mturk.*", note)
    return calls


def test_a_hit_with_work_costs_one_listing_call_and_paging_goes_on_while_pages_are_full(
    tmp_path, live_server, market, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="calls"
    )
    for username in ("calls-a", "calls-b"):
        bot = campaign_bot(live_server.url, username, Profile("perfect", 1.0), truth, "calls")
        assert bot.run(max_hits=1).submitted == 1
    with session_scope(requester_sessions) as session:
        (hit_id,) = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    calls = _count_calls(market)
    assert len(pipeline.fetch_assignments(market, hit_id)) == 2
    # One page of 100 holds both; the marketplace's token for the page after it is not followed.
    assert calls == [
        (
            "ListAssignmentsForHIT",
            {"HITId": hit_id, "AssignmentStatuses": list(pipeline.SYNCED_STATUSES), "MaxResults": 100},
        )
    ]
    calls.clear()
    # Full pages are followed: two of one, then the empty page that ends the list.
    pages = list(market._pages("list_assignments_for_hit", "Assignments", HITId=hit_id, MaxResults=1))
    assert [len(p) for p in pages] == [1, 1, 0] and len(calls) == 3
