"""Which HITs the review pipeline reads, and when: one sync task per batch of HITs with work.

Requester side, product. The beat's ``sync_submissions`` calls :func:`queue_syncs`;
each ``sync_hits`` task then checks its targets with :func:`own_targets` and
hands them to :mod:`hits.requester.quality.pipeline`, which reads, records and decides.
A function given a ``Session`` never commits; one given a session factory
owns its transactions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from hits.db import call_after_commit, session_scope, utcnow
from hits.requester.mturk import Marketplace
from hits.requester.quality.outbox import MOVED_TO
from hits.requester.quality.pipeline import hit_snapshot
from hits.requester.tables.campaigns import (
    BATCH_STATUS,
    CANCELLING,
    PAUSED,
    Campaign,
    OutboxEntry,
    PublishedHIT,
    Submission,
)

#: Campaigns whose open HITs are synced and reviewed: running ones (paused and cancelled ones too:
#: work submitted before is decided as usual), and layout batches with gold.
SYNCED_CAMPAIGNS = ("running", PAUSED, CANCELLING, BATCH_STATUS)
#: A queued HIT sync not done after this long is taken to be lost, and queued again.
SYNC_STALE = timedelta(seconds=60)


def open_hits(
    session: Session, access_key_id: str, mturk_hit_ids: Collection[str] | None = None
) -> list[tuple[int, int, str]]:
    """(campaign id, published HIT id, marketplace HIT id) of HITs still being worked on.

    Only campaigns published with ``access_key_id``: a worker can read only
    what its own credentials may see. With ``mturk_hit_ids``, only those HITs.
    """
    query = (
        select(PublishedHIT.campaign_id, PublishedHIT.id, PublishedHIT.mturk_hit_id)
        .join(Campaign, Campaign.id == PublishedHIT.campaign_id)
        .where(
            PublishedHIT.status == "open",
            Campaign.status.in_(SYNCED_CAMPAIGNS),
            Campaign.access_key_id == access_key_id,
        )
        .order_by(PublishedHIT.id)
    )
    if mturk_hit_ids is not None:
        query = query.where(PublishedHIT.mturk_hit_id.in_(list(mturk_hit_ids)))
    return [(c, p, h) for c, p, h in session.execute(query).all() if h]


def running_hit_types(session: Session, access_key_id: str) -> list[str]:
    """HIT types of the running campaigns published with ``access_key_id``.

    Their own (two with adaptive gold), and those a redo moved one of their HITs to (``exclude_from_hit``):
    ListReviewableHITs lists a HIT by the type it has now, so a moved HIT that
    expires, or whose work arrives without its page, is found only there.
    """
    running = (Campaign.status.in_(SYNCED_CAMPAIGNS), Campaign.access_key_id == access_key_id)
    # A campaign with adaptive gold has a second type: its HITs for trusted workers.
    types = select(Campaign.hit_type_id, Campaign.trusted_hit_type_id).where(*running)
    own = [t for pair in session.execute(types) for t in pair]
    payloads = session.scalars(
        select(OutboxEntry.payload)
        .join(Campaign, Campaign.id == OutboxEntry.campaign_id)
        .where(*running, OutboxEntry.action == "repost", OutboxEntry.status == "done")
    )
    moved = {p["hit_id"]: p[MOVED_TO] for p in payloads if p.get(MOVED_TO)}
    # Only the types of moved HITs still open: a finished one has nothing more to list.
    still_open = (
        set(
            session.scalars(
                select(PublishedHIT.mturk_hit_id).where(
                    PublishedHIT.mturk_hit_id.in_(sorted(moved)), PublishedHIT.status == "open"
                )
            )
        )
        if moved
        else set()
    )
    return [t for t in dict.fromkeys([*own, *(moved[h] for h in sorted(h for h in still_open if h))]) if t]


def hits_to_sync(
    session: Session,
    access_key_id: str,
    reviewable: set[str],
    now: datetime | None = None,
    *,
    unsynced_too: bool = True,
) -> list[tuple[int, int, str]]:
    """Open HITs worth a look, marked as queued: the caller sends one sync task for each.

    Polling every open HIT costs two API calls each per beat; instead a HIT is
    read when its page stored a submission the marketplace has not confirmed
    yet, or when ListReviewableHITs reports it (all work in, or expired), which
    also catches work submitted without passing through the page. A HIT whose
    sync is queued and not yet done is skipped until it goes stale (a lost task).
    With ``unsynced_too=False`` only the ``reviewable`` HITs are considered
    (a page of ListReviewableHITs, queued while the next page is read).
    """
    now = now or utcnow()
    if unsynced_too:
        unsynced = set(
            session.scalars(
                select(Submission.published_hit_id)
                .where(Submission.synced.is_(False), Submission.decision.is_(None))  # not void
                .distinct()
            )
        )
        candidates = open_hits(session, access_key_id)
    else:
        unsynced, candidates = set(), open_hits(session, access_key_id, reviewable) if reviewable else []
    wanted = [t for t in candidates if t[2] in reviewable or t[1] in unsynced]
    if not wanted:
        return []
    fresh = now - SYNC_STALE
    rows = session.scalars(
        select(PublishedHIT).where(PublishedHIT.id.in_([t[1] for t in wanted])).with_for_update()
    ).all()
    due = {p.id for p in rows if p.sync_queued_at is None or p.sync_queued_at < fresh}
    for row in rows:
        if row.id in due:
            row.sync_queued_at = now
    return [t for t in wanted if t[1] in due]


def queue_syncs(
    sessions: sessionmaker[Session],
    market: Marketplace,
    send: Callable[[list[list[Any]]], object],
    batch_size: int,
    *,
    page_size: int = 100,
) -> int:
    """Queue a sync of every HIT with work to read, ``batch_size`` HITs to a ``send``; return how many.

    Each page of ListReviewableHITs is its own unit of work, its batches sent
    as soon as it commits: the other workers sync it while the next page is
    read, instead of waiting for the whole listing. What the page says of a
    HIT travels with its sync (no GetHIT for it then). Last come the HITs
    whose pages stored work the marketplace has not yet reported.
    """
    key = market.access_key_id
    with session_scope(sessions) as session:
        hit_types = running_hit_types(session, key)
    queued = 0
    for hit_type in hit_types:
        for page in market.reviewable_hit_pages(hit_type, page_size):
            snapshots = {h["HITId"]: hit_snapshot(h) for h in page}
            with session_scope(sessions) as session:
                targets = hits_to_sync(session, key, set(snapshots), unsynced_too=False)
                _send_after_commit(session, targets, snapshots, send, batch_size)
            queued += len(targets)
    with session_scope(sessions) as session:
        # The HITs queued above are fresh, so they are skipped here.
        targets = hits_to_sync(session, key, set())
        _send_after_commit(session, targets, {}, send, batch_size)
    return queued + len(targets)


def _send_after_commit(
    session: Session,
    targets: list[tuple[int, int, str]],
    snapshots: dict[str, Any],
    send: Callable[[list[list[Any]]], object],
    batch_size: int,
) -> None:
    for start in range(0, len(targets), batch_size):
        batch = [[*t, snapshots.get(t[2])] for t in targets[start : start + batch_size]]
        call_after_commit(session, partial(send, batch))


def own_targets(
    session: Session, access_key_id: str, targets: list[tuple[int, int, str]]
) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """``targets`` split into those of campaigns published with ``access_key_id`` and the rest.

    A broker may be shared by workers holding other credentials (or hold a
    message from before a restore): only a campaign's own credentials can
    read its HITs, so the rest are left for a worker that holds them.
    """
    keys = dict(
        session.execute(
            select(Campaign.id, Campaign.access_key_id).where(Campaign.id.in_({t[0] for t in targets}))
        ).all()
    )
    own = [t for t in targets if keys.get(t[0]) == access_key_id]
    return own, [t for t in targets if keys.get(t[0]) != access_key_id]
