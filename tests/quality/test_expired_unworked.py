"""A HIT that expires with nobody having worked on it is closed by the sync, not a crash of its batch."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from hits.db import session_scope
from hits.requester.quality import pipeline, sync_queue
from hits.requester.tables.campaigns import OutboxEntry, PublishedHIT
from tests.helpers import launch_demo_campaign


def test_an_expired_hit_with_no_work_closes(tmp_path, live_server, market, mturk, requester_sessions) -> None:
    campaign_id, _truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="expired-unworked"
    )
    with session_scope(requester_sessions) as session:
        targets = [t for t in sync_queue.open_hits(session, market.access_key_id) if t[0] == campaign_id]
    assert len(targets) == 1
    mturk.update_expiration_for_hit(HITId=targets[0][2], ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    fetched = pipeline.fetch_hits(market, targets)
    assert fetched[0].hit["HITStatus"] == "Reviewable" and fetched[0].assignments == []
    with session_scope(requester_sessions) as session:
        outbox = pipeline.review_hits(session, fetched)
    with session_scope(requester_sessions) as session:
        published = session.get(PublishedHIT, targets[0][1])
        assert published is not None and published.status == "complete"
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(outbox))).all()
        assert [(e.action, e.target) for e in entries] == [("reviewing", f"{targets[0][2]}@0")]
