"""Marks a worker drew (crowd-bounding-box and its kin, a template's boxes) ready to draw over a picture.

The evidence views' drawing layer: stored answers turned into boxes, points and
paths in the picture's pixels, each with its words (the drawing's text
equivalent). Staff only, like the rest of the evidence. Reads nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hits.requester.quality.evidence import IMAGE_SUFFIXES, Shown, shown_fields
from hits.requester.templates.batch.gold import CROWD_ANSWERS

#: Keys of a crowd annotation element's value (crowd-bounding-box and its kin) that hold marks.
MARK_KEYS = ("boundingBoxes", "keypoints", "polygons", "polylines", "lines")
#: No drawing shows more marks than this; a longer list is cut (the page says so).
MAX_MARKS = 300


@dataclass(frozen=True)
class Mark:
    """One mark on a picture, in the picture's pixels: a box, a point, or a path of vertices."""

    kind: str  # "box" | "point" | "path"
    label: str
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0
    vertices: tuple[tuple[float, float], ...] = ()
    closed: bool = False

    @property
    def words(self) -> str:
        """Where the mark lies, in words: the drawing's text equivalent."""
        name = self.label or "(no label)"
        if self.kind == "box":
            return f"{name}: left {_n(self.x)}, top {_n(self.y)}, {_n(self.width)} × {_n(self.height)}"
        if self.kind == "point":
            return f"{name}: at x {_n(self.x)}, y {_n(self.y)}"
        shape = "polygon" if self.closed else "line"
        return f"{name}: {shape} through " + ", ".join(f"({_n(x)}, {_n(y)})" for x, y in self.vertices)

    @property
    def svg_points(self) -> str:
        """The vertices as an SVG ``points`` attribute."""
        return " ".join(f"{x:g},{y:g}" for x, y in self.vertices)


@dataclass(frozen=True)
class Overlay:
    """One annotation element's marks on its picture: the worker's and (gold) the expected ones."""

    name: str
    given: list[Mark]
    wanted: list[Mark]
    width: float | None
    height: float | None


@dataclass(frozen=True)
class CrowdEvidence:
    """A crowd-element answer split into what is drawn and the other fields, shown as text."""

    overlays: list[Overlay]
    answer: list[Shown]
    expected: list[Shown]


def _n(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if abs(number) < 1e9 else None  # NaN and infinities fail the comparison too


def _label(value: Mapping[str, Any]) -> str:
    label = value.get("label", "")
    return label if isinstance(label, str) else json.dumps(label, ensure_ascii=False)


def _box(value: Any, label: str | None = None) -> Mark | None:
    """``{x|left, y|top, width, height}`` or ``[x, y, width, height]`` as a box, else None."""
    if isinstance(value, list | tuple) and len(value) == 4:
        value = dict(zip(("x", "y", "width", "height"), value, strict=True))
    if not isinstance(value, Mapping):
        return None
    x, y = _number(value.get("x", value.get("left"))), _number(value.get("y", value.get("top")))
    w, h = _number(value.get("width")), _number(value.get("height"))
    if x is None or y is None or w is None or h is None or w < 0 or h < 0:
        return None
    return Mark("box", _label(value) if label is None else label, x, y, w, h)


def _point(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, Mapping):
        return None
    x, y = _number(value.get("x")), _number(value.get("y"))
    return None if x is None or y is None else (x, y)


def box_marks(boxes: Any, label: str = "") -> list[Mark]:
    """Boxes as marks: a list (or one) of ``{x, y, width, height}`` mappings or ``{label, box: [x, y,
    w, h]}`` objects; what is not a box is left out."""
    listed = boxes if isinstance(boxes, list) else [boxes]
    marks = []
    for value in listed[:MAX_MARKS]:
        if isinstance(value, Mapping) and "box" in value:
            mark = _box(value["box"], _label(value))
        else:
            mark = _box(value, label or None)
        if mark is not None:
            marks.append(mark)
    return marks


def _element_marks(element: Mapping[str, Any]) -> list[Mark]:
    marks: list[Mark] = []
    for key in MARK_KEYS:
        listed = element.get(key)
        for value in listed[:MAX_MARKS] if isinstance(listed, list) else []:
            if key == "boundingBoxes":
                marks.extend(box_marks([value]))
            elif key == "keypoints" and (at := _point(value)) is not None:
                marks.append(Mark("point", _label(value), at[0], at[1]))
            elif isinstance(value, Mapping) and isinstance(value.get("vertices"), list):
                vertices = tuple(v for v in map(_point, value["vertices"][:MAX_MARKS]) if v is not None)
                if vertices:
                    marks.append(Mark("path", _label(value), vertices=vertices, closed=key == "polygons"))
    return marks[:MAX_MARKS]


def _json(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _first(value: Any) -> Any:
    """``taskAnswers`` holds a list of one object; the object."""
    return value[0] if isinstance(value, list) and value and isinstance(value[0], Mapping) else value


def crowd_tree(fields: Any) -> dict[str, Any]:
    """A crowd-form answer (or a gold row's cells) as one object: ``taskAnswers``' JSON and the
    dotted fields of ``answer-format="flatten-objects"`` joined, JSON texts parsed."""
    value = _first(_json(fields))
    tree: dict[str, Any] = {}
    if not isinstance(value, Mapping):
        return tree
    for key, inner in value.items():
        inner = _json(inner)
        if key == CROWD_ANSWERS and isinstance(_first(inner), Mapping):
            tree.update({str(k): _json(v) for k, v in _first(inner).items()})
            continue
        *path, last = str(key).split(".")
        here = tree
        for part in path:
            if not isinstance(here.get(part), dict):
                here[part] = {}
            here = here[part]
        here[last] = inner
    return tree


def _elements(tree: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for key, value in tree.items():
        if not isinstance(value, Mapping) or depth > 3:
            continue
        name = f"{prefix}.{key}" if prefix else str(key)
        if any(k in value for k in MARK_KEYS):
            found[name] = value
        else:
            found.update(_elements(value, name, depth + 1))
    return found


def _size(element: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    size = element.get("inputImageProperties") if element is not None else None
    if not isinstance(size, Mapping):
        return None, None
    width, height = _number(size.get("width")), _number(size.get("height"))
    return (width, height) if width and height and width > 0 and height > 0 else (None, None)


def _without(tree: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """``tree`` without the elements at the dotted ``names``."""
    out = dict(tree)
    for name in names:
        here, *rest = name.split(".")
        if not rest:
            out.pop(here, None)
        elif isinstance(out.get(here), Mapping):
            out[here] = _without(out[here], [".".join(rest)])
            if not out[here]:
                del out[here]
    return out


def crowd_evidence(answer: Any, expected: Any = None) -> CrowdEvidence:
    """The marks of crowd annotation elements in ``answer`` (and gold's ``expected``), paired by element
    name, with every other field of both as text; no overlays when neither holds marks."""
    given, wanted = crowd_tree(answer), crowd_tree(expected) if expected is not None else {}
    mine, gold = _elements(given), _elements(wanted)
    if not mine and not gold:
        return CrowdEvidence([], [], [])
    overlays = []
    for name in [*mine, *(g for g in gold if g not in mine)]:
        width, height = _size(mine.get(name))
        if width is None:
            width, height = _size(gold.get(name))
        overlays.append(
            Overlay(
                name,
                _element_marks(mine.get(name, {})),
                _element_marks(gold.get(name, {})),
                width,
                height,
            )
        )
    rest, rest_expected = _without(given, list(mine)), _without(wanted, list(gold))
    return CrowdEvidence(
        overlays,
        shown_fields(rest, "answer") if rest else [],
        shown_fields(rest_expected, "expected") if rest_expected else [],
    )


def picture_source(payload: Any) -> tuple[str, str]:
    """The picture a layout row names, as ``(kind, value)``: ``("data", url)`` for a data URL of a
    picture, ``("link", url)`` for a web address, ``("media", name)`` for a file name; ``("", "")``."""
    cells = payload.values() if isinstance(payload, Mapping) else []
    found = ("", "")
    for value in cells:
        if not isinstance(value, str):
            continue
        text = value.strip()
        lowered = text.lower().split("?", 1)[0]
        if lowered.startswith("data:image/"):
            return "data", text
        if lowered.endswith(IMAGE_SUFFIXES) and not found[0]:
            if lowered.startswith(("https://", "http://")):
                found = ("link", text)
            elif "://" not in lowered and not lowered.startswith(("/", "\\")) and ".." not in lowered:
                found = ("media", text)
    return found
