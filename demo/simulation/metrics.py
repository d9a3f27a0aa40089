"""What the campaign simulation (:mod:`demo.simulation.run`) measures: flags, their cost, behaviours.

Pure functions over the simulated workers' outcomes; split from the
simulation itself, which is the campaign's mechanics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from demo.simulation.config import SimulationReport

#: Profiles whose flags count as caught; careless workers look at the items and are not counted as bad.
BAD_PROFILES = ("spammer", "copycat")
#: Behaviours measured on their own (see :func:`behaviour_metrics`), not in the headline figures:
#: ``late_spammer`` answers as a diligent worker for ``SimulationConfig.turn_after`` assignments,
#: then at random; ``biased`` always gives the campaign's most common true label; a copying
#: pair is a ``copy_source`` (answering as a careless worker) and a ``copier`` who takes each
#: HIT right after it and gives the same answers, right or wrong.
BEHAVIOURS = ("late_spammer", "biased", "copy_source", "copier")
#: The profiles of a copying pair: every other worker flagged on copying is a false alarm.
COPYING_PAIR = ("copy_source", "copier")


@dataclass
class WorkerOutcome:
    """What happened to one simulated worker."""

    worker_id: str
    profile: str
    assignments: int = 0
    gold_correct: int = 0
    gold_total: int = 0
    flagged_at_gold: int | None = None
    flag_reason: str | None = None
    #: Whether the (first) flag rested on gold, which acts alone, or on the signals, which hold.
    flagged_by_gold: bool = False
    approved: int = 0
    rejected: int = 0
    held: int = 0
    #: A late spammer's gold answers when it turned (None: it never did, or another profile).
    turned_at_gold: int | None = None
    #: Of the assignments done after the turn: how many, and how many were approved.
    assignments_after_turn: int = 0
    approved_after_turn: int = 0

    @property
    def flagged(self) -> bool:
        return self.flagged_at_gold is not None


def flag_metrics(workers: Sequence[WorkerOutcome], *, max_gold: int) -> dict[str, float]:
    """Flag precision and recall for spammers and copycats, and the cost to honest workers.

    ``precision``: flagged bad workers over flagged bad and diligent workers
    (careless flags are reported apart: whether a worker at 0.65 against a 0.6
    threshold should go is the requester's call). ``strict_precision`` counts
    careless flags as false positives too. ``recall``: bad workers flagged
    after at most ``max_gold`` gold answers, over all bad workers.
    """
    bad = [w for w in workers if w.profile in BAD_PROFILES]
    flagged_bad = sum(w.flagged for w in bad)
    flagged_diligent = sum(w.flagged for w in workers if w.profile == "diligent")
    flagged_careless = sum(w.flagged for w in workers if w.profile == "careless")
    careless = sum(w.profile == "careless" for w in workers)
    diligent_assignments = sum(w.assignments for w in workers if w.profile == "diligent")
    diligent_rejected = sum(w.rejected for w in workers if w.profile == "diligent")
    diligent_held = sum(w.held for w in workers if w.profile == "diligent")
    careless_assignments = sum(w.assignments for w in workers if w.profile == "careless")
    caught = sum(w.flagged_at_gold is not None and w.flagged_at_gold <= max_gold for w in bad)
    # The copying test's false alarms: workers in no copying pair whose flag rests on it.
    unpaired = [w for w in workers if w.profile not in COPYING_PAIR]
    copying_false = sum("copying" in (w.flag_reason or "") for w in unpaired)
    return {
        "precision": flagged_bad / (flagged_bad + flagged_diligent)
        if flagged_bad + flagged_diligent
        else 1.0,
        "strict_precision": (
            flagged_bad / (flagged_bad + flagged_diligent + flagged_careless) if flagged_bad else 1.0
        ),
        "recall": caught / len(bad) if bad else 1.0,
        "careless_flagged": flagged_careless / careless if careless else 0.0,
        "diligent_rejected_share": diligent_rejected / diligent_assignments if diligent_assignments else 0.0,
        "diligent_held_share": diligent_held / diligent_assignments if diligent_assignments else 0.0,
        # What the grey zone costs careless workers' pay (their work is not bad, see above).
        "careless_rejected_share": _share(workers, "careless", "rejected", careless_assignments),
        "careless_held_share": _share(workers, "careless", "held", careless_assignments),
        "copying_false_flags": copying_false / len(unpaired) if unpaired else 0.0,
    }


def _share(workers: Sequence[WorkerOutcome], profile: str, outcome: str, assignments: int) -> float:
    """The share of a profile's assignments that ended ``outcome`` (rejected, held)."""
    return (
        sum(getattr(w, outcome) for w in workers if w.profile == profile) / assignments
        if assignments
        else 0.0
    )


@dataclass(frozen=True)
class BehaviourFigures:
    """How one behaviour fared over the runs given to :func:`behaviour_metrics`."""

    profile: str
    workers: int
    flagged: int
    #: Flagged after at most ``max_gold`` gold answers (a late spammer's: counted from its turn).
    caught: int
    #: Gold answers at the flag (a late spammer's: since its turn), over the flagged workers.
    gold_at_flag: tuple[int, ...]
    #: Late spammers flagged before they turned (a false alarm on their honest work).
    flagged_before_turn: int = 0
    #: Late spammers: assignments done after the turn, and how many of them were approved.
    assignments_after_turn: int = 0
    approved_after_turn: int = 0


def behaviour_metrics(workers: Sequence[WorkerOutcome], *, max_gold: int) -> dict[str, BehaviourFigures]:
    """Per behaviour of :data:`BEHAVIOURS` present: how often and how soon it was flagged."""
    out = {}
    for profile in BEHAVIOURS:
        group = [w for w in workers if w.profile == profile]
        if not group:
            continue
        at: list[int] = []
        before = 0
        for w in group:
            if w.flagged_at_gold is None:
                continue
            start = w.turned_at_gold if profile == "late_spammer" else 0
            if start is None or w.flagged_at_gold <= start:
                before += profile == "late_spammer"
                continue
            at.append(w.flagged_at_gold - start)
        out[profile] = BehaviourFigures(
            profile=profile,
            workers=len(group),
            flagged=sum(w.flagged for w in group),
            caught=sum(n <= max_gold for n in at),
            gold_at_flag=tuple(sorted(at)),
            flagged_before_turn=before,
            assignments_after_turn=sum(w.assignments_after_turn for w in group),
            approved_after_turn=sum(w.approved_after_turn for w in group),
        )
    return out


#: Metrics where a higher figure is worse.
COSTS = frozenset(
    {
        "careless_flagged",
        "careless_rejected_share",
        "careless_held_share",
        "diligent_rejected_share",
        "diligent_held_share",
        "copying_false_flags",
    }
)


@dataclass(frozen=True)
class Summary:
    """One metric over several runs."""

    #: Over every run's workers together (ratios of sums): the estimate of the rate itself.
    pooled: float
    mean: float
    #: The least favourable run: the minimum, or the maximum for a cost.
    worst: float
    values: tuple[float, ...]


def summarise(reports: Sequence[SimulationReport]) -> dict[str, Summary]:
    """Per metric: pooled, mean and worst over the runs, and each run's figure.

    Per run, precision and recall move in steps of one worker in twelve; the
    pooled figure counts every run's workers at once (label accuracies, whose
    runs all have the same number of items, pool to their mean).
    """
    rows = [r.metrics() for r in reports]
    max_gold = reports[0].config.max_gold_to_flag
    pooled = flag_metrics([w for r in reports for w in r.workers], max_gold=max_gold)
    out = {}
    for name in rows[0]:
        values = tuple(row[name] for row in rows)
        mean = sum(values) / len(values)
        worst = max(values) if name in COSTS else min(values)
        out[name] = Summary(pooled.get(name, mean), mean, worst, values)
    return out
