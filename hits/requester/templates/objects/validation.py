"""Server-side checks of a submitted object list, with one message per object and field.

The page's script keeps the list in a hidden field as JSON; anyone can post
anything there, so every part is checked here: the JSON itself, each
object's label, box and description, and (once the picture's size is known)
that each box lies inside its picture.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

LABEL_MAX = 80
DESCRIPTION_MIN = 10
DESCRIPTION_MAX = 1000
MAX_OBJECTS = 50
#: Smallest box side in pixels: anything thinner is a slip of the mouse, not an object.
MIN_SIZE = 4
#: Pixels a box may stick out of its image (rounding in annotation tools).
BOX_TOLERANCE = 1.0
#: Longest JSON accepted for one picture's list (50 objects with long descriptions fit easily).
RAW_MAX = 120_000


def _coordinate(value: Any) -> float | None:
    """A finite number (not a bool, not text), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _tidy(number: float) -> float | int:
    """Pixels to two decimals, whole numbers as integers (what the page sends)."""
    rounded = round(number, 2)
    return int(rounded) if rounded == int(rounded) else rounded


def box_problem(box: Sequence[Any], width: int | None = None, height: int | None = None) -> str | None:
    """What is wrong with ``[x, y, w, h]`` (inside a ``width`` x ``height`` picture when given), or None."""
    if not isinstance(box, list | tuple) or len(box) != 4:
        return "the box must be four numbers [x, y, width, height]"
    numbers = [_coordinate(v) for v in box]
    if any(n is None for n in numbers):
        return "the box must be four numbers [x, y, width, height]"
    x, y, w, h = (float(n) for n in numbers if n is not None)
    if w < MIN_SIZE or h < MIN_SIZE:
        return f"the box is {w:g} x {h:g} pixels; make it at least {MIN_SIZE} x {MIN_SIZE}"
    if x < -BOX_TOLERANCE or y < -BOX_TOLERANCE:
        return f"the box starts at ({x:g}, {y:g}), outside the picture"
    if width is None or height is None:
        return None
    if x + w > width + BOX_TOLERANCE or y + h > height + BOX_TOLERANCE:
        return f"the box ({x:g}, {y:g}, {w:g} x {h:g}) reaches outside the {width} x {height} picture"
    return None


def _name(n: int, obj: Mapping[str, Any]) -> str:
    label = str(obj.get("label", "")).strip()
    return f"Object {n} (\u201c{label[:30]}\u201d)" if label else f"Object {n}"


def parse_objects(raw: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """A picture's objects from the form's JSON, tidied; or the problems, one sentence each."""
    if raw is None or not raw.strip():
        return [], ["the list of objects is missing; reload the page and try again."]
    if len(raw) > RAW_MAX:
        return [], [f"the list of objects is too long ({len(raw)} characters); keep it under {RAW_MAX}."]
    try:
        given = json.loads(raw)
    except (ValueError, RecursionError):  # deep nesting exhausts the decoder's recursion, not memory
        return [], ["the list of objects is not readable (not JSON); reload the page and try again."]
    if not isinstance(given, list):
        return [], ["the list of objects is not a list; reload the page and try again."]
    if not given:
        return [], ["keep or add at least one object: every picture has something in it."]
    if len(given) > MAX_OBJECTS:
        return [], [f"{len(given)} objects is too many; keep at most {MAX_OBJECTS} (merge or delete some)."]
    objects: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, obj in enumerate(given, start=1):
        if not isinstance(obj, Mapping):
            problems.append(f"object {n} is not an object with a label, a box and a description.")
            continue
        own: list[str] = []
        label = obj.get("label")
        if not isinstance(label, str) or not label.strip():
            own.append("the label is empty; say what the object is")
        elif len(label.strip()) > LABEL_MAX:
            own.append(f"the label has {len(label.strip())} characters; keep it to {LABEL_MAX}")
        description = obj.get("description", "")
        if not isinstance(description, str):
            own.append("the description must be text")
            description = ""
        text = " ".join(description.split())
        if len(text) < DESCRIPTION_MIN:
            own.append(f"the description is too short; write at least {DESCRIPTION_MIN} characters")
        elif len(text) > DESCRIPTION_MAX:
            own.append(f"the description has {len(text)} characters; keep it to {DESCRIPTION_MAX}")
        box = obj.get("box")
        problem = (
            box_problem(box)
            if isinstance(box, list)
            else "the box must be four numbers [x, y, width, height]"
        )
        if problem:
            own.append(problem)
        extra = sorted(set(obj) - {"label", "box", "description"})
        if extra:
            own.append(f"unknown fields {', '.join(str(k)[:20] for k in extra)}")
        if own:
            problems.append(f"{_name(n, obj)}: " + "; ".join(own) + ".")
            continue
        assert isinstance(label, str) and isinstance(box, list)
        objects.append(
            {"label": " ".join(label.split()), "box": [_tidy(float(v)) for v in box], "description": text}
        )
    if not problems:
        seen: dict[tuple[str, tuple[float, ...]], int] = {}
        for n, obj in enumerate(objects, start=1):
            ident = (obj["label"].lower(), tuple(obj["box"]))
            if ident in seen:
                problems.append(f"Object {n} repeats object {seen[ident]} (same label and box); delete one.")
            seen.setdefault(ident, n)
    return ([] if problems else objects), problems


def object_problems(objects: Sequence[Mapping[str, Any]], width: int, height: int) -> list[str]:
    """Boxes that reach outside a ``width`` x ``height`` picture, one sentence per object."""
    problems = []
    for n, obj in enumerate(objects, start=1):
        problem = box_problem(obj["box"], width, height)
        if problem:
            problems.append(f"{_name(n, obj)}: {problem}.")
    return problems
