"""Worker signals on planted data where we know who cheats."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from scipy.stats import beta

from hits.requester.quality.policy import WorkerVerdict, probability_rate_below
from hits.requester.quality.signals import (
    agreement_signals,
    combined_verdict,
    dawid_skene_accuracy,
    majority_agreement_signal,
    speed_signal,
    straightline_signal,
    worker_signals,
)


def test_a_fast_worker_is_suspicious_only_with_enough_assignments() -> None:
    fast = speed_signal([1.0, 1.2, 0.8], crowd_median=6.0)
    assert fast.suspicious
    assert fast.value == pytest.approx(1.0 / 6.0)
    assert fast.evidence["median_seconds_per_item"] == 1.0
    assert not speed_signal([1.0, 1.2], crowd_median=6.0).suspicious
    assert not speed_signal([1.0, 1.2, 0.8], crowd_median=6.0, min_assignments=4).suspicious


def test_speed_at_the_crowds_pace_is_fine_and_the_fraction_is_configurable() -> None:
    assert not speed_signal([5.0, 6.0, 7.0], crowd_median=6.0).suspicious
    assert speed_signal([2.5, 2.5, 2.5], crowd_median=6.0, fraction=0.5).suspicious
    assert not speed_signal([2.5, 2.5, 2.5], crowd_median=6.0).suspicious


def test_speed_without_data_is_not_suspicious() -> None:
    assert speed_signal([], crowd_median=6.0).value is None
    assert not speed_signal([1.0, 1.0, 1.0], crowd_median=None).suspicious
    assert not speed_signal([1.0, 1.0, 1.0], crowd_median=0.0).suspicious


def test_straight_lining_is_the_share_of_the_most_frequent_answer() -> None:
    same = straightline_signal([3] * 12)
    assert same.suspicious and same.value == 1.0
    assert same.evidence["most_frequent_answer"] == 3
    mixed = straightline_signal([1, 2, 3, 4] * 3)
    assert mixed.value == 0.25 and not mixed.suspicious


def test_straight_lining_needs_enough_answers_and_a_share_above_the_limit() -> None:
    assert not straightline_signal([3] * 11).suspicious
    # 9 of 10 is exactly 0.9: the limit is "above", so not suspicious.
    assert not straightline_signal([3] * 9 + [4], min_answers=10).suspicious
    assert straightline_signal([3] * 19 + [4], min_answers=10).suspicious
    assert straightline_signal(["yes"] * 12).suspicious  # any hashable answer
    assert straightline_signal([]).value is None


def crowd_frame(seed: int = 5, items: int = 200) -> tuple[pd.DataFrame, dict[str, int]]:
    """Three careful workers, one who always says 3, one who answers at random."""
    rng = random.Random(seed)
    truth = {f"t{i}": rng.choices((1, 2, 3, 4), (0.1, 0.2, 0.35, 0.35))[0] for i in range(items)}
    rows = []
    for task, label in truth.items():
        for worker in ("good-a", "good-b", "good-c"):
            rows.append((task, worker, label if rng.random() < 0.9 else rng.randint(1, 4)))
        rows.append((task, "copycat", 3))
        rows.append((task, "spammer", rng.randint(1, 4)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


def test_dawid_skene_accuracy_separates_careful_workers_from_cheats() -> None:
    frame, truth = crowd_frame()
    accuracy = dawid_skene_accuracy(frame)
    share_of_threes = sum(v == 3 for v in truth.values()) / len(truth)
    for worker in ("good-a", "good-b", "good-c"):
        assert accuracy[worker] > 0.85
    # Always answering 3 is right exactly on the items whose truth is 3.
    assert accuracy["copycat"] == pytest.approx(share_of_threes, abs=0.05)
    assert accuracy["spammer"] < 0.4


def test_agreement_flags_the_cheats_and_reports_leave_one_out_agreement() -> None:
    frame, _ = crowd_frame()
    signals = agreement_signals(frame)
    assert {w for w, s in signals.items() if s.suspicious} == {"copycat", "spammer"}
    assert signals["good-a"].evidence["majority_agreement"] > 0.8
    assert signals["spammer"].evidence["majority_agreement"] < 0.5
    assert signals["good-a"].evidence["labels"] == 200


def test_agreement_needs_enough_labels() -> None:
    few, _ = crowd_frame(items=8)
    assert not any(s.suspicious for s in agreement_signals(few).values())
    assert agreement_signals(pd.DataFrame(columns=["task", "worker", "label"])) == {}
    # Twenty labels are enough for the majority estimate, which needs no fit; Dawid-Skene is
    # not fitted at all while nobody has its minimum of labels.
    frame, _ = crowd_frame(items=20)
    signals = agreement_signals(frame, min_labels=30)
    assert {w for w, s in signals.items() if s.suspicious} == {"copycat", "spammer"}
    assert not any("dawid_skene_accuracy" in s.evidence for s in signals.values())
    assert signals["spammer"].evidence["p_majority_agreement_below"] >= 0.9
    assert not any(s.suspicious for s in agreement_signals(frame, min_compared=30, min_labels=30).values())


def test_agreement_judges_with_confidence_not_the_raw_rate() -> None:
    # 8 of 20 is a rate of 0.4, below the bar of 0.5, but P(rate < 0.5) is only 0.81.
    assert not majority_agreement_signal(8, 20).suspicious
    assert majority_agreement_signal(8, 20, confidence=0.8).suspicious
    assert majority_agreement_signal(6, 20).suspicious
    assert not majority_agreement_signal(6, 20, confidence=0.97).suspicious
    # P(rate < 0.5 | 6 of 20) under Beta(7, 15), as scipy computes it.
    expected = float(beta.cdf(0.5, 7, 15))
    assert majority_agreement_signal(6, 20).evidence["p_majority_agreement_below"] == round(expected, 4)
    assert probability_rate_below(6, 20, 0.5) == pytest.approx(expected)
    # 2 of 9 is confident enough (0.98), but nine compared labels are too few.
    assert not majority_agreement_signal(2, 9).suspicious
    assert majority_agreement_signal(2, 10).suspicious


def test_leave_one_out_ignores_ties_among_the_other_workers() -> None:
    # For c, on t1 the others split 1-2: nothing to agree with. On t2 the other two agree on 2.
    frame = pd.DataFrame(
        [("t1", "a", 1), ("t1", "b", 2), ("t1", "c", 2), ("t2", "a", 2), ("t2", "b", 2), ("t2", "c", 2)],
        columns=["task", "worker", "label"],
    )
    evidence = agreement_signals(frame, min_labels=1)["c"].evidence
    assert evidence["majority_compared"] == 1
    assert evidence["majority_agreement"] == 1.0
    # For a, the others agree on t1 (2, against a's 1) and on t2 (2, with a).
    assert agreement_signals(frame, min_labels=1)["a"].evidence["majority_compared"] == 2
    assert agreement_signals(frame, min_labels=1)["a"].evidence["majority_agreement"] == 0.5


def test_worker_signals_combines_the_evidence_per_worker() -> None:
    frame, _ = crowd_frame()
    answers = {w: list(g["label"]) for w, g in frame.groupby("worker")}
    seconds = {w: [6.0, 5.5, 7.0] for w in answers}
    seconds["spammer"] = [1.0, 1.1, 0.9]
    combined = worker_signals(answers=answers, seconds_per_item=seconds, labels=frame)
    assert combined["copycat"]["suspicious"] == ["agreement", "straightline"]
    assert combined["spammer"]["suspicious"] == ["agreement", "speed"]
    assert combined["good-a"]["suspicious"] == []
    assert set(combined["good-a"]) == {"speed", "straightline", "agreement", "suspicious"}


def test_worker_signals_uses_only_the_data_given() -> None:
    combined = worker_signals(answers={"w": [3] * 20})
    assert set(combined["w"]) == {"straightline", "suspicious"}
    assert combined["w"]["suspicious"] == ["straightline"]


def verdict(kind: str) -> WorkerVerdict:
    return WorkerVerdict(kind, 0.5, {})  # type: ignore[arg-type]


def test_signals_flag_only_workers_gold_has_not_cleared() -> None:
    assert combined_verdict(verdict("undecided"), ["speed"], gold_total=3, min_gold=3) == "flag"
    # Too little gold yet: wait, even with a suspicious signal.
    assert combined_verdict(verdict("undecided"), ["speed"], gold_total=2, min_gold=3) == "undecided"
    # Gold vouches for the worker: an honest fast worker is not flagged on speed alone.
    assert combined_verdict(verdict("approve"), ["speed"], gold_total=10, min_gold=3) == "approve"
    assert combined_verdict(verdict("flag"), [], gold_total=10, min_gold=3) == "flag"
    assert combined_verdict(verdict("undecided"), [], gold_total=10, min_gold=3) == "undecided"
