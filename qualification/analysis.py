"""Classical item analysis over graded attempts.

Each attempt is a mapping item id -> answered correctly. Because every paper
is a sample, attempts hold different items; the rest-of-test score of an item
in an attempt is the share correct among that attempt's *other* items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TOO_EASY = 0.95
TOO_HARD = 0.2
#: Answers an item needs before it is called too easy, too hard or misleading: one answer (or
#: three) says nothing about an item.
MIN_FLAG_RESPONSES = 5
TOO_FEW = "too few answers to judge"


@dataclass(frozen=True)
class ItemStats:
    """One row of the item analysis. ``discrimination`` is None when undefined."""

    item_id: str
    responses: int
    p_value: float
    discrimination: float | None
    flags: tuple[str, ...]


def item_analysis(
    attempts: Sequence[Mapping[str, bool]],
    *,
    too_easy: float = TOO_EASY,
    too_hard: float = TOO_HARD,
    min_responses: int = 2,
    min_flag_responses: int = MIN_FLAG_RESPONSES,
) -> list[ItemStats]:
    """Per item: share correct, point-biserial correlation with the rest score, and flags.

    Flags: ``too easy`` (p > too_easy), ``too hard`` (p < too_hard),
    ``negative discrimination`` (correlation < 0), each only once the item has
    ``min_flag_responses`` answers; before that, ``too few answers to judge``.
    Rows are sorted by item id.
    """
    responses: dict[str, list[tuple[bool, float]]] = {}
    for attempt in attempts:
        n = len(attempt)
        right = sum(1 for ok in attempt.values() if ok)
        for item_id, ok in attempt.items():
            rest = (right - int(ok)) / (n - 1) if n > 1 else 0.0
            responses.setdefault(item_id, []).append((bool(ok), rest))
    rows: list[ItemStats] = []
    for item_id in sorted(responses):
        pairs = responses[item_id]
        p = sum(ok for ok, _ in pairs) / len(pairs)
        r: float | None = None
        if len(pairs) >= min_responses:
            xs = [int(ok) for ok, _ in pairs]
            ys = [rest for _, rest in pairs]
            if len(set(xs)) > 1 and len(set(ys)) > 1:
                # SciPy is imported here: the package imports this module, and SciPy takes about a
                # second to load, which every user of the package (``hitforge`` too) would pay.
                from scipy import stats

                value = float(stats.pointbiserialr(xs, ys).statistic)
                r = None if math.isnan(value) else value
        flags = []
        if len(pairs) < min_flag_responses:
            flags.append(TOO_FEW)
        elif p > too_easy:
            flags.append("too easy")
        if len(pairs) >= min_flag_responses and p < too_hard:
            flags.append("too hard")
        if len(pairs) >= min_flag_responses and r is not None and r < 0:
            flags.append("negative discrimination")
        rows.append(ItemStats(item_id, len(pairs), p, r, tuple(flags)))
    return rows
