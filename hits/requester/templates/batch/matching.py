"""How one gold field's answer is compared with the expected one: plain values and JSON structures.

A plain value (a posted form field, a number or text inside an answer) is
equal within the numeric tolerance when both are numbers; text is compared
exactly, or with whitespace collapsed and case folded on request; values
joined with ``|`` (checkbox groups) are compared as a set.

An expected value written as JSON (a ``Gold.*`` cell starting with ``{`` or
``[``, e.g. a ``<crowd-bounding-box>``'s value) is compared structurally with
the worker's value, parsed the same way:

- an object matches when every key the gold gives matches (keys the gold
  leaves out, such as ``inputImageProperties``, are not checked);
- a box (an object with numeric ``left``, ``top``, ``width``, ``height``, as
  crowd-bounding-box writes them) matches when its intersection over union
  with the expected box is at least the ``iou`` threshold (default 0.5, the
  usual detection mark), its other keys (``label``) matching as above;
- a point (an object with numeric ``x`` and ``y``: keypoints, vertices) is
  within ``distance`` pixels when a distance is set, else each coordinate
  within the numeric tolerance;
- a list of objects (boxes, keypoints, polygons, entities) is a set of
  annotations: it matches when the answer has as many and they pair one to
  one with the expected ones (a maximum matching, scipy's
  ``linear_sum_assignment``), whatever their order; an extra or a missing
  annotation fails the field;
- ``vertices`` are compared in drawing order, either direction, and for a
  polygon from any starting vertex; ``labels`` (the multi-select classifiers)
  are a set; any other list of plain values is compared in order.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: IoU at which an answered box counts as the expected one when no ``iou`` is set.
DEFAULT_IOU = 0.5
BOX_KEYS = ("left", "top", "width", "height")
_SPACES = re.compile(r"\s+")
#: Lists of plain values compared as sets: the multi-select classifiers' ``labels``.
_SET_LISTS = frozenset({"labels"})


class FieldTolerance(BaseModel):
    """One gold field's tolerance in the batch settings (``gold_field_tolerance``): a bare number
    is ``{number: N}``."""

    model_config = ConfigDict(extra="forbid")

    #: How far a number may be from the expected one (default: the batch's ``gold_tolerance``).
    number: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    #: Intersection over union at which a box matches (default 0.5).
    iou: float | None = Field(default=None, gt=0, le=1)
    #: Pixels a point (``x``, ``y``) may be from the expected one (default: per coordinate, ``number``).
    distance: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _bare_number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("give a number, or a mapping of number, iou and distance")
        if isinstance(value, int | float):
            return {"number": value}
        if isinstance(value, dict) and not value:
            raise ValueError("give at least one of number, iou and distance")
        return value


@dataclass(frozen=True)
class Tolerance:
    """The rules one field is compared by."""

    number: float = 0.0
    iou: float = DEFAULT_IOU
    distance: float | None = None
    normalise_text: bool = False


def tolerance_for(field: str, options: Mapping[str, Any]) -> Tolerance:
    """The field's rules: its ``gold_field_tolerance`` entry, else that of its nearest dotted
    parent (``box`` covers ``box.boundingBoxes``), over the batch-wide ``gold_tolerance``."""
    rules = options.get("gold_field_tolerance") or {}
    rule: Mapping[str, Any] = {}
    parts = field.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in rules:
            rule = rules[".".join(parts[:end])]
            break
    number = rule.get("number")
    iou = rule.get("iou")
    return Tolerance(
        number=float(options.get("gold_tolerance", 0.0) if number is None else number),
        iou=DEFAULT_IOU if iou is None else float(iou),
        distance=rule.get("distance"),
        normalise_text=bool(options.get("gold_normalise_text", False)),
    )


def load_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for JSON text, ``(False, None)`` for anything else.

    A worker writes the text: besides malformed JSON, nesting deep enough to exhaust the
    parser's recursion (``[[[[...``) is refused here, not raised into the grading batch.
    """
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def parse_structure(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a JSON object or array, else ``(False, None)``."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return False, None
    return load_json(stripped)


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _text(text: str, normalise: bool) -> str:
    return _SPACES.sub(" ", text).strip().casefold() if normalise else text


def values_match(given: str, expected: str, *, tolerance: float = 0.0, normalise_text: bool = False) -> bool:
    """Whether one plain value equals the expected one, by the rules of the module docstring."""
    wanted, got = _number(expected), _number(given)
    if wanted is not None and got is not None:
        # A relative slack too, so a tolerance of 0 still equates 0.1 + 0.2 and 0.3.
        return abs(got - wanted) <= tolerance + 1e-9 * max(1.0, abs(wanted))
    if _text(given, normalise_text) == _text(expected, normalise_text):
        return True
    if "|" in given or "|" in expected:
        return {_text(v, normalise_text) for v in given.split("|")} == {
            _text(v, normalise_text) for v in expected.split("|")
        }
    return False


def plain_text(value: Any) -> str:
    """A JSON scalar as the form would have posted it (``true``, ``3``, ``cat``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


#: Integers past this are not coordinates: ``math.isfinite`` and the float arithmetic of the
#: comparisons overflow on them (a worker can send ``1`` followed by 400 zeros).
_LARGEST_INTEGER = 2**53


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= _LARGEST_INTEGER
    return isinstance(value, float) and math.isfinite(value)


def _has_numbers(value: Mapping[str, Any], keys: Sequence[str]) -> bool:
    return all(_is_number(value.get(k)) for k in keys)


def box_iou(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Intersection over union of two crowd-bounding-box boxes (0 when either has no area)."""
    across = min(a["left"] + a["width"], b["left"] + b["width"]) - max(a["left"], b["left"])
    down = min(a["top"] + a["height"], b["top"] + b["height"]) - max(a["top"], b["top"])
    if across <= 0 or down <= 0:
        return 0.0
    inter = across * down
    union = a["width"] * a["height"] + b["width"] * b["height"] - inter
    return float(inter / union) if union > 0 else 0.0


def structures_match(given: Any, expected: Any, tol: Tolerance, key: str = "", closed: bool = False) -> bool:
    """Whether a worker's JSON value matches the expected one (module docstring); ``key`` names the
    value's key in its parent object, ``closed`` whether vertices belong to a polygon."""
    if isinstance(expected, dict):
        return isinstance(given, dict) and _objects_match(given, expected, tol, closed or key == "polygons")
    if isinstance(expected, list):
        if not isinstance(given, list) or len(given) != len(expected):
            return False
        if key == "vertices":
            return _paths_match(given, expected, tol, closed)
        if key in _SET_LISTS or any(isinstance(e, dict) for e in expected):
            return _one_to_one(given, expected, tol, closed or key == "polygons")
        return all(structures_match(g, e, tol) for g, e in zip(given, expected, strict=True))
    if isinstance(given, dict | list):
        return False
    return values_match(
        plain_text(given), plain_text(expected), tolerance=tol.number, normalise_text=tol.normalise_text
    )


def _objects_match(given: dict[str, Any], expected: dict[str, Any], tol: Tolerance, closed: bool) -> bool:
    checked: Sequence[str] = ()
    if _has_numbers(expected, BOX_KEYS):
        if not _has_numbers(given, BOX_KEYS) or box_iou(given, expected) < tol.iou - 1e-9:
            return False
        checked = BOX_KEYS
    elif tol.distance is not None and _has_numbers(expected, ("x", "y")):
        if not _has_numbers(given, ("x", "y")):
            return False
        if math.hypot(given["x"] - expected["x"], given["y"] - expected["y"]) > tol.distance + 1e-9:
            return False
        checked = ("x", "y")
    return all(
        k in given and structures_match(given[k], v, tol, k, closed)
        for k, v in expected.items()
        if k not in checked
    )


def _one_to_one(given: list[Any], expected: list[Any], tol: Tolerance, closed: bool) -> bool:
    """Whether the answers pair one to one with the expected ones (same lengths, checked before)."""
    if not expected:
        return True
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    fits = np.array(
        [[structures_match(g, e, tol, closed=closed) for e in expected] for g in given], dtype=float
    )
    rows, cols = linear_sum_assignment(fits, maximize=True)
    return bool(fits[rows, cols].sum() == len(expected))


def _paths_match(given: list[Any], expected: list[Any], tol: Tolerance, closed: bool) -> bool:
    """Vertices in order, either direction; a polygon's from any starting vertex."""
    starts = range(len(given)) if closed and given else range(1)
    for way in (given, given[::-1]):
        for start in starts:
            turned = way[start:] + way[:start]
            if all(structures_match(g, e, tol) for g, e in zip(turned, expected, strict=True)):
                return True
    return False
