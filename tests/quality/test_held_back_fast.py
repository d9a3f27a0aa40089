"""``held_back`` in one pass gives what judging every prefix with ``recent_window`` gave.

The one-pass version replaced a loop that built the recent window for each
undecided assignment's prefix (quadratic in a worker's record, and run for
every judged worker of every sync batch); the old loop is kept here as the
reference, and histories of every shape are compared (zero-gold assignments,
blocks closing early and late, undecided work anywhere).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from hits.requester.quality.policy import GoldRecord, held_back, leans_below, recent_window


def _reference(
    per_assignment: Sequence[tuple[int, int]], undecided: Sequence[bool], size: int, threshold: float
) -> GoldRecord | None:
    for start, (waiting, _) in enumerate(zip(undecided, per_assignment, strict=True)):
        if not waiting:
            continue
        recent = recent_window(per_assignment[: start + 1], size)
        if recent is not None and leans_below(recent, threshold):
            since = [g for g, w in zip(per_assignment[start:], undecided[start:], strict=True) if w]
            return GoldRecord(sum(c for c, _ in since), sum(t for _, t in since))
    return None


_assignment = st.integers(0, 4).flatmap(lambda total: st.tuples(st.integers(0, total), st.just(total)))


@settings(max_examples=400, deadline=None)
@given(
    history=st.lists(st.tuples(_assignment, st.booleans()), max_size=60),
    size=st.integers(0, 25),
    threshold=st.sampled_from([0.5, 0.6, 0.7, 0.8]),
)
def test_one_pass_gives_what_every_prefix_gave(
    history: list[tuple[tuple[int, int], bool]], size: int, threshold: float
) -> None:
    per_assignment = [g for g, _ in history]
    undecided = [w for _, w in history]
    assert held_back(per_assignment, undecided, size, threshold) == _reference(
        per_assignment, undecided, size, threshold
    )
