"""Queuing syncs a page of ListReviewableHITs at a time, against the running marketplace."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.mturk import Marketplace
from hits.requester.quality import sync_queue
from hits.requester.tables.campaigns import PublishedHIT
from tests.helpers import campaign_bot, launch_demo_campaign


class PageRecorder:
    """The real marketplace client, noting each page of reviewable HITs as it is read."""

    def __init__(self, market: Marketplace, events: list[tuple[Any, ...]]):
        self.market = market
        self.events = events
        self.access_key_id = market.access_key_id

    def reviewable_hit_pages(self, hit_type_id: str, page_size: int = 100) -> Iterator[list[dict[str, Any]]]:
        for page in self.market.reviewable_hit_pages(hit_type_id, page_size):
            if page:
                self.events.append(("read", [h["HITId"] for h in page]))
            yield page


def test_each_page_is_queued_before_the_next_is_read(
    tmp_path, live_server, market, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name="pages"
    )
    # Every HIT takes two assignments: three get both (Reviewable), one only one (still Assignable).
    for username, hits in (("pages-a", 3), ("pages-b", 2)):
        bot = campaign_bot(live_server.url, username, Profile("perfect", 1.0), truth, "pages")
        assert bot.run(max_hits=hits).submitted == hits
    events: list[tuple[Any, ...]] = []

    def send(batch: list[list[Any]]) -> None:
        events.append(("sent", [t[2] for t in batch], [t[3] is not None for t in batch]))

    recorder: Any = PageRecorder(market, events)
    queued = sync_queue.queue_syncs(requester_sessions, recorder, send, batch_size=25, page_size=1)
    assert queued == 3
    reads = [e for e in events if e[0] == "read"]
    assert len(reads) == 2 and all(len(e[1]) == 1 for e in reads)
    # read, sent, read, sent: each page's HIT left, with what the page said of it, before the next read.
    assert [e[0] for e in events[:4]] == ["read", "sent", "read", "sent"]
    assert events[1][1:] == (events[0][1], [True]) and events[3][1:] == (events[2][1], [True])
    # Last, the HIT whose page stored work the marketplace does not yet list: read with GetHIT.
    with session_scope(requester_sessions) as session:
        all_hits = set(
            session.scalars(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id))
        )
    rest = all_hits - set(events[0][1]) - set(events[2][1])
    assert events[4:] == [("sent", sorted(rest), [False])]
    # Queued HITs stay queued until their sync runs (or goes stale): nothing is sent twice.
    events.clear()
    assert sync_queue.queue_syncs(requester_sessions, recorder, send, batch_size=25, page_size=1) == 0
    assert [e for e in events if e[0] == "sent"] == []
