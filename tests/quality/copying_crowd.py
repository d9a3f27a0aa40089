"""Simulated pairs of workers on shared rating items, for the copying test's unit tests and figures."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from demo.crowd import Profile
from demo.simulation.run import RATING_WEIGHTS
from demo.tasks.rating import rate
from hits.requester.quality.copying import agreement_p_value
from hits.requester.quality.policy import GoldRecord

ITEMS_PER_HIT, GOLD_PER_HIT = 4, 2


@dataclass
class PairRun:
    """Two workers' running record over shared HITs: identical answers of shared items, and gold."""

    shared: int = 0
    identical: int = 0
    gold_first: GoldRecord = GoldRecord(0, 0)
    gold_second: GoldRecord = GoldRecord(0, 0)

    def p_value(self) -> float:
        return agreement_p_value(self.identical, self.shared, self.gold_first, self.gold_second)


def _graded(record: GoldRecord, right: bool) -> GoldRecord:
    return GoldRecord(record.correct + right, record.total + 1)


def pair_run(first: float, second: float, hits: int, seed: int, *, copied: float = 0.0) -> Iterator[PairRun]:
    """Two workers rating the same ``hits`` HITs; the record after each HIT.

    ``first`` and ``second``: their accuracies (a slip lands on a neighbouring
    rating, so honest errors often coincide). ``copied``: the share of the
    second's answers copied from the first, right or wrong (1: a full copier).
    """
    rng = random.Random(seed)
    profiles = Profile("first", first), Profile("second", second)
    run = PairRun()
    for _ in range(hits):
        for slot in range(ITEMS_PER_HIT + GOLD_PER_HIT):
            truth = {"k": rng.choices((1, 2, 3, 4), RATING_WEIGHTS)[0]}
            a = rate(truth, "k", profiles[0], rng)
            b = a if rng.random() < copied else rate(truth, "k", profiles[1], rng)
            if slot < ITEMS_PER_HIT:
                run.shared += 1
                run.identical += a == b
            else:
                run.gold_first = _graded(run.gold_first, a == truth["k"])
                run.gold_second = _graded(run.gold_second, b == truth["k"])
        yield run
