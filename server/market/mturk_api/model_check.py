"""Checking a request's parameters against the 2017-01-17 service model, before any operation runs.

botocore validates a request on the client (types, required members, minimum
lengths), but a client with ``parameter_validation=False``, another SDK or a
hand-made request reaches the server with anything JSON can hold. This is the
one place that holds such input to the model's shapes, so no operation ever
sees a list where a string belongs, a number no column can store or text that
is not Unicode: each is refused with a JSON 400 botocore parses.

* a wrong JSON type, a missing required member, a number outside the range of
  its type (Integer is 32-bit, Long 64-bit, as in MTurk's Java model) or a
  timestamp no calendar holds: ``RequestError``
  (``AWS.MechanicalTurk.InvalidParameterValue``);
* a string that breaks its shape's pattern or length (ids such as
  ``WorkerId``, ``HITId``), or that holds a lone surrogate or a NUL character:
  ``ParameterValidationError``, as MTurk answers.

Members the model does not know are ignored, as AWS services ignore them.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

from botocore.loaders import Loader
from botocore.model import ListShape, ServiceModel, Shape, StructureShape

from hits.market.errors import bad_parameter, invalid

SERVICE = "mturk"
#: The ranges of the model's integer types (MTurk's own model is Java: int and long).
INTEGER_RANGES = {"integer": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}
#: Epoch seconds a timestamp may take: 1970-01-01 to the last second of year 9999.
TIMESTAMP_RANGE = (0, 253_402_300_799)
#: Shapes whose pattern and length are left to the domain's stricter check and message (money, locales).
DOMAIN_CHECKED_SHAPES = {"CurrencyAmount", "CountryParameters"}


@cache
def service_model() -> ServiceModel:
    """MTurk's service model as botocore ships it (read once, on first use)."""
    return ServiceModel(Loader().load_service_model(SERVICE, "service-2"), service_name=SERVICE)


@cache
def _pattern(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def check_request(operation: str, params: dict[str, Any]) -> None:
    """Raise a ``RequestError`` unless ``params`` fit the input shape of ``operation``."""
    shape = service_model().operation_model(operation).input_shape
    if shape is not None:
        _structure(shape, params, operation)


def _check(shape: Shape, value: Any, name: str) -> None:
    kind = shape.type_name
    if isinstance(shape, StructureShape):
        _structure(shape, value, name)
    elif isinstance(shape, ListShape):
        if not isinstance(value, list):
            raise invalid(f"{name} must be a list.")
        for item in value:
            _check(shape.member, item, name)
    elif kind == "string":
        _string(shape, value, name)
    elif kind in INTEGER_RANGES:
        _integer(shape, value, name)
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise invalid(f"{name} must be true or false.")
    elif kind == "timestamp":
        _timestamp(value, name)
    else:  # the MTurk model has no other kinds; a new one must be thought about, not passed
        raise invalid(f"{name} has a type this service does not take.")


def _structure(shape: StructureShape, value: Any, name: str) -> None:
    if not isinstance(value, dict):
        raise invalid(f"{name} must be a structure.")
    for member in shape.required_members:
        if value.get(member) is None:
            raise invalid(f"{member} is required.")
    for member, member_shape in shape.members.items():
        item = value.get(member)
        if item is not None:  # JSON null is how some clients leave a member out
            _check(member_shape, item, member)


def _string(shape: Shape, value: Any, name: str) -> None:
    if not isinstance(value, str):
        raise invalid(f"{name} must be a string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (\ud800) survives json.loads, not a database
        raise bad_parameter(name, value.encode("utf-8", "backslashreplace").decode()) from exc
    if "\x00" in value:  # valid JSON and UTF-8, but no XML document or PostgreSQL text holds it
        raise bad_parameter(name, value.replace("\x00", "\\u0000"))
    meta = shape.metadata
    if "enum" in meta and value not in meta["enum"]:
        raise invalid(f"{name} must be one of {', '.join(meta['enum'])}; got {value!r}.")
    if shape.name in DOMAIN_CHECKED_SHAPES:
        return
    too_short = "min" in meta and len(value) < meta["min"]
    too_long = "max" in meta and len(value) > meta["max"]
    if too_short or too_long or ("pattern" in meta and not _pattern(meta["pattern"]).fullmatch(value)):
        raise bad_parameter(name, value)


def _integer(shape: Shape, value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid(f"{name} must be an integer; got {str(value)[:64]}.")
    low, high = INTEGER_RANGES[shape.type_name]
    low, high = shape.metadata.get("min", low), shape.metadata.get("max", high)
    if not low <= value <= high:
        raise invalid(f"{name} must be between {low} and {high}.")


def _timestamp(value: Any, name: str) -> None:
    # botocore sends epoch seconds; an ISO 8601 string is read by the operation (it cannot overflow).
    if isinstance(value, str):
        return
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise invalid(f"{name} must be a timestamp.")
    low, high = TIMESTAMP_RANGE
    if not (math.isfinite(value) and low <= value <= high):
        raise invalid(f"{name} must be a time between 1970 and 9999 (epoch seconds {low} to {high}).")
