"""Notification events for real: recorded with the change, delivered after commit, retried until received.

A state change (an assignment accepted, submitted, approved...; a HIT created,
reviewable, expired...) whose HIT type has an active notification setting
naming that event type writes a :class:`MarketEvent` row in the same
transaction. After the transaction commits, a background thread POSTs pending
events to their ``http(s)://`` destinations as MTurk's 2014-08-15 event
documents; an event the receiver did not take (down, or an error status) stays
pending, with its destination's later events behind it so that they arrive
in order, and is retried with a growing back-off by later deliveries (every
clock sweep starts one when something is due), so no event is lost while the
receiver is away. Delivery is at least once, as on MTurk: receivers should
de-duplicate on ``EventDocId``.

Events go only to public addresses, checked when each is sent
(``hits.wire.destinations``), unless the operator allowed private ones on
the engine the delivery runs through (``allow_private_destinations``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import requests
from sqlalchemy import Engine, or_, select, update
from sqlalchemy.orm import Session

from hits.db import call_after_commit, utcnow
from hits.market.missing_rows import MissingRows
from hits.market.models import HIT, Assignment, MarketEvent, NotificationSetting
from hits.wire.destinations import (
    DestinationRefused,
    is_posted_to,
    normalised,
    post_json,
    private_destinations_allowed,
)

log = logging.getLogger(__name__)
TIMEOUT = 5.0
#: A claim older than this belongs to a deliverer that died: another may take the event.
CLAIM_STALE = timedelta(seconds=60)
#: After this many failed attempts (about two days, with the back-off below) an event is kept,
#: with its last error, but no longer tried.
MAX_ATTEMPTS = 200
#: A failed event waits 1, 2, 4... seconds, at most this long, before its next attempt.
MAX_BACKOFF = timedelta(minutes=15)
BATCH = 100
# One delivery pass at a time per process keeps a destination's events in order.
_DELIVERING = threading.Lock()
# Per engine: a pass has been started but has not begun claiming (a new kick need not start another).
_WAITING: dict[Engine, bool] = {}
_WAITING_LOCK = threading.Lock()


#: HIT types the current transaction found to have no notification setting.
_NO_SETTING = MissingRows("hitforge_no_notification_setting")


def note_no_setting(session: Session, hit_type_id: str) -> None:
    """Tell :func:`record` that this transaction found no notification setting for ``hit_type_id``.

    A query that reads the HIT type can read its setting in the same round trip
    (an outer join); a setting found so is in the identity map already, and a
    missing one is remembered here, so that recording the request's events costs
    no query of its own. Only for the current transaction: the next one asks again.
    """
    _NO_SETTING.note(session, hit_type_id)


def forget_no_setting(session: Session, hit_type_id: str) -> None:
    """A setting for ``hit_type_id`` is being created in this session: ask the database again."""
    _NO_SETTING.forget(session, hit_type_id)


def _setting(session: Session, hit_type_id: str) -> NotificationSetting | None:
    if _NO_SETTING.known_missing(session, hit_type_id):
        return None
    return session.get(NotificationSetting, hit_type_id)


def record(session: Session, hit: HIT, event_type: str, assignment: Assignment | None = None) -> None:
    """Write the event if the HIT type's active setting asks for it; deliver it after commit."""
    setting = _setting(session, hit.hit_type_id)
    if setting is None or not setting.active or event_type not in setting.event_types:
        return
    destination = normalised(setting.destination)
    if setting.transport in ("SQS", "SNS") or not is_posted_to(destination):
        return  # stored only: hitforge has no queue service or mail to send to, only web hooks
    extra = {"HITTypeId": hit.hit_type_id, "HITId": hit.id}
    if assignment is not None:
        extra.update(AssignmentId=assignment.id, WorkerId=assignment.worker_id)
    document = event_document(hit.requester_id, event_type, extra)
    session.add(
        MarketEvent(
            requester_id=hit.requester_id,
            hit_type_id=hit.hit_type_id,
            event_type=event_type,
            destination=destination,
            document=document,
            attempts=0,
        )
    )
    schedule_delivery(session)


def event_document(requester_id: str, event_type: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """An event document as MTurk sends it (the 2014-08-15 JSON format); test events use it too."""
    event = {"EventType": event_type, "EventTimestamp": utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")}
    event.update(extra or {})
    return {
        "Events": [event],
        "EventDocId": uuid.uuid4().hex,
        "SourceAccount": requester_id,
        "CustomerId": requester_id,
        "EventDocVersion": "2014-08-15",
    }


def schedule_delivery(session: Session) -> None:
    """Start a delivery pass in the background once this transaction commits."""
    engine = session.get_bind()
    if not isinstance(engine, Engine):
        engine = engine.engine
    # One pass per commit: every callback of this transaction shares a flag, and the first to run
    # kicks. Each is registered (not just the first) because a savepoint rolled back drops its own.
    transaction = session.get_transaction()
    token = session.info.get("_events_commit")
    if token is None or token[0] is not transaction:
        token = session.info["_events_commit"] = (transaction, {"kicked": False})
    flag: dict[str, bool] = token[1]

    def start() -> None:
        if not flag["kicked"]:
            flag["kicked"] = True
            _kick(engine)

    call_after_commit(session, start)


def _kick(engine: Engine) -> None:
    """Start a pass unless one is already waiting to start (it will see every event committed by now)."""
    with _WAITING_LOCK:
        if _WAITING.get(engine):
            return
        _WAITING[engine] = True
    threading.Thread(target=_pass, args=(engine,), name="hitforge-events", daemon=True).start()


def _pass(engine: Engine) -> None:
    try:
        deliver_pending(engine, on_start=lambda: _WAITING.pop(engine, None))
    except Exception:  # a background thread has nobody to raise to; the next sweep tries again
        _WAITING.pop(engine, None)
        log.exception("event delivery pass failed")


def deliver_pending(engine: Any, on_start: Callable[[], object] | None = None) -> int:
    """POST every pending event this pass can claim, oldest first; return how many were delivered.

    Each event is tried once a pass. Once a destination fails, its later
    events wait for the next pass too, so a receiver gets its events in order.
    """
    if not isinstance(engine, Engine):
        engine = engine.engine
    delivered, cursor = 0, 0
    failed: set[str] = set()
    with _DELIVERING:
        if on_start is not None:
            on_start()
        while True:
            batch = _claim(engine, after_id=cursor)
            if not batch:
                return delivered
            for event_id, destination, document in batch:
                if destination in failed:
                    _release(engine, event_id)
                    continue
                ok = _deliver_one(engine, event_id, destination, document)
                delivered += ok
                if not ok:
                    failed.add(destination)
            cursor = batch[-1][0]


def _claim(engine: Engine, after_id: int) -> list[tuple[int, str, dict[str, Any]]]:
    now = utcnow()
    fresh_claim = MarketEvent.claimed_at >= now - CLAIM_STALE
    with Session(engine) as session, session.begin():
        # A destination another deliverer is working on is left to it, to keep its events in order.
        busy = select(MarketEvent.destination).where(MarketEvent.delivered_at.is_(None), fresh_claim)
        candidates = session.execute(
            select(MarketEvent.id, MarketEvent.destination, MarketEvent.document)
            .where(
                MarketEvent.id > after_id,
                MarketEvent.delivered_at.is_(None),
                MarketEvent.attempts < MAX_ATTEMPTS,
                or_(MarketEvent.claimed_at.is_(None), MarketEvent.claimed_at < now - CLAIM_STALE),
                MarketEvent.destination.not_in(busy),
            )
            .order_by(MarketEvent.id)
            .limit(BATCH)
        ).all()
        claimed = []
        for event_id, destination, document in candidates:
            # Compare-and-set: only one deliverer wins each event.
            result: Any = session.execute(
                update(MarketEvent)
                .where(
                    MarketEvent.id == event_id,
                    MarketEvent.delivered_at.is_(None),
                    or_(MarketEvent.claimed_at.is_(None), MarketEvent.claimed_at < now - CLAIM_STALE),
                )
                .values(claimed_at=now)
            )
            if result.rowcount:
                claimed.append((event_id, destination, document))
    return claimed


def _release(engine: Engine, event_id: int) -> None:
    """Give a claimed event back untried (its destination failed earlier in this pass)."""
    with Session(engine) as session, session.begin():
        session.execute(update(MarketEvent).where(MarketEvent.id == event_id).values(claimed_at=None))


def post_document(destination: str, document: dict[str, Any], allow_private: bool = False) -> int:
    """POST an event document to a checked destination; the HTTP status.

    A destination that may not be sent to raises ``DestinationRefused``, a
    network failure ``requests.RequestException``; redirects are not followed.
    """
    return post_json(destination, document, TIMEOUT, allow_private)


def _deliver_one(engine: Engine, event_id: int, destination: str, document: dict[str, Any]) -> int:
    error = None
    try:
        status = post_document(destination, document, private_destinations_allowed(engine))
        if status >= 300:
            error = f"HTTP {status}"
    except DestinationRefused:
        # Kept and retried like any failure: the name may resolve to a public address later.
        error = "DestinationRefused"
    except requests.RequestException as exc:
        error = exc.__class__.__name__
    with Session(engine) as session, session.begin():
        event = session.get(MarketEvent, event_id)
        if event is None:
            return 0
        event.attempts += 1
        if error is None:
            event.delivered_at = utcnow()
            event.last_error = None
        else:
            # Held back, as if claimed, until its retry time: a receiver that is down is not hammered,
            # and while the event is held its destination counts as busy, so later events wait too.
            backoff = min(timedelta(seconds=2 ** min(event.attempts - 1, 20)), MAX_BACKOFF)
            event.claimed_at = utcnow() + backoff - CLAIM_STALE
            event.last_error = error
            log.info("event %s to %s not delivered: %s", event_id, destination, error)
    return int(error is None)


def retry_pending(session: Session) -> None:
    """Schedule a delivery pass if any event is still waiting (the clock sweep calls this)."""
    stale = utcnow() - CLAIM_STALE
    waiting = session.scalar(
        select(MarketEvent.id)
        .where(
            MarketEvent.delivered_at.is_(None),
            MarketEvent.attempts < MAX_ATTEMPTS,
            or_(MarketEvent.claimed_at.is_(None), MarketEvent.claimed_at < stale),
        )
        .limit(1)
    )
    if waiting is not None:
        schedule_delivery(session)
