"""Boxes and object lists: overlap, matching against a key, and merging fragments.

A box is ``[x, y, w, h]`` in image pixels from the image's top left corner;
an object is a mapping with ``label``, ``box`` and ``description``. The page's
script (``server/static/objects/objects.js``) merges the same way
:func:`merge_objects` does, so the simulated crowd and the browser agree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Box = Sequence[float]

#: Default IoU at which an answered box counts as finding a key's box (the usual detection mark).
IOU_THRESHOLD = 0.5
_ARTICLE = re.compile(r"^(a|an|the)\s+")


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``[x, y, w, h]`` boxes (0 when either has no area)."""
    ax, ay, aw, ah = (float(v) for v in a)
    bx, by, bw, bh = (float(v) for v in b)
    across = min(ax + aw, bx + bw) - max(ax, bx)
    down = min(ay + ah, by + bh) - max(ay, by)
    if across <= 0 or down <= 0:
        return 0.0
    inter = across * down
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


def normal_label(label: str) -> str:
    """A label as compared: lower case, single spaces, no leading article ("The Red Dog" = "red dog")."""
    text = " ".join(str(label).lower().split())
    return _ARTICLE.sub("", text)


def labels_match(given: str, key: Mapping[str, Any]) -> bool:
    """Whether ``given`` names the key object: its label or one of its ``aliases``, compared normalised."""
    wanted = {normal_label(key["label"]), *(normal_label(a) for a in key.get("aliases", []) or [])}
    return normal_label(given) in wanted


@dataclass(frozen=True)
class Match:
    """How an answer's objects line up with a key's: one-to-one pairs, and the usual figures."""

    #: (answer index, key index, IoU) of each pair that counts: IoU at the threshold, labels agreeing.
    pairs: tuple[tuple[int, int, float], ...]
    answered: int
    expected: int

    @property
    def precision(self) -> float:
        """Share of the answer's objects that found a key object (1.0 for an empty answer to an empty key)."""
        return len(self.pairs) / self.answered if self.answered else float(self.expected == 0)

    @property
    def recall(self) -> float:
        """Share of the key's objects the answer found."""
        return len(self.pairs) / self.expected if self.expected else float(self.answered == 0)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (0 when both are 0)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def match_objects(
    answer: Sequence[Mapping[str, Any]],
    key: Sequence[Mapping[str, Any]],
    *,
    threshold: float = IOU_THRESHOLD,
    check_labels: bool = True,
) -> Match:
    """Pair answered objects with key objects one to one, as well as possible.

    The Hungarian method (scipy's ``linear_sum_assignment``) maximises, over
    all one-to-one pairings, the pairs that count, then their overlap: a pair
    counts when its IoU reaches ``threshold`` and, with ``check_labels``, the
    answered label names the key object (:func:`labels_match`). Weighting a
    counting pair by 1 + IoU (any other pair by 0) keeps a well-placed box with
    the wrong label from taking the place of a slightly worse one with the
    right label.
    """
    if not answer or not key:
        return Match((), len(answer), len(key))
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    weight = np.zeros((len(answer), len(key)))
    overlap = np.zeros_like(weight)
    for i, a in enumerate(answer):
        for j, k in enumerate(key):
            overlap[i, j] = iou(a["box"], k["box"])
            counts = overlap[i, j] >= threshold and (not check_labels or labels_match(str(a["label"]), k))
            weight[i, j] = 1.0 + overlap[i, j] if counts else 0.0
    rows, cols = linear_sum_assignment(weight, maximize=True)
    pairs = tuple(
        (int(i), int(j), round(float(overlap[i, j]), 4))
        for i, j in zip(rows, cols, strict=True)
        if weight[i, j] > 0
    )
    return Match(pairs, len(answer), len(key))


def union_box(boxes: Sequence[Box]) -> list[float]:
    """The smallest ``[x, y, w, h]`` box holding every one of ``boxes``."""
    left = min(float(b[0]) for b in boxes)
    top = min(float(b[1]) for b in boxes)
    right = max(float(b[0]) + float(b[2]) for b in boxes)
    bottom = max(float(b[1]) + float(b[3]) for b in boxes)
    return [left, top, right - left, bottom - top]


def merge_objects(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One object from fragments of it: the union box, the commonest label, every description once.

    Label: the one most fragments carry (compared normalised, spelt as first
    given); on a tie, the label of the largest fragment, since the biggest
    piece is most likely named for the whole. Descriptions: each distinct
    non-empty one, in the fragments' order, joined by a space, so nothing a
    worker or the seeder wrote is lost (the worker edits the result).
    """
    if not objects:
        raise ValueError("nothing to merge")
    counts = Counter(normal_label(o["label"]) for o in objects if str(o["label"]).strip())
    area = {id(o): float(o["box"][2]) * float(o["box"][3]) for o in objects}
    labelled = [o for o in objects if str(o["label"]).strip()]
    label = ""
    if labelled:
        best = max(counts.values())
        tied = [o for o in labelled if counts[normal_label(o["label"])] == best]
        label = str(max(tied, key=lambda o: area[id(o)])["label"]).strip()
    seen: set[str] = set()
    descriptions = []
    for o in objects:
        text = " ".join(str(o.get("description", "")).split())
        if text and text.lower() not in seen:
            seen.add(text.lower())
            descriptions.append(text)
    return {
        "label": label,
        "box": union_box([o["box"] for o in objects]),
        "description": " ".join(descriptions),
    }
