"""A campaign does not go to review while a re-post of one of its HITs is being recorded.

Requester side. Found by CI on PostgreSQL (``test_task1_redo``): the beat's
``finish_campaigns`` read the campaign's HITs as all complete while the
outbox was recording a re-post that re-opened one of them. The re-post saw
the campaign still running (nothing to re-open), then the finish committed
"review". The result was a campaign in review with an open HIT: the workflow
took Task 1 for finished and ended before the redo was worked. Now the
re-post locks the campaign's row to re-open it, and the finish takes the same
lock before it looks a second time.

Found by CI again on PostgreSQL, with decisions in a queue of their own: a
sync that read a HIT as finished before a re-post re-opened it closed it
after, from what it had read; the redo's work was never read.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.quality import outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT
from tests.helpers import in_own_session
from tests.quality.test_outbox_replay import reposted_campaign


def test_a_campaign_finishing_while_a_repost_reopens_its_hit_stays_running(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, entries, reposts = reposted_campaign(
        tmp_path, live_server, market, requester_sessions, "finish-race"
    )
    hit_id = entries[reposts[0]][2]["hit_id"]

    def finish(session: Session) -> list[int]:
        return pipeline.finish_campaigns(session, market.access_key_id).campaigns

    # Every HIT is complete; the re-post is being recorded: its HIT re-opened, not committed yet.
    recording = requester_sessions()
    try:
        outbox.reopen_hits(recording, [hit_id])
        outbox.reopen_campaigns(recording, [campaign_id])
        with ThreadPoolExecutor(1) as pool:
            finishing = pool.submit(in_own_session, requester_sessions, finish)
            time.sleep(1.0)  # the finish has read the HITs (the re-open is not committed yet)
            recording.commit()
            assert finishing.result(timeout=60) == []
    finally:
        recording.close()
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
        assert campaign is not None and campaign.status == "running"
        assert published is not None and published.status == "open"
    # Once the re-posted work is in and the HIT closed, the campaign finishes as ever.
    with session_scope(requester_sessions) as session:
        session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id)).status = "complete"  # type: ignore[union-attr]
    assert in_own_session(requester_sessions, finish) == [campaign_id]


def test_a_sync_that_read_a_hit_before_its_repost_does_not_close_it_again(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, entries, reposts = reposted_campaign(
        tmp_path, live_server, market, requester_sessions, "stale-read"
    )
    hit_id = entries[reposts[0]][2]["hit_id"]
    # What the marketplace said of the HIT just before its re-post was applied (a beat's listing,
    # waiting in a sync's message); the same in an older version's message, without MaxAssignments.
    stale = pipeline.hit_snapshot(mturk.get_hit(HITId=hit_id)["HIT"])
    assert stale["HITStatus"] == "Reviewing" and stale["NumberOfAssignmentsPending"] == 0
    undated = {k: v for k, v in stale.items() if k != "MaxAssignments"}
    assert outbox.apply_entry(requester_sessions, market, reposts[0]) == "repost"
    assert mturk.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Assignable"
    with session_scope(requester_sessions) as session:
        done = session.get(OutboxEntry, reposts[0])
        assert done is not None and done.payload[outbox.MAX_ASSIGNMENTS_AFTER] == stale["MaxAssignments"] + 1

    for snapshot in (stale, undated):
        with session_scope(requester_sessions) as session:
            targets = [t for t in sync_queue.open_hits(session, market.access_key_id) if t[2] == hit_id]
        assert len(targets) == 1  # re-opened by the re-post
        fetched = pipeline.fetch_hits(market, targets, known={hit_id: snapshot})
        with session_scope(requester_sessions) as session:
            pipeline.review_hits(session, fetched)
        with session_scope(requester_sessions) as session:
            published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
            assert published is not None and published.status == "open"
        finish = in_own_session(
            requester_sessions, lambda s: pipeline.finish_campaigns(s, market.access_key_id)
        )
        assert finish.campaigns == []
