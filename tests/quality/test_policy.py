"""The pure decision rules."""

from __future__ import annotations

from typing import Any

import pytest

from hits.quality.policy import GoldRecord, judge_worker, probability_below


def test_probability_below_matches_the_beta_posterior() -> None:
    # Beta(1 + 5, 1 + 0): P(p < 0.6) = 0.6 ** 6.
    assert probability_below(GoldRecord(5, 5), 0.6) == pytest.approx(0.6**6)
    # No evidence: the uniform prior.
    assert probability_below(GoldRecord(0, 0), 0.6) == pytest.approx(0.6)


def test_a_clearly_good_worker_is_approved() -> None:
    verdict = judge_worker(GoldRecord(6, 6), threshold=0.6, confidence=0.9, min_gold=3)
    assert verdict.verdict == "approve"
    assert verdict.evidence["gold_total"] == 6


def test_a_clearly_bad_worker_is_flagged_only_with_enough_gold() -> None:
    assert judge_worker(GoldRecord(0, 2), threshold=0.6, confidence=0.9, min_gold=3).verdict == "undecided"
    flagged = judge_worker(GoldRecord(1, 8), threshold=0.6, confidence=0.9, min_gold=3)
    assert flagged.verdict == "flag"
    assert flagged.p_below > 0.9


def test_an_uncertain_worker_waits() -> None:
    assert judge_worker(GoldRecord(3, 5), threshold=0.6, confidence=0.9, min_gold=3).verdict == "undecided"


def test_error_rate_verdicts_use_confidence_not_raw_rates() -> None:
    from hits.quality.policy import judge_error_rate

    rule: dict[str, Any] = {"max_rate": 0.25, "confidence": 0.9, "min_total": 20}
    assert judge_error_rate(0, 21, **rule).verdict == "approve"
    assert judge_error_rate(15, 21, **rule).verdict == "flag"
    # Two misspelt words of four look bad (50%) but prove nothing yet.
    assert judge_error_rate(2, 4, **rule).verdict == "undecided"
    # Just over the tolerated rate is not certain enough either way.
    borderline = judge_error_rate(6, 21, **rule)
    assert borderline.verdict == "undecided" and 0.1 < borderline.p_below < 0.9
    assert borderline.evidence["faults"] == 6 and borderline.evidence["observations"] == 21
