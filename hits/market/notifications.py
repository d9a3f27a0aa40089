"""Notification settings per HIT type, and test events.

Settings are stored for every transport. A test event is delivered only to an
``http(s)://`` destination (POSTed as MTurk's event document); SQS and SNS
destinations are stored but nothing is sent to them. A destination the
marketplace would fetch must be a public address unless the operator allows
private ones (``hits.wire.destinations``); refusals and failed deliveries
all give the same message.
"""

from __future__ import annotations

from typing import Any

import requests
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import validation as v
from hits.market.errors import RequestError, invalid, not_found
from hits.market.events import event_document, forget_no_setting, post_document
from hits.market.models import HITType, NotificationSetting
from hits.wire.destinations import DESTINATION_REFUSED, DestinationRefused, check_destination, is_web_hook

TRANSPORTS = ("Email", "SQS", "SNS")
EVENT_TYPES = (
    "AssignmentAccepted",
    "AssignmentAbandoned",
    "AssignmentReturned",
    "AssignmentSubmitted",
    "AssignmentRejected",
    "AssignmentApproved",
    "HITCreated",
    "HITExpired",
    "HITReviewable",
    "HITExtended",
    "HITDisposed",
    "Ping",
)
VERSION = "2006-05-05"


def _spec(notification: Any) -> dict[str, Any]:
    if not isinstance(notification, dict):
        raise invalid("Notification must be a NotificationSpecification.")
    destination = v.text(notification.get("Destination"), "Destination", 1000, required=True)
    transport = notification.get("Transport")
    if transport not in TRANSPORTS:
        raise invalid(f"Transport must be one of {', '.join(TRANSPORTS)}.")
    version = v.text(notification.get("Version"), "Version", 32, required=True)
    events = notification.get("EventTypes")
    if not isinstance(events, list) or not events or any(e not in EVENT_TYPES for e in events):
        raise invalid("EventTypes must list one or more of: " + ", ".join(EVENT_TYPES) + ".")
    return {"destination": destination, "transport": transport, "version": version, "event_types": events}


def _fetched(spec: dict[str, Any]) -> bool:
    """Whether events of this specification would be fetched by the marketplace (not stored only)."""
    return spec["transport"] not in ("SQS", "SNS") and is_web_hook(spec["destination"])


def update_settings(
    session: Session,
    requester_id: str,
    hit_type_id: Any,
    notification: Any,
    active: Any,
    *,
    allow_private: bool = False,
) -> NotificationSetting:
    """UpdateNotificationSettings: replace the specification and/or switch it on or off.

    ``allow_private``: the operator's setting; otherwise a web-hook destination
    must be a public ``http(s)://`` address (checked again at each delivery).
    """
    # Checked before the first query: resolving a name can take seconds, and must not do so
    # while this request holds the database (on SQLite, every writer's turn).
    spec = None if notification is None else _spec(notification)
    if spec is not None and _fetched(spec):
        try:
            check_destination(spec["destination"], allow_private)
        except DestinationRefused:
            raise invalid(DESTINATION_REFUSED) from None
    hit_type = session.get(HITType, hit_type_id) if isinstance(hit_type_id, str) else None
    if hit_type is None or hit_type.requester_id != requester_id:
        raise not_found("HITType", str(hit_type_id))
    if active is not None and not isinstance(active, bool):
        raise invalid("Active must be true or false.")
    setting = session.get(NotificationSetting, hit_type.id)
    if spec is None:
        if setting is None:
            raise invalid("This HIT type has no notification specification; give Notification.")
        if active is None:
            raise invalid("Give Notification, Active, or both.")
    else:
        if setting is None:
            setting = NotificationSetting(hit_type_id=hit_type.id, **spec)
            session.add(setting)
            forget_no_setting(session, hit_type.id)
        else:
            for key, value in spec.items():
                setattr(setting, key, value)
    setting.active = True if active is None and spec is not None else bool(active)
    setting.updated_at = utcnow()
    session.flush()
    return setting


def send_test_event(
    requester_id: str, notification: Any, event_type: Any, *, allow_private: bool = False
) -> bool:
    """SendTestEventNotification: POST one test event to an http(s) destination.

    Returns whether it was delivered (False: stored-only transports). A
    destination that may not be sent to, cannot be reached, or answers with
    anything but a 2xx is a ``RequestError`` with one and the same message,
    so the answer never tells which addresses or ports are open.
    """
    spec = _spec(notification)
    if event_type not in EVENT_TYPES:
        raise invalid("TestEventType must be one of: " + ", ".join(EVENT_TYPES) + ".")
    if not _fetched(spec):
        return False
    try:
        status = post_document(spec["destination"], event_document(requester_id, event_type), allow_private)
    except (DestinationRefused, requests.RequestException):
        status = None
    if status is None or not 200 <= status < 300:
        raise RequestError(DESTINATION_REFUSED, "AWS.MechanicalTurk.NotificationDeliveryFailed") from None
    return True
