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


class ParameterValidationError(RequestError):
    """A parameter that breaks the service model's constraints (an id's pattern or length).

    MTurk reports these with the error type ``ParameterValidationError``
    (not ``RequestError``) and a message naming the value and the parameter;
    it answers the same way for a well-formed worker id it does not know in
    SendBonus and CreateWorkerBlock.
    """

    wire_type = "ParameterValidationError"


def bad_parameter(name: str, value: object) -> ParameterValidationError:
    """MTurk's answer to a value that ``name`` cannot take."""
    shown = str(value)
    if len(shown) > 64:  # the message echoes the value: not all 64 KB of it
        shown = shown[:64] + "..."
    return ParameterValidationError(f'The value "{shown}" is not valid for the parameter {name}.')
