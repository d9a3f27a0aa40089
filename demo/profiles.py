"""Bot profiles: how a simulated worker answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Strategy = Literal["truth", "random", "majority"]


@dataclass(frozen=True)
class Profile:
    """How a bot answers: how often it is right, and how it errs otherwise.

    ``truth``: the true answer with probability ``accuracy``, else a near miss.
    ``random``: uniformly at random, without looking (a spammer).
    ``majority``: always the answer most people give to such items, without
    looking at the item (a copycat: agrees with the crowd's prior, not the item).
    """

    name: str
    accuracy: float
    strategy: Strategy = "truth"

    @property
    def random_answers(self) -> bool:
        return self.strategy == "random"


PROFILES = {
    "diligent": Profile("diligent", 0.95),
    "careless": Profile("careless", 0.65),
    "spammer": Profile("spammer", 0.0, "random"),
    "copycat": Profile("copycat", 0.0, "majority"),
}
