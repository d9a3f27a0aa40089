"""How often the simulation's workers answered alike (:mod:`demo.simulation.run`), for the copying test.

Kept apart from the campaign's mechanics: a tally of identical answers per
pair of workers, and the copying test of :mod:`hits.requester.quality.copying` on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hits.requester.quality.copying import agreement_p_value
from hits.requester.quality.policy import GoldRecord


class PairTally:
    """Per pair of workers: real items both answered (same HIT, same slot), and identical answers."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], list[int]] = {}
        self.partners: dict[str, set[str]] = {}

    def add(
        self, first: str, second: str, answers: Sequence[object], others: Sequence[object], real: list[int]
    ) -> None:
        """Two workers' answers to one HIT; ``real``: the positions of its real (not gold) items."""
        if first == second:
            return
        pair = self.counts.setdefault((min(first, second), max(first, second)), [0, 0])
        pair[0] += len(real)
        pair[1] += sum(answers[i] == others[i] for i in real)
        self.partners.setdefault(first, set()).add(second)
        self.partners.setdefault(second, set()).add(first)

    def suspicious(
        self, worker: str, gold: Callable[[str], GoldRecord], *, false_alarm: float, min_shared: int
    ) -> bool:
        """Whether a pair of ``worker``'s is suspicious.

        (:func:`hits.requester.quality.copying.agreement_p_value`)
        """
        for other in sorted(self.partners.get(worker, ())):
            shared, identical = self.counts[(min(worker, other), max(worker, other))]
            if shared < min_shared:
                continue
            if agreement_p_value(identical, shared, gold(worker), gold(other)) <= false_alarm:
                return True
        return False
