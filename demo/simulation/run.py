"""A rating campaign simulated in process, to measure the quality model itself.

No server, no HTTP, no database: HITs, assignments and the crowd live in
memory, answers come from the bot profiles (:mod:`demo.profiles`) and
gold is graded by the real rating template. What this measures is the decision
model (Beta posterior on gold, plus the signals of :mod:`hits.requester.quality.signals`)
and the aggregation, not the marketplace or the pipeline's plumbing.

Modelling choices, stated because the figures depend on them:

* Every gold answer is graded in the order the worker gave it and the rule is
  applied after each one, so "flagged after at most n gold answers" is exact.
* Decisions follow the pipeline: an approve verdict approves the worker's
  pending assignments, a confident gold flag rejects them and stops the
  worker (a block); undecided work waits, and is held when the campaign ends.
  A flag resting on the signals alone holds the work for a person and does
  not stop the worker: their later work is held too while the signals still
  fire, until gold becomes confident either way. A rejected assignment's slot
  is offered again (as a requester extends a HIT), so every item keeps its
  labels; a held one is not (no reviewer acts within the simulation), and a
  flagged worker's held labels are left out of the aggregation, as the live
  pipeline leaves them out of the results.
* Only the signals the campaign default enables are consulted
  (``SimulationConfig.signals``), as in the live pipeline. Agreement with the
  other workers' majority is measured afresh at every judgement, from the
  labels given so far; the Dawid-Skene estimate is refitted every
  ``agreement_every`` assignments (a fit is too slow to repeat per answer).
* Workers take the oldest open HIT they have not done, as the worker site's
  Accept button hands them out (``hit_order="random"``: any open HIT), so a
  HIT's assignments are done at about the same time, as on a marketplace.
* Work time is an assumption, not data: each worker has a typical seconds per
  item drawn around their profile's (below), varying per assignment.
"""

from __future__ import annotations

import bisect
import math
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from demo.profiles import PROFILES
from demo.simulation.config import SimulationConfig, SimulationReport
from demo.simulation.metrics import (
    BAD_PROFILES,
    BEHAVIOURS,
    COSTS,
    BehaviourFigures,
    Summary,
    WorkerOutcome,
    behaviour_metrics,
    flag_metrics,
    summarise,
)
from demo.simulation.pairs import PairTally
from demo.tasks.rating import rate
from hits.requester.quality.aggregation import aggregate_frame
from hits.requester.quality.policy import (
    GoldRecord,
    Verdict,
    held_back,
    judge_recent,
    judge_worker,
    recent_window,
)
from hits.requester.quality.signals import (
    agreement_signals,
    agrees_with_others,
    combined_verdict,
    majority_agreement_signal,
    speed_signal,
    straightline_signal,
)
from hits.requester.templates import get_template

#: True ratings skew high, as in real description data: few sentences are entirely wrong.
RATING_WEIGHTS = (0.10, 0.20, 0.35, 0.35)
#: Typical seconds per item by profile (an assumption; see the module docstring).
SECONDS_PER_ITEM = {
    "diligent": 6.0,
    "careless": 3.5,
    "spammer": 1.2,
    "copycat": 1.5,
    "late_spammer": 6.0,
    "biased": 1.5,
    "copy_source": 3.5,
    "copier": 1.0,
}


@dataclass
class _Worker:
    outcome: WorkerOutcome
    seconds_per_item: float
    answers: list[Any] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    #: The real items this worker labelled, with their answer.
    labelled: list[tuple[str, int]] = field(default_factory=list)
    #: Dawid-Skene's verdict at the last refit.
    dawid_skene_suspicious: bool = False
    #: The majority-agreement verdict of the current assignment (None: not measured yet).
    majority_suspicious: bool | None = None
    #: (correct, total) gold of each assignment, oldest first (the recent-work window's data).
    gold_by_assignment: list[tuple[int, int]] = field(default_factory=list)
    #: Answers by HIT (what a copier copies).
    answers_by_hit: dict[int, list[int]] = field(default_factory=dict)
    #: Whether a pair of this worker's looks like copying, as of the current assignment (None: not yet).
    copying_suspicious: bool | None = None


@dataclass
class _Assignment:
    worker: str
    hit: int
    answers: list[int]
    status: str = "pending"


class _Campaign:
    """The simulation's mutable state; :func:`run_simulation` is the way in."""

    def __init__(self, config: SimulationConfig, seed: int) -> None:
        self.config, self.rng = config, random.Random(seed)
        self.template = get_template("rating")
        self.options = {"gold_tolerance": 0}
        ratings = (1, 2, 3, 4)
        self.truth = {
            f"item-{i:06d}": r
            for i, r in enumerate(
                self.rng.choices(ratings, RATING_WEIGHTS, k=config.hits * config.items_per_hit)
            )
        }
        self.gold = {
            f"gold-{i:04d}": r
            for i, r in enumerate(self.rng.choices(ratings, RATING_WEIGHTS, k=config.gold_pool))
        }
        #: The label a biased worker always gives: the campaign's most common true one.
        self.mode = Counter(self.truth.values()).most_common(1)[0][0]
        self.layout = [self._layout(h) for h in range(config.hits)]
        self.open_slots = [config.assignments_per_hit] * config.hits
        self.open_hits = list(range(config.hits))
        self.workers: dict[str, _Worker] = {}
        for profile, count in config.crowd.items():
            for n in range(count):
                worker_id = f"{profile}-{n:02d}"
                typical = SECONDS_PER_ITEM[profile] * math.exp(self.rng.gauss(0, 0.25))
                self.workers[worker_id] = _Worker(WorkerOutcome(worker_id, profile), typical)
        self.assignments: list[_Assignment] = []
        self.all_times: list[float] = []  # kept sorted: the crowd's median in O(1)
        #: Per real item: (worker, answer, assignment index) of every label given.
        self.item_labels: dict[str, list[tuple[str, int, int]]] = {}
        #: A copying pair: the source's id -> its copier, and back.
        self.copier_of = {
            f"copy_source-{n:02d}": self.workers[f"copier-{n:02d}"]
            for n in range(min(config.crowd.get("copy_source", 0), config.crowd.get("copier", 0)))
        }
        self.source_of = {c.outcome.worker_id: s for s, c in self.copier_of.items()}
        #: Assignments a late spammer did after its turn.
        self.after_turn: set[int] = set()
        #: How often each pair of workers answered alike, and the assignments of each HIT.
        self.pairs = PairTally()
        self.hit_assignments: dict[int, list[int]] = {}

    def _layout(self, hit: int) -> list[str]:
        """Item keys of one HIT with gold at random positions (gold never repeats within a HIT)."""
        k, g = self.config.items_per_hit, self.config.gold_per_hit
        keys = [f"item-{hit * k + i:06d}" for i in range(k)]
        keys += self.rng.sample(sorted(self.gold), g)
        self.rng.shuffle(keys)
        return keys

    def _pick_hit(self, worker: _Worker) -> int | None:
        if self.config.hit_order == "queue":  # open_hits is kept sorted: the oldest first
            return next((h for h in self.open_hits if h not in worker.done), None)
        for _ in range(20):
            hit = self.rng.choice(self.open_hits)
            if hit not in worker.done:
                return hit
        eligible = [h for h in self.open_hits if h not in worker.done]
        return self.rng.choice(eligible) if eligible else None

    def _take(self, hit: int) -> None:
        self.open_slots[hit] -= 1
        if self.open_slots[hit] == 0:
            self.open_hits.remove(hit)

    def _reopen(self, hit: int) -> None:
        if self.open_slots[hit] == 0:
            bisect.insort(self.open_hits, hit)
        self.open_slots[hit] += 1

    def run(self) -> None:
        # A copier never picks a HIT itself: it takes each HIT its source takes, right after it.
        active = sorted(w for w in self.workers if w not in self.source_of)
        done_assignments = 0
        every = self.config.agreement_every
        while self.open_hits and active:
            worker_id = self.rng.choice(active)
            worker = self.workers[worker_id]
            hit = self._pick_hit(worker)
            if hit is None:
                active.remove(worker_id)
                continue
            self._work(worker, hit)
            done_assignments += 1
            if self.config.use_signals and every and done_assignments % every == 0:
                self._refresh_agreement()
            if worker.outcome.flagged_by_gold:
                active.remove(worker_id)
            copier = self.copier_of.get(worker_id)
            if (
                copier is not None
                and not copier.outcome.flagged_by_gold
                and self.open_slots[hit] > 0
                and hit not in copier.done
            ):
                self._work(copier, hit)
                done_assignments += 1
                if self.config.use_signals and every and done_assignments % every == 0:
                    self._refresh_agreement()
        for worker in self.workers.values():
            for index in worker.pending:
                self.assignments[index].status = "held"
                worker.outcome.held += 1
            worker.pending.clear()

    def _answers(self, worker: _Worker, hit: int) -> list[int]:
        """The worker's answers to a HIT's items, by its behaviour."""
        keys, name = self.layout[hit], worker.outcome.profile
        if name == "copier":
            return list(self.workers[self.source_of[worker.outcome.worker_id]].answers_by_hit[hit])
        if name == "biased":
            return [self.mode] * len(keys)
        if name == "late_spammer":
            turned = worker.outcome.assignments >= self.config.turn_after
            profile = PROFILES["spammer" if turned else "diligent"]
        else:
            profile = PROFILES["careless" if name == "copy_source" else name]
        return [rate(self._truth_of(key), key, profile, self.rng) for key in keys]

    def _work(self, worker: _Worker, hit: int) -> None:
        keys = self.layout[hit]
        outcome = worker.outcome
        if outcome.profile == "late_spammer" and outcome.assignments == self.config.turn_after:
            outcome.turned_at_gold = outcome.gold_total
        answers = self._answers(worker, hit)
        worker.answers_by_hit[hit] = answers
        self._take(hit)
        worker.done.add(hit)
        index = len(self.assignments)
        real = [i for i, key in enumerate(keys) if key not in self.gold]
        for other in self.hit_assignments.setdefault(hit, []):
            earlier = self.assignments[other]
            self.pairs.add(outcome.worker_id, earlier.worker, answers, earlier.answers, real)
        self.hit_assignments[hit].append(index)
        self.assignments.append(_Assignment(worker.outcome.worker_id, hit, answers))
        if outcome.turned_at_gold is not None:
            self.after_turn.add(index)
            outcome.assignments_after_turn += 1
        worker.pending.append(index)
        worker.outcome.assignments += 1
        seconds = worker.seconds_per_item * math.exp(self.rng.gauss(0, 0.35))
        worker.times.append(seconds)
        bisect.insort(self.all_times, seconds)
        worker.answers.extend(answers)
        for key, answer in zip(keys, answers, strict=True):
            if key not in self.gold:
                worker.labelled.append((key, answer))
                self.item_labels.setdefault(key, []).append((worker.outcome.worker_id, answer, index))
        worker.majority_suspicious = worker.copying_suspicious = None
        verdict: Verdict = "undecided"
        by_gold = False
        current = (0, 0)  # this assignment's gold so far: (correct, total)
        for key, answer in zip(keys, answers, strict=True):
            if key not in self.gold:
                continue
            score = self.template.score_gold_item(answer, {"rating": self.gold[key]}, {}, self.options)
            passed = int(self.template.gold_passed(score, self.options))
            worker.outcome.gold_correct += passed
            worker.outcome.gold_total += 1
            current = (current[0] + passed, current[1] + 1)
            verdict, by_gold = self._judge(worker, current)
            if by_gold:
                break
        worker.gold_by_assignment.append(current)
        self._apply(worker, verdict, by_gold)

    def _truth_of(self, key: str) -> dict[str, Any]:
        # rate() looks the key up in a mapping; a one-entry mapping avoids merging the two tables.
        return {key: self.gold[key] if key in self.gold else self.truth[key]}

    def _suspicious(self, worker: _Worker) -> list[str]:
        crowd_median = self.all_times[len(self.all_times) // 2] if self.all_times else None
        found = [speed_signal(worker.times, crowd_median), straightline_signal(worker.answers)]
        names = [s.name for s in found if s.suspicious]
        if "agreement" in self.config.signals and (
            worker.dawid_skene_suspicious or self._majority_suspicious(worker)
        ):
            names.append("agreement")
        return [name for name in names if name in self.config.signals]

    def _counts(self, assignment: _Assignment) -> bool:
        """Whether an assignment's labels count, as the live pipeline's do (not rejected or flag-held)."""
        return assignment.status != "rejected" and not (
            assignment.status == "held" and self.workers[assignment.worker].outcome.flagged
        )

    def _majority_suspicious(self, worker: _Worker) -> bool:
        """Agreement with the others' majority on the worker's items so far (measured once per assignment)."""
        if worker.majority_suspicious is None:
            agreed = compared = 0
            me = worker.outcome.worker_id
            for key, answer in worker.labelled:
                others = Counter(
                    label
                    for other, label, index in self.item_labels[key]
                    if other != me and self._counts(self.assignments[index])
                )
                agrees = agrees_with_others(answer, others)
                if agrees is not None:
                    agreed, compared = agreed + agrees, compared + 1
            worker.majority_suspicious = majority_agreement_signal(
                agreed, compared, confidence=self.config.confidence
            ).suspicious
        return worker.majority_suspicious

    def _copying_suspicious(self, worker: _Worker) -> bool:
        """Whether any pair of the worker's looks like copying (measured once per assignment)."""
        if "copying" not in self.config.signals:
            return False
        if worker.copying_suspicious is None:
            worker.copying_suspicious = self.pairs.suspicious(
                worker.outcome.worker_id,
                lambda w: GoldRecord(
                    self.workers[w].outcome.gold_correct, self.workers[w].outcome.gold_total
                ),
                false_alarm=self.config.copying_false_alarm,
                min_shared=self.config.copying_min_shared,
            )
        return worker.copying_suspicious

    def _judge(self, worker: _Worker, current: tuple[int, int]) -> tuple[Verdict, bool]:
        """The verdict after the latest gold answer, and whether gold alone made it a flag.

        ``current``: the gold of the assignment being graded, so far (the recent window's newest part).
        """
        config, outcome = self.config, worker.outcome
        gold = judge_worker(
            GoldRecord(outcome.gold_correct, outcome.gold_total),
            threshold=config.threshold,
            confidence=config.confidence,
            min_gold=config.min_gold,
        )
        history = [*worker.gold_by_assignment, current]
        recent = recent_window(history, config.recent_gold)
        # The worker's undecided work is the latest assignments (a decision settles all of it).
        waiting = len(worker.pending)
        undecided = [False] * (len(history) - waiting) + [True] * waiting
        held = held_back(history, undecided, config.recent_gold, config.threshold) if recent else None
        gold = judge_recent(gold, recent, threshold=config.threshold, confidence=config.confidence, held=held)
        verdict = gold.verdict
        suspicious: list[str] = []
        if config.use_signals and verdict != "flag" and self._copying_suspicious(worker):
            # Copying is looked for whatever gold says: a pair copying a good worker passes gold.
            verdict, suspicious = "flag", ["copying"]
        elif config.use_signals and verdict == "undecided":
            suspicious = self._suspicious(worker)
            verdict = combined_verdict(
                gold, suspicious, gold_total=outcome.gold_total, min_gold=config.min_gold
            )
        by_gold = gold.verdict == "flag"
        if verdict == "flag" and not outcome.flagged:
            # The first flag is the one measured ("flagged after n gold answers"), and its reason.
            outcome.flagged_at_gold = outcome.gold_total
            if by_gold:
                outcome.flag_reason = "recent gold" if gold.evidence.get("flagged_on") else "gold"
            else:
                outcome.flag_reason = "+".join(suspicious)
        outcome.flagged_by_gold = outcome.flagged_by_gold or by_gold
        return verdict, by_gold

    def _apply(self, worker: _Worker, verdict: Verdict, by_gold: bool) -> None:
        if verdict == "undecided":
            return
        for index in worker.pending:
            assignment = self.assignments[index]
            if verdict == "approve":
                assignment.status = "approved"
                worker.outcome.approved += 1
                worker.outcome.approved_after_turn += index in self.after_turn
            elif by_gold:
                assignment.status = "rejected"
                worker.outcome.rejected += 1
                self._reopen(assignment.hit)
            else:  # flagged on signals: a person decides, outside the simulation
                assignment.status = "held"
                worker.outcome.held += 1
        worker.pending.clear()

    def _refresh_agreement(self) -> None:
        signals = agreement_signals(self.labels(include_rejected=True), confidence=self.config.confidence)
        for worker_id, signal in signals.items():
            self.workers[worker_id].dawid_skene_suspicious = signal.suspicious

    def labels(self, *, include_rejected: bool = False) -> pd.DataFrame:
        """Every real item's labels as a (task, worker, label) frame.

        Without ``include_rejected``, as the results are: rejected work and the
        held work of flagged workers are left out.
        """
        rows = []
        for a in self.assignments:
            if not include_rejected and not self._counts(a):
                continue
            for key, answer in zip(self.layout[a.hit], a.answers, strict=True):
                if key not in self.gold:
                    rows.append((key, a.worker, answer))
        return pd.DataFrame(rows, columns=["task", "worker", "label"])


def label_accuracy(frame: pd.DataFrame, truth: Mapping[str, int], method: str) -> float:
    """Share of all items whose aggregated label equals the truth (an unlabelled item counts as wrong)."""
    labels = {a.item_id: a.label for a in aggregate_frame(frame, method)}
    return sum(labels.get(item) == rating for item, rating in truth.items()) / len(truth)


def run_simulation(config: SimulationConfig | None = None, seed: int = 1) -> SimulationReport:
    """Simulate one campaign with ``seed`` and measure flags and label accuracy."""
    config = config or SimulationConfig()
    campaign = _Campaign(config, seed)
    campaign.run()
    accepted = campaign.labels()
    return SimulationReport(
        seed=seed,
        config=config,
        workers=[w.outcome for w in campaign.workers.values()],
        majority_vote_accuracy=label_accuracy(accepted, campaign.truth, "majority_vote"),
        dawid_skene_accuracy=label_accuracy(accepted, campaign.truth, "dawid_skene"),
        items=len(campaign.truth),
    )


__all__ = [
    "BAD_PROFILES",
    "BEHAVIOURS",
    "COSTS",
    "BehaviourFigures",
    "SimulationConfig",
    "SimulationReport",
    "Summary",
    "WorkerOutcome",
    "behaviour_metrics",
    "flag_metrics",
    "label_accuracy",
    "run_simulation",
    "summarise",
]
