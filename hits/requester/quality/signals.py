"""Signals that catch what gold misses: speed, straight-lining and agreement with the crowd.

Gold grades a worker on a handful of items. A worker who never looks at the
items can still pass some gold (a copycat who always gives the most common
rating passes every gold item with that rating), so these signals look at all
of a worker's work instead. Each is a pure function over plain data (no
database, no clock) returning a number, a "suspicious" boolean and the
evidence behind it, so QA staff can see why a worker was flagged.

A signal alone is weak evidence (an honest worker can be fast, or meet a run
of items that all deserve the same answer); :func:`combined_verdict` lets a
suspicious signal flag a worker only while gold has not vouched for them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hits.requester.quality import dawid_skene
from hits.requester.quality.policy import Verdict, WorkerVerdict, probability_rate_below


@dataclass(frozen=True)
class Signal:
    """One measurement of one worker: its value, whether it looks bad, and why."""

    name: str
    value: float | None
    suspicious: bool
    evidence: dict[str, Any] = field(default_factory=dict)


def speed_signal(
    seconds_per_item: Sequence[float],
    crowd_median: float | None,
    *,
    fraction: float = 0.3,
    min_assignments: int = 3,
) -> Signal:
    """A worker's median seconds per item against the crowd's median.

    ``seconds_per_item`` has one entry per assignment (its time divided by its
    items). Suspicious when the worker's median is below ``fraction`` of the
    crowd's, once they have at least ``min_assignments`` assignments; the value
    is the ratio of the two medians.
    """
    evidence: dict[str, Any] = {"assignments": len(seconds_per_item), "fraction": fraction}
    if not seconds_per_item or not crowd_median or crowd_median <= 0:
        return Signal("speed", None, False, evidence)
    median = statistics.median(seconds_per_item)
    ratio = median / crowd_median
    evidence.update(
        {
            "median_seconds_per_item": round(median, 3),
            "crowd_median_seconds_per_item": round(crowd_median, 3),
            "ratio": round(ratio, 4),
        }
    )
    suspicious = len(seconds_per_item) >= min_assignments and ratio < fraction
    return Signal("speed", ratio, suspicious, evidence)


def straightline_signal(
    answers: Sequence[Hashable], *, max_share: float = 0.9, min_answers: int = 12
) -> Signal:
    """Share of a worker's answers equal to their single most frequent answer.

    Only meaningful for categorical or ordinal answers (free text is almost
    never repeated). Suspicious above ``max_share`` once there are at least
    ``min_answers`` answers.
    """
    evidence: dict[str, Any] = {"answers": len(answers), "max_share": max_share}
    if not answers:
        return Signal("straightline", None, False, evidence)
    value, count = Counter(answers).most_common(1)[0]
    share = count / len(answers)
    evidence.update({"most_frequent_answer": value, "share": round(share, 4)})
    return Signal("straightline", share, len(answers) >= min_answers and share > max_share, evidence)


def agrees_with_others(label: Hashable, others: Counter[Any]) -> bool | None:
    """Whether ``label`` is the other workers' clear majority answer; None when there is none.

    ``others`` counts the other workers' answers on the same item. With no
    other answer, or a tie at the top, there is nothing to agree with.
    """
    ranked = [c for c in others.most_common(2) if c[1] > 0]
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return bool(ranked[0][0] == label)


def _leave_one_out_agreement(frame: pd.DataFrame) -> dict[Any, tuple[int, int]]:
    """Per worker: (labels that match the other workers' majority, labels with a clear majority)."""
    counts: dict[Any, Counter[Any]] = {}
    for task, label in zip(frame["task"], frame["label"], strict=True):
        counts.setdefault(task, Counter())[label] += 1
    out: dict[Any, tuple[int, int]] = {}
    for task, worker, label in zip(frame["task"], frame["worker"], frame["label"], strict=True):
        others = counts[task].copy()
        others[label] -= 1
        agreed, compared = out.get(worker, (0, 0))
        verdict = agrees_with_others(label, others)
        out[worker] = (agreed, compared) if verdict is None else (agreed + verdict, compared + 1)
    return out


def dawid_skene_accuracy(frame: pd.DataFrame, *, n_iter: int = 100) -> dict[Any, float]:
    """Each worker's accuracy as Dawid-Skene estimates it from all workers' labels.

    The accuracy is the diagonal of the worker's confusion matrix weighted by
    the class priors: sum over k of P(class k) * P(worker says k | truth is k).
    A label the worker never gave contributes zero. Fitted with
    :mod:`hits.requester.quality.dawid_skene` (crowd-kit's algorithm in numpy:
    the fit runs at every sync batch, and crowd-kit's pandas steps were most of one).
    """
    if frame.empty:
        return {}
    data = dawid_skene.code(list(frame["task"]), list(frame["worker"]), list(frame["label"]))
    return dawid_skene.worker_accuracies(data, dawid_skene.fit(data, n_iter=n_iter))


def majority_agreement_signal(
    agreed: int,
    compared: int,
    *,
    min_agreement: float = 0.5,
    confidence: float = 0.9,
    min_compared: int = 10,
) -> Signal:
    """Agreement with the other workers' majority, judged with the same confidence rule as gold.

    Suspicious when P(agreement rate < ``min_agreement``) reaches
    ``confidence`` over at least ``min_compared`` labels that had a clear
    majority to agree with: a worker who, with confidence, sides with the
    others less than half the time. Needs no model fit, so it can speak after
    a few HITs, long before Dawid-Skene has enough of a worker's labels.
    """
    p_below = probability_rate_below(agreed, compared, min_agreement) if compared else 0.0
    evidence = {
        "majority_agreement": round(agreed / compared, 4) if compared else None,
        "majority_compared": compared,
        "min_agreement": min_agreement,
        "p_majority_agreement_below": round(p_below, 4),
    }
    suspicious = compared >= min_compared and p_below >= confidence
    return Signal("agreement", agreed / compared if compared else None, suspicious, evidence)


def agreement_signals(
    frame: pd.DataFrame,
    *,
    min_accuracy: float = 0.45,
    min_labels: int = 30,
    confidence: float = 0.9,
    min_agreement: float = 0.5,
    min_compared: int = 10,
    n_iter: int = 100,
) -> dict[Any, Signal]:
    """Agreement with the crowd for every worker in ``frame``, by two estimates.

    ``frame`` is a long table (task, worker, label) of categorical labels from
    all workers. A worker is suspicious when either estimate, with
    ``confidence``, is below its bar:

    * leave-one-out agreement with the other workers' majority below
      ``min_agreement``, once ``min_compared`` of their labels had one
      (cheap; speaks early);
    * Dawid-Skene accuracy (crowd-kit) below ``min_accuracy``, once they have
      ``min_labels`` labels, its estimate times their labels taken as the
      successes. The model is
      fitted only when some worker has that many labels (a fit costs about
      half a second however small the frame).

    The value is the Dawid-Skene accuracy where it was estimated, otherwise
    the majority agreement.
    """
    if frame.empty:
        return {}
    labels = frame.groupby("worker").size()
    agreement = _leave_one_out_agreement(frame)
    fitted = dawid_skene_accuracy(frame, n_iter=n_iter) if int(labels.max()) >= min_labels else {}
    out = {}
    for worker, count in labels.items():
        count = int(count)
        agreed, compared = agreement.get(worker, (0, 0))
        majority = majority_agreement_signal(
            agreed, compared, min_agreement=min_agreement, confidence=confidence, min_compared=min_compared
        )
        evidence: dict[str, Any] = {
            "labels": count,
            "min_accuracy": min_accuracy,
            "confidence": confidence,
            **majority.evidence,
        }
        suspicious, value = majority.suspicious, majority.value
        if worker in fitted:
            estimated = fitted[worker]
            p_below = probability_rate_below(estimated * count, count, min_accuracy)
            evidence["dawid_skene_accuracy"] = round(estimated, 4)
            evidence["p_dawid_skene_accuracy_below"] = round(p_below, 4)
            suspicious = suspicious or (count >= min_labels and p_below >= confidence)
            value = estimated
        out[worker] = Signal("agreement", value, suspicious, evidence)
    return out


def worker_signals(
    *,
    answers: Mapping[Any, Sequence[Hashable]] | None = None,
    seconds_per_item: Mapping[Any, Sequence[float]] | None = None,
    labels: pd.DataFrame | None = None,
    speed_fraction: float = 0.3,
    min_assignments: int = 3,
    max_share: float = 0.9,
    min_answers: int = 12,
    min_accuracy: float = 0.45,
    min_labels: int = 30,
    confidence: float = 0.9,
) -> dict[Any, dict[str, Any]]:
    """One evidence dict per worker combining every signal the data allows.

    ``answers``: each worker's categorical answers (for straight-lining);
    ``seconds_per_item``: one entry per assignment (for speed; the crowd's
    median is the median over all assignments given); ``labels``: a (task,
    worker, label) frame (for agreement). Each dict holds one entry per signal
    computed and ``suspicious``, the sorted names of the suspicious ones.
    """
    answers = answers or {}
    seconds_per_item = seconds_per_item or {}
    every_time = [s for times in seconds_per_item.values() for s in times]
    crowd_median = statistics.median(every_time) if every_time else None
    agreement = (
        agreement_signals(labels, min_accuracy=min_accuracy, min_labels=min_labels, confidence=confidence)
        if labels is not None
        else {}
    )
    workers = set(answers) | set(seconds_per_item) | set(agreement)
    out: dict[Any, dict[str, Any]] = {}
    for worker in workers:
        found: list[Signal] = []
        if worker in seconds_per_item:
            found.append(
                speed_signal(
                    seconds_per_item[worker],
                    crowd_median,
                    fraction=speed_fraction,
                    min_assignments=min_assignments,
                )
            )
        if worker in answers:
            found.append(straightline_signal(answers[worker], max_share=max_share, min_answers=min_answers))
        if worker in agreement:
            found.append(agreement[worker])
        evidence: dict[str, Any] = {s.name: {"value": s.value, **s.evidence} for s in found}
        evidence["suspicious"] = sorted(s.name for s in found if s.suspicious)
        out[worker] = evidence
    return out


def combined_verdict(
    gold: WorkerVerdict, suspicious: Sequence[str], *, gold_total: int, min_gold: int
) -> Verdict:
    """The gold verdict, sharpened by the signals.

    Gold decides when it can: a gold flag stands, and a worker whom gold
    approves with confidence is not flagged on a signal (an honest fast worker
    or a run of identical answers is not proof of cheating). A worker gold has
    not yet cleared, with at least ``min_gold`` gold answers, is flagged when
    any signal is suspicious.
    """
    if gold.verdict == "flag":
        return "flag"
    if gold.verdict == "undecided" and suspicious and gold_total >= min_gold:
        return "flag"
    return gold.verdict
