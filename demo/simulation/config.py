"""What the campaign simulation (:mod:`demo.simulation.run`) is asked to run, and what one run gave.

Requester side, product (``hitforge quality simulate``): kept apart from the
campaign's mechanics so that the settings and the report read on their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from demo.simulation.metrics import WorkerOutcome, flag_metrics
from hits.requester.files.campaign import COPYING_FALSE_ALARM, COPYING_MIN_SHARED, DEFAULT_SIGNALS, SignalName

DEFAULT_CROWD = {
    "diligent": 30,
    "careless": 10,
    "spammer": 8,
    "copycat": 4,
    "late_spammer": 2,
    "biased": 2,
    "copy_source": 1,
    "copier": 1,
}


@dataclass(frozen=True)
class SimulationConfig:
    """What to simulate; defaults are a 1,000-HIT campaign with the campaign file's default policy."""

    hits: int = 1000
    items_per_hit: int = 4
    gold_per_hit: int = 2
    assignments_per_hit: int = 3
    crowd: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_CROWD))
    gold_pool: int = 200
    threshold: float = 0.6
    confidence: float = 0.9
    min_gold: int = 3
    use_signals: bool = True
    #: The signals that may flag a worker gold leaves undecided (the campaign file's default).
    signals: tuple[SignalName, ...] = DEFAULT_SIGNALS
    #: Refit Dawid-Skene for the agreement signal after this many assignments (0: never).
    agreement_every: int = 750
    #: Which open HIT a worker takes: the oldest they have not done (the Accept button) or any.
    hit_order: Literal["queue", "random"] = "queue"
    #: "Caught" means flagged after at most this many gold answers.
    max_gold_to_flag: int = 10
    #: The recent-work test: the latest assignments holding this many gold answers (0: off).
    recent_gold: int = 20
    #: Assignments a late spammer does diligently before answering at random.
    turn_after: int = 10
    #: The copying-pair test (:mod:`hits.requester.quality.copying`): p-value bound and shared items needed.
    copying_false_alarm: float = COPYING_FALSE_ALARM
    copying_min_shared: int = COPYING_MIN_SHARED


@dataclass(frozen=True)
class SimulationReport:
    """One seed's outcome: every worker, and label accuracy against the truth."""

    seed: int
    config: SimulationConfig
    workers: list[WorkerOutcome]
    majority_vote_accuracy: float
    dawid_skene_accuracy: float
    items: int

    def metrics(self) -> dict[str, float]:
        """The headline figures of this run (see :func:`flag_metrics`)."""
        return {
            **flag_metrics(self.workers, max_gold=self.config.max_gold_to_flag),
            "majority_vote_accuracy": self.majority_vote_accuracy,
            "dawid_skene_accuracy": self.dawid_skene_accuracy,
        }
