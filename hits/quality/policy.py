"""Pure decision rules: trivial to test, no database, no clock.

A worker's gold accuracy gets a Beta posterior (uniform prior). Decisions
use confidence, not raw averages: a worker is flagged only when the
probability that their accuracy is below the campaign's threshold exceeds the
configured confidence, and approved automatically only when the probability
that it is above does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from scipy.stats import beta

Verdict = Literal["approve", "flag", "undecided"]


@dataclass(frozen=True)
class GoldRecord:
    correct: int
    total: int


@dataclass(frozen=True)
class WorkerVerdict:
    verdict: Verdict
    p_below: float
    evidence: dict[str, Any]


def probability_below(record: GoldRecord, threshold: float) -> float:
    """P(accuracy < threshold | gold record) under a Beta(1 + correct, 1 + wrong) posterior."""
    wrong = record.total - record.correct
    return float(beta.cdf(threshold, 1 + record.correct, 1 + wrong))


def judge_worker(record: GoldRecord, *, threshold: float, confidence: float, min_gold: int) -> WorkerVerdict:
    """Approve, flag, or wait for more gold answers."""
    p_below = probability_below(record, threshold)
    evidence = {
        "gold_correct": record.correct,
        "gold_total": record.total,
        "accuracy_threshold": threshold,
        "confidence": confidence,
        "p_accuracy_below_threshold": round(p_below, 4),
    }
    if record.total >= min_gold and p_below >= confidence:
        return WorkerVerdict("flag", p_below, evidence)
    if 1 - p_below >= confidence:
        return WorkerVerdict("approve", p_below, evidence)
    return WorkerVerdict("undecided", p_below, evidence)
