"""Notification settings per HIT type, and test events.

Settings are stored for every transport. A test event is delivered only to an
``http(s)://`` destination (POSTed as MTurk's event document); SQS and SNS
destinations are stored but nothing is sent to them.
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


def update_settings(
    session: Session, requester_id: str, hit_type_id: Any, notification: Any, active: Any
) -> NotificationSetting:
    """UpdateNotificationSettings: replace the specification and/or switch it on or off."""
    hit_type = session.get(HITType, hit_type_id) if isinstance(hit_type_id, str) else None
    if hit_type is None or hit_type.requester_id != requester_id:
        raise not_found("HITType", str(hit_type_id))
    if active is not None and not isinstance(active, bool):
        raise invalid("Active must be true or false.")
    setting = session.get(NotificationSetting, hit_type.id)
    if notification is None:
        if setting is None:
            raise invalid("This HIT type has no notification specification; give Notification.")
        if active is None:
            raise invalid("Give Notification, Active, or both.")
    else:
        spec = _spec(notification)
        if setting is None:
            setting = NotificationSetting(hit_type_id=hit_type.id, **spec)
            session.add(setting)
            forget_no_setting(session, hit_type.id)
        else:
            for key, value in spec.items():
                setattr(setting, key, value)
    setting.active = True if active is None and notification is not None else bool(active)
    setting.updated_at = utcnow()
    session.flush()
    return setting


def send_test_event(requester_id: str, notification: Any, event_type: Any) -> bool:
    """SendTestEventNotification: POST one test event to an http(s) destination.

    Returns whether it was delivered (False: stored-only transports). A destination
    that refuses or cannot be reached is a ``RequestError``, as MTurk reports it.
    """
    spec = _spec(notification)
    if event_type not in EVENT_TYPES:
        raise invalid("TestEventType must be one of: " + ", ".join(EVENT_TYPES) + ".")
    destination = spec["destination"]
    if spec["transport"] in ("SQS", "SNS") or not destination.startswith(("http://", "https://")):
        return False
    try:
        status = post_document(destination, event_document(requester_id, event_type))
    except requests.RequestException as exc:
        raise RequestError(
            f"The test notification could not be delivered to {destination}: {exc.__class__.__name__}.",
            "AWS.MechanicalTurk.NotificationDeliveryFailed",
        ) from exc
    if status >= 400:
        raise RequestError(
            f"The test notification to {destination} was refused with HTTP {status}.",
            "AWS.MechanicalTurk.NotificationDeliveryFailed",
        )
    return True
