"""Marketplace errors, each carrying the ``TurkErrorCode`` MTurk would send.

The API adapter turns ``RequestError`` into HTTP 400 and ``ServiceFault`` into
HTTP 500 with the JSON body botocore parses into ``client.exceptions``.
"""

from __future__ import annotations


class MarketError(Exception):
    """Base of errors that cross the wire."""

    wire_type = "RequestError"
    http_status = 400

    def __init__(self, message: str, turk_error_code: str = "AWS.MechanicalTurk.InvalidParameterValue"):
        super().__init__(message)
        self.message = message
        self.turk_error_code = turk_error_code


class RequestError(MarketError):
    """The request is invalid (MTurk's ``RequestError``)."""


class ServiceFault(MarketError):
    """The service failed (MTurk's ``ServiceFault``); the caller may retry."""

    wire_type = "ServiceFault"
    http_status = 500

    def __init__(self, message: str, turk_error_code: str = "AWS.MechanicalTurk.ServiceFault"):
        super().__init__(message, turk_error_code)


def invalid(message: str) -> RequestError:
    """A parameter failed validation."""
    return RequestError(message, "AWS.MechanicalTurk.InvalidParameterValue")


def not_found(entity: str, entity_id: str) -> RequestError:
    """``AWS.MechanicalTurk.<Entity>DoesNotExist``, as MTurk reports a missing id."""
    return RequestError(
        f"{entity} {entity_id} does not exist. ({entity_id})",
        f"AWS.MechanicalTurk.{entity}DoesNotExist",
    )
