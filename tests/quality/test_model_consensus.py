"""The vectorised leave-one-out consensus gives the per-answer call's figures (issue 28's decision step)."""

from __future__ import annotations

import random
from collections.abc import Hashable

import pytest

from hits.requester.quality.model_consensus import leave_one_out
from hits.requester.quality.worker_model import consensus_voters, probability_right

PRIORS: dict[Hashable, float] = {1: 0.1, 2: 0.2, 3: 0.35, 4: 0.35}


def test_leave_one_out_matches_probability_right_with_and_without_copying_pairs() -> None:
    rng = random.Random(7)
    workers = [f"w{i}" for i in range(12)]
    accuracy = {w: rng.uniform(0.2, 0.95) for w in workers}
    pairs = {("w1", "w2")}

    def partners(a: str, b: str) -> bool:
        return (min(a, b), max(a, b)) in pairs

    items: dict[Hashable, list[tuple[str, Hashable]]] = {
        n: [(w, rng.randint(1, 4)) for w in rng.sample(workers, rng.randint(1, 4))] for n in range(300)
    }
    # Every voter's own answer, and an outsider's answer to an item it did not vote on.
    wanted = [(n, w, label) for n, votes in items.items() for w, label in votes]
    wanted += [(n, "outsider", 2) for n in range(0, 300, 7)]
    got = leave_one_out(items, wanted, lambda w: accuracy.get(w, 0.5), PRIORS, partners, {"w1", "w2"})
    assert any(p is None for p in got)  # a lone voter's item has no consensus
    assert sum(any(partners(a, b) for a, _ in v for b, _ in v) for v in items.values()) > 0
    for (n, worker, answer), p in zip(wanted, got, strict=True):
        others = consensus_voters(items[n], worker, partners)
        expected = probability_right(answer, [(label, accuracy.get(w, 0.5)) for w, label in others], PRIORS)
        if expected is None:
            assert p is None
        else:
            assert p == pytest.approx(expected, abs=1e-9)
