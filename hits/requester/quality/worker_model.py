"""One posterior per worker from all the evidence: gold, and agreement with the others on every other item.

Pure functions over plain data (no database, no clock), in the style of
:mod:`hits.requester.quality.policy`; callers read the records and apply the verdicts
(:mod:`hits.requester.quality.live_model` in the pipeline, the simulation in ``demo/``).

**The model** is the one-coin model of crowdsourcing: a worker is right with
probability ``q`` on any item, and when wrong gives any of the other
``classes - 1`` answers. Every answer the worker gave is evidence about ``q``:

* a graded **gold** answer is right or wrong: likelihood ``q`` or ``(1 - q) / (K - 1)``;
* an answer to an **ordinary item** is compared with a consensus estimated
  *without that worker*: the other workers' answers to the same item, each
  weighted by their own accuracy, with the campaign's label frequencies as
  the prior, give ``p``, the probability that the worker's answer is the true
  one (:func:`probability_right`). Its likelihood is
  ``p q + (1 - p) (1 - q) / (K - 1)``: when the others are reliable and
  agree, ``p`` is near 0 or 1 and the answer counts almost as a gold answer;
  when they are few, unreliable or split, it counts for little.

The posterior of ``q`` (uniform prior) is computed on a grid
(:data:`GRID`); the decision is the rule gold already used: **flag** when
P(q < threshold) >= confidence (after ``min_gold`` gold answers), **approve**
when P(q >= threshold) >= confidence, otherwise wait.

**Copying pairs** must not confirm each other: a worker's suspected copying
partners are left out of the consensus their answers are compared with, and
of any consensus where both partners answered only the first counts (one
voter, not two). Who is a partner is the caller's (the copying test's counts).

**A turn for the worse** is found on the same evidence by a CUSUM test
(:func:`turn_statistic`): each answer adds the log likelihood ratio of
"answering at random" against "answering as before" (the worker's gold
accuracy before it, at least :data:`TURN_MARGIN` above the threshold); the
running sum, floored at 0, crosses the level soon after a worker turns
(:data:`TURN_LEVEL`, about 7 gold answers' worth of evidence at random
against 0.85, early in a record; rising with the log of the record's length,
:data:`TURN_FALSE_ALARM`, so that a long honest record's chance streaks are
not taken for turns), and an honest worker's sum drifts down. A crossing is
a turn when the answers since the sum rose are, on their own, below the
threshold with the confidence asked for,
whether or not the earlier record had approved the worker. While the sum is
above :data:`HOLD_LEVEL` approvals wait; undecided work whose own evidence
leans below the threshold (:data:`PENDING_DOUBT`) waits too, and work done
since a doubt is paid only on its own confident evidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hits.requester.quality.policy import GoldRecord, WorkerVerdict

#: The accuracies the posterior is computed at (midpoints of 400 equal cells of [0, 1]).
GRID = (np.arange(400) + 0.5) / 400
_LOG_GRID = np.log(GRID)
#: The CUSUM level at which a turn is declared (log odds: about e^6.5 = 650 to 1 for the turn).
TURN_LEVEL = 6.5
#: The false-alarm budget of the turn test: a run of the CUSUM that started after ``k`` answers must
#: reach log(k / TURN_FALSE_ALARM) (and at least :data:`TURN_LEVEL`). Each start is a test of its own
#: (by Ville's inequality an honest worker's run from one start reaches log(1/a) with probability at
#: most a), and a long record has many starts: a fixed level takes chance streaks late in a long
#: diligent record for turns, where this keeps the whole record's false alarms at most
#: TURN_FALSE_ALARM x (1 + ln n) after n answers.
TURN_FALSE_ALARM = 0.01
#: The CUSUM level above which approvals wait (more than one wrong gold answer of a good worker's).
HOLD_LEVEL = 2.5
#: The CUSUM's "answering well" is the worker's gold accuracy so far, but at least this far above the
#: threshold: a worker with little gold yet has an estimate near 0.5, which would blunt the test
#: just when it is needed (an honest worker above about 0.53 still drifts
#: down at threshold 0.6).
TURN_MARGIN = 0.2
#: The CUSUM's "answering well" is a lower bound on the worker's gold accuracy (one-sided 75% Wilson
#: score bound, the lower quartile), not the estimate itself: the honest worker's likelihood ratios are a
#: supermartingale, and the level bounds their false alarms, only while q0 is at or below the worker's
#: true accuracy. The Laplace estimate overshoots it for every worker lucky on gold so far (about half
#: of them on a long record; the bound, clipped as used, for 18-39% of workers right 85-90% of the
#: time over 10-100 gold answers), and such a worker's few wrong answers in a row then read as a turn.
TURN_Q0_Z = 0.6745
#: The answers since the statistic rose must be below the threshold with at least this probability (or
#: the confidence asked for, if higher): every crossing is a test, so one test's bar is set high.
TURN_CONFIDENCE = 0.98
#: Undecided work is approved only when its own evidence puts the worker below the threshold with less
#: than this probability (a worker's first approval may otherwise take in the first work after a turn).
PENDING_DOUBT = 0.5
#: How far an answer's agreement counts, from 0 (not at all) to 1 (as the one-coin model says): the
#: model assumes every item equally hard and every error equally likely, which real items are not, so
#: its probability that an answer is right is drawn a fifth of the way back to chance.
AGREEMENT_WEIGHT = 0.8
#: A voter's accuracy in the others' consensus starts from chance (1/K) with this many gold answers'
#: worth of weight, and moves toward their gold record as it grows (:func:`voter_accuracy`).
VOTER_PRIOR_GOLD = 2.0


#: A pair of workers whose identical answers have a copying-test p-value at most this is one voter:
#: far looser than the copying signal's bound (a pair wrongly merged only loses one vote).
PARTNER_P = 0.01
#: Real items a pair must share before it may be merged into one voter.
PARTNER_MIN_SHARED = 8


def partner_record(first: GoldRecord, second: GoldRecord) -> GoldRecord:
    """The gold record both workers of a pair are taken to have when testing them as partners: the
    better one. Two good workers agree most, so an honest worker unlucky on gold who agrees with
    good ones is not taken for their copy; two random workers copying each other still are."""
    return max(first, second, key=lambda r: (r.correct + 1) / (r.total + 2))


def voter_accuracy(record: GoldRecord, classes: int) -> float:
    """How far a worker's answer counts in another worker's consensus: their gold accuracy, shrunk
    toward chance and never below it.

    The mean of a Beta prior centred on chance (1/K) with :data:`VOTER_PRIOR_GOLD` answers' weight,
    updated by the worker's gold: a voter with no gold yet says nothing (at chance a vote favours no
    answer), one with a little says a little. The Laplace estimate it replaces, (correct + 1) /
    (total + 2), started every voter at 1/2, above chance on any rating scale, so an always-wrong
    co-worker judged early counted against whoever disagreed with them. A record below chance
    counts as chance: a worker wrong on gold is taken for a guesser, not for someone who knows the
    answer and avoids it.
    """
    chance = 1 / max(2, classes)
    estimate = (record.correct + VOTER_PRIOR_GOLD * chance) / (record.total + VOTER_PRIOR_GOLD)
    return max(chance, estimate)


def consensus_voters(
    labels: Sequence[tuple[str, Hashable]], worker: str, partners: Callable[[str, str], bool]
) -> list[tuple[str, Hashable]]:
    """The labels that make an item's consensus for ``worker``: not the worker's, not its copying
    partners', and of two partners of each other only the first (one voter, not two)."""
    out: list[tuple[str, Hashable]] = []
    for other, label in labels:
        if other == worker or partners(worker, other) or any(partners(other, kept) for kept, _ in out):
            continue
        out.append((other, label))
    return out


@dataclass(frozen=True)
class Evidence:
    """One answer of a worker's: the probability it is right, and whether that is known (gold)."""

    p_right: float
    gold: bool


def probability_right(
    answer: Hashable,
    others: Sequence[tuple[Hashable, float]],
    priors: Mapping[Hashable, float],
) -> float | None:
    """P(``answer`` is the item's true answer | the other workers' answers), under the one-coin model.

    ``others``: (answer, accuracy) of each other worker who answered the item (the worker
    and their copying partners left out by the caller); ``priors``: the campaign's label
    frequencies (the classes; at least two). None when nobody else answered.
    """
    if not others:
        return None
    classes = max(2, len(priors))
    labels = list(priors)
    if answer not in priors:
        labels.append(answer)
    log_post = {label: math.log(max(priors.get(label, 0.0), 1e-6)) for label in labels}
    for label, accuracy in others:
        q = min(max(accuracy, 1e-3), 1 - 1e-3)
        right, wrong = math.log(q), math.log((1 - q) / (classes - 1))
        for candidate in labels:
            log_post[candidate] += right if candidate == label else wrong
    top = max(log_post.values())
    total = sum(math.exp(v - top) for v in log_post.values())
    chance = 1 / classes
    return chance + AGREEMENT_WEIGHT * (math.exp(log_post[answer] - top) / total - chance)


def log_likelihood(evidence: Sequence[Evidence], classes: int) -> np.ndarray:
    """The log likelihood of the worker's answers at each accuracy of :data:`GRID`."""
    if not evidence:
        return np.zeros_like(GRID)
    # Answers with the same p (every gold answer is 0 or 1) share a row: computed once, counted n times.
    p, n = np.unique(np.fromiter((e.p_right for e in evidence), float, len(evidence)), return_counts=True)
    wrong = (1 - GRID) / (max(2, classes) - 1)
    # p q + (1 - p)(1 - q)/(K - 1) for every answer at every grid point, summed in logs.
    return n @ np.log(np.outer(p, GRID - wrong) + wrong)


@dataclass(frozen=True)
class Posterior:
    """A worker's accuracy posterior on :data:`GRID` (normalised weights)."""

    weights: np.ndarray

    @classmethod
    def of(cls, evidence: Sequence[Evidence], classes: int) -> Posterior:
        return cls.from_log(log_likelihood(evidence, classes))

    @classmethod
    def from_log(cls, log_w: np.ndarray) -> Posterior:
        """The posterior of a log likelihood on :data:`GRID` (uniform prior)."""
        w = np.exp(log_w - log_w.max())
        return cls(w / w.sum())

    def p_below(self, threshold: float) -> float:
        """P(accuracy < threshold)."""
        return float(self.weights[threshold > GRID].sum())

    def mean(self) -> float:
        return float(self.weights @ GRID)

    def interval(self, mass: float = 0.9) -> tuple[float, float]:
        """The central credible interval holding ``mass``."""
        cdf = np.cumsum(self.weights)
        tail = (1 - mass) / 2
        last = len(GRID) - 1
        low, high = int(np.searchsorted(cdf, tail)), int(np.searchsorted(cdf, 1 - tail))
        return float(GRID[min(last, low)]), float(GRID[min(last, high)])


def turn_alternatives(threshold: float, classes: int, accuracy: float) -> tuple[float, float]:
    """(q0, q1): the accuracies the CUSUM test tells apart, "as the worker answers" and "at random".

    q0 is the worker's estimated accuracy, kept between :data:`TURN_MARGIN` above the threshold and 0.95 (a
    worker near the threshold is tested less sharply); q1 chance (1/K), or for two classes,
    where chance is close to any threshold, 0.2 below the threshold.
    """
    good = min(0.95, max(threshold + TURN_MARGIN, accuracy))
    chance = 1 / max(2, classes)
    bad = chance if chance <= threshold - 0.15 else max(0.05, threshold - 0.2)
    return good, bad


def _wilson_lower(right: np.ndarray, total: np.ndarray, z: float) -> np.ndarray:
    """The Wilson score lower bound on a rate, ``right`` of ``total`` (0 where ``total`` is 0)."""
    n = np.maximum(total, 1).astype(float)
    rate = right / n
    centre = rate + z * z / (2 * n)
    spread = z * np.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return np.where(total > 0, (centre - spread) / (1 + z * z / n), 0.0)


def turn_level_after(start: int, base: float = TURN_LEVEL) -> float:
    """The level a CUSUM run that started after ``start`` answers must reach to be a turn (see
    :data:`TURN_FALSE_ALARM`): ``base`` early in a record, rising with the log of its length."""
    return max(base, math.log(max(1, start) / TURN_FALSE_ALARM))


def turn_statistic(evidence: Sequence[Evidence], *, threshold: float, classes: int) -> list[float]:
    """The CUSUM statistic after each answer: max(0, S + log L(q1) / L(q0)), oldest first.

    q0 ("answering as before") at each answer is a lower bound on the worker's gold accuracy on the
    gold answers *before* it (:data:`TURN_Q0_Z`, through :func:`turn_alternatives`'s bounds): known
    before the answer and, for most workers (61-82% of those right 85-90% of the time), at most their
    true accuracy, so an honest worker's likelihood ratios stay a supermartingale; and gold, not the
    posterior,
    whose agreement evidence leans high for a good worker (0.92 for workers right 85% of the time in
    the simulation): a q0 above the worker's true accuracy makes each wrong answer look like a turn.
    """
    if not evidence:
        return []
    k = max(2, classes) - 1
    p = np.fromiter((e.p_right for e in evidence), float, len(evidence))
    gold = np.fromiter((e.gold for e in evidence), bool, len(evidence))
    # Gold right and gold seen before each answer (not counting it).
    right = np.concatenate(([0], np.cumsum(gold & (p >= 0.5))[:-1]))
    total = np.concatenate(([0], np.cumsum(gold)[:-1]))
    # q0 per answer, kept within the bounds turn_alternatives keeps it in.
    low, high = turn_alternatives(threshold, classes, 0.0)[0], turn_alternatives(threshold, classes, 1.0)[0]
    good = np.clip(_wilson_lower(right, total, TURN_Q0_Z), low, high)
    bad = turn_alternatives(threshold, classes, 0.0)[1]
    step = np.log((p * bad + (1 - p) * (1 - bad) / k) / (p * good + (1 - p) * (1 - good) / k))
    # max(0, S + step) at every answer: the running sum less its lowest point so far (0 included).
    running = np.cumsum(step)
    return list(running - np.minimum(np.minimum.accumulate(running), 0.0))


@dataclass(frozen=True)
class WorkerEvidence:
    """A worker's evidence in the order given, cut into assignments, and which are still undecided."""

    #: Per assignment, oldest first: its answers' evidence (gold and ordinary items).
    assignments: Sequence[Sequence[Evidence]]
    #: Per assignment: whether it is still undecided (approving it is still open).
    undecided: Sequence[bool]


def judge_model(
    worker: WorkerEvidence,
    *,
    threshold: float,
    confidence: float,
    min_gold: int,
    classes: int,
    turn_level: float = TURN_LEVEL,
) -> WorkerVerdict:
    """Approve, flag or wait, from the posterior over all the worker's evidence, watching for a turn.

    * **flag** when P(accuracy < threshold) >= confidence after ``min_gold`` gold answers;
    * **flag** on a turn, when the CUSUM statistic reaches ``turn_level`` after earlier answers
      and the answers since it rose are, on their own, below the threshold with ``confidence``
      (the evidence says ``"flagged_on": "turn"``); once found, it stays found;
    * **approve** when P(accuracy >= threshold) >= confidence and the statistic is below
      :data:`HOLD_LEVEL` and the undecided work's own evidence puts the worker below the
      threshold with less than :data:`PENDING_DOUBT`; work done since the statistic first rose
      above the hold level (while undecided) is approved only when its own evidence approves the
      worker by the same confidence rule;
    * otherwise wait.
    """
    flat = [e for a in worker.assignments for e in a]
    gold = [e for e in flat if e.gold]
    ordinary = [e for e in flat if not e.gold]
    # The ordinary answers' likelihood once: for the agreement posterior, and with gold's for the whole.
    ordinary_log = log_likelihood(ordinary, classes)
    posterior = Posterior.from_log(ordinary_log + log_likelihood(gold, classes))
    p_below = posterior.p_below(threshold)
    gold_right = sum(e.p_right >= 0.5 for e in gold)
    agreement = Posterior.from_log(ordinary_log) if ordinary else None
    evidence: dict[str, Any] = {
        "model": "one-coin",
        "gold_correct": gold_right,
        "gold_total": len(gold),
        "accuracy_threshold": threshold,
        "confidence": confidence,
        "p_accuracy_below_threshold": round(p_below, 4),
        "model_accuracy": round(posterior.mean(), 4),
        "model_items": len(ordinary),
        # How many gold answers the agreement evidence is worth (sum of (2p - 1)^2: 1 for a sure answer).
        "model_items_gold_equivalent": round(sum((2 * e.p_right - 1) ** 2 for e in ordinary), 1),
    }
    if agreement is not None:
        evidence["agreement_accuracy"] = round(agreement.mean(), 4)
        evidence["p_agreement_accuracy_below_threshold"] = round(agreement.p_below(threshold), 4)
    stats = turn_statistic(flat, threshold=threshold, classes=classes)
    evidence["turn_statistic"] = round(stats[-1] if stats else 0.0, 3)
    turn = _turn(
        flat, stats, turn_level=turn_level, threshold=threshold, confidence=confidence, classes=classes
    )
    # The whole record first: a worker it flags is flagged on it, not as a turn.
    if len(gold) >= min_gold and p_below >= confidence:
        evidence["flagged_on"] = "model"
        return WorkerVerdict("flag", p_below, evidence)
    if turn is not None:
        evidence.update(turn)
        return WorkerVerdict("flag", max(p_below, turn["p_turn_accuracy_below_threshold"]), evidence)
    if 1 - p_below < confidence:
        return WorkerVerdict("undecided", p_below, evidence)
    if stats and stats[-1] >= HOLD_LEVEL:
        evidence["held_back"] = "turn statistic"
        return WorkerVerdict("undecided", p_below, evidence)
    pending = [e for a, w in zip(worker.assignments, worker.undecided, strict=True) if w for e in a]
    if pending:
        own_p = Posterior.of(pending, classes).p_below(threshold)
        evidence["p_undecided_accuracy_below_threshold"] = round(own_p, 4)
        if own_p >= PENDING_DOUBT:
            evidence["held_back"] = "undecided work's own evidence"
            return WorkerVerdict("undecided", p_below, evidence)
    held = held_since_doubt(worker, stats)
    if held:
        own = Posterior.of(held, classes)
        evidence["held_back_answers"] = len(held)
        evidence["p_held_back_accuracy_below_threshold"] = round(own.p_below(threshold), 4)
        if 1 - own.p_below(threshold) < confidence:
            return WorkerVerdict("undecided", p_below, evidence)
    return WorkerVerdict("approve", p_below, evidence)


def _turn(
    flat: Sequence[Evidence],
    stats: Sequence[float],
    *,
    turn_level: float,
    threshold: float,
    confidence: float,
    classes: int,
) -> dict[str, Any] | None:
    """The evidence of a turn: the statistic reached ``turn_level`` (at any crossing, not only the
    first) after some earlier answers, and the answers since it rose from 0 put the worker below the
    threshold with ``confidence`` on their own, whether or not the earlier record approved the worker
    (a worker who turns before being approved is caught the same way). A worker bad from the start
    (the statistic never back at 0) is the whole record's to judge. None when there is none."""
    # Only the answers where the statistic reaches the lowest level can be turns.
    for at in np.flatnonzero(np.asarray(stats) >= turn_level).tolist():
        level = stats[at]
        start = at
        while start > 0 and stats[start - 1] > 0:
            start -= 1
        if start == 0 or level < turn_level_after(start, turn_level):
            continue
        before = Posterior.of(flat[:start], classes)
        after = Posterior.of(flat[start : at + 1], classes)
        p_after = after.p_below(threshold)
        # The statistic compares the answers since the rise with the worker's own rate; they must
        # also, on their own, put the worker below the threshold with the confidence asked for.
        if p_after < max(confidence, TURN_CONFIDENCE):
            continue
        return {
            "flagged_on": "turn",
            "turn_answers": at + 1 - start,
            "turn_after_answers": start,
            "turn_accuracy_after": round(after.mean(), 4),
            "turn_accuracy_before": round(before.mean(), 4),
            "p_turn_accuracy_below_threshold": round(p_after, 4),
        }
    return None


def held_since_doubt(worker: WorkerEvidence, stats: Sequence[float]) -> list[Evidence]:
    """The evidence of the undecided work done since the turn statistic (``stats``, one per answer)
    first rose above :data:`HOLD_LEVEL` while that work was undecided (empty: no such doubt)."""
    position = 0
    for index, (answers, waiting) in enumerate(zip(worker.assignments, worker.undecided, strict=True)):
        position += len(answers)
        if waiting and answers and stats[position - 1] >= HOLD_LEVEL:
            return [
                e
                for a, w in zip(worker.assignments[index:], worker.undecided[index:], strict=True)
                if w
                for e in a
            ]
    return []


def model_reason(verdict: WorkerVerdict) -> str:
    """The model's reason in words, for the flag reason and the evidence pages."""
    e = verdict.evidence
    threshold = e["accuracy_threshold"]
    sure = f"{verdict.p_below:.0%} sure below {threshold:.0%}"
    gold = f"gold {e['gold_correct']}/{e['gold_total']}"
    if e.get("flagged_on") == "turn":
        return (
            f"turned for the worse: the latest {e['turn_answers']} answers (gold and agreement) imply "
            f"{e['turn_accuracy_after']:.0%} accuracy after {e['turn_accuracy_before']:.0%} on the "
            f"{e['turn_after_answers']} before, {sure}; {gold}"
        )
    parts = []
    if e.get("model_items"):
        parts.append(
            f"agreement with others on {e['model_items']} items implies "
            f"{e['agreement_accuracy']:.0%} accuracy"
        )
    parts.append(gold)
    return f"{'; '.join(parts)}: together {e['model_accuracy']:.0%} accuracy, {sure}"


@dataclass(frozen=True)
class ReliabilityRow:
    """One bin of a reliability table: predicted against observed accuracy."""

    low: float
    high: float
    workers: int
    predicted: float
    observed: float


def reliability_table(
    predicted: Sequence[float],
    observed: Sequence[float],
    *,
    bins: Sequence[float] = (0, 0.4, 0.6, 0.7, 0.8, 0.9, 1.0),
) -> list[ReliabilityRow]:
    """Predicted (the model's mean accuracy) against observed (the true accuracy), binned by prediction."""
    rows = []
    for low, high in zip(bins[:-1], bins[1:], strict=True):
        inside = [
            (p, o)
            for p, o in zip(predicted, observed, strict=True)
            if low <= p < high or (high == 1 and p == 1)
        ]
        if inside:
            rows.append(
                ReliabilityRow(
                    low,
                    high,
                    len(inside),
                    sum(p for p, _ in inside) / len(inside),
                    sum(o for _, o in inside) / len(inside),
                )
            )
    return rows
