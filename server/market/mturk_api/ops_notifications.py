"""Notification operations of the requester API."""

from __future__ import annotations

from typing import Any

from hits.market import notifications
from server.market.mturk_api.registry import CallContext, operation


@operation("UpdateNotificationSettings")
def update_notification_settings(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    notifications.update_settings(
        ctx.session,
        ctx.requester_id,
        params.get("HITTypeId"),
        params.get("Notification"),
        params.get("Active"),
        allow_private=ctx.settings.notification_allow_private,
    )
    return {}


@operation("SendTestEventNotification")
def send_test_event_notification(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    notifications.send_test_event(
        ctx.requester_id,
        params.get("Notification"),
        params.get("TestEventType"),
        allow_private=ctx.settings.notification_allow_private,
    )
    return {}
