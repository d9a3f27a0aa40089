"""The pure decision rules."""

from __future__ import annotations

from typing import Any

import pytest

from hits.requester.quality.policy import GoldRecord, judge_worker, probability_below


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
    from hits.requester.quality.policy import judge_error_rate

    rule: dict[str, Any] = {"max_rate": 0.25, "confidence": 0.9, "min_total": 20}
    assert judge_error_rate(0, 21, **rule).verdict == "approve"
    assert judge_error_rate(15, 21, **rule).verdict == "flag"
    # Two misspelt words of four look bad (50%) but prove nothing yet.
    assert judge_error_rate(2, 4, **rule).verdict == "undecided"
    # Just over the tolerated rate is not certain enough either way.
    borderline = judge_error_rate(6, 21, **rule)
    assert borderline.verdict == "undecided" and 0.1 < borderline.p_below < 0.9
    assert borderline.evidence["faults"] == 6 and borderline.evidence["observations"] == 21


def _judged(history: list[tuple[int, int]], size: int = 20) -> Any:
    from hits.requester.quality.policy import judge_recent, recent_window

    correct, total = sum(c for c, _ in history), sum(t for _, t in history)
    whole = judge_worker(GoldRecord(correct, total), threshold=0.6, confidence=0.9, min_gold=3)
    return judge_recent(whole, recent_window(history, size), threshold=0.6, confidence=0.9)


def test_gold_is_cut_into_blocks_of_whole_assignments_counted_from_the_first() -> None:
    from hits.requester.quality.policy import recent_window

    history = [(2, 2)] * 10 + [(1, 3)] * 7 + [(0, 1)]
    recent = recent_window(history, 20)
    assert recent is not None
    # 10 x 2 = 20 closes the first block; 7 x 3 = 21 the second; the last answer starts a third.
    assert recent.blocks == (GoldRecord(20, 20), GoldRecord(7, 21))
    # The latest half block: whole assignments back to at least 10 answers.
    assert recent.latest == GoldRecord(3, 10)
    assert recent_window(history, 0) is None  # the test is off
    assert recent_window([(2, 2)] * 5, 20) is None  # no longer than the latest answers


def test_a_turn_after_an_approved_record_flags_though_the_whole_record_would_not() -> None:
    # The issue: 19 of 20 right, then 4 of 20. The whole record (23/40) leaves gold undecided.
    history = [(2, 2)] * 9 + [(1, 2)] + [(0, 2)] * 8 + [(2, 2)] * 2
    whole = judge_worker(GoldRecord(23, 40), threshold=0.6, confidence=0.9, min_gold=3)
    assert whole.verdict == "undecided"
    verdict = _judged(history)
    assert verdict.verdict == "flag" and verdict.evidence["flagged_on"] == "recent gold"
    assert verdict.evidence["gold_before_recent"] == "19/20"
    assert (verdict.evidence["recent_gold_correct"], verdict.evidence["recent_gold_total"]) == (4, 20)
    # It stays flagged: a later block does not undo the turn.
    assert _judged(history + [(1, 2)] * 10).verdict == "flag"


def test_a_bad_block_without_a_confident_approval_before_it_is_no_turn() -> None:
    # 12 of 20 then 4 of 20: bad, but the whole record judges it (no change to detect).
    history = [(1, 2)] * 8 + [(2, 2)] * 2 + [(0, 2)] * 8 + [(2, 2)] * 2
    assert "flagged_on" not in _judged(history).evidence


def test_an_approval_waits_while_the_latest_answers_lean_below_the_threshold() -> None:
    # Approved on 20/20, then 3 HITs of spam: the latest 10 answers hold 4 right.
    history = [(2, 2)] * 10 + [(0, 2)] * 3
    whole = judge_worker(GoldRecord(20, 26), threshold=0.6, confidence=0.9, min_gold=3)
    assert whole.verdict == "approve"
    assert _judged(history).verdict == "undecided"
    # A diligent worker's ordinary slip does not: 9 of the latest 10.
    assert _judged([(2, 2)] * 12 + [(1, 2)]).verdict == "approve"


def test_a_short_lucky_run_after_a_turn_does_not_release_the_work_held_back() -> None:
    from hits.requester.quality.policy import probability_below

    # Approved on 20/20, then random answers: 8 of the 14 since the last block, the latest 10
    # holding 7 right (P(accuracy < 0.6) = 0.29, which alone would let the approval through).
    history = [(2, 2)] * 10 + [(0, 2), (1, 2), (1, 2), (2, 2), (1, 2), (2, 2), (1, 2)]
    assert probability_below(GoldRecord(7, 10), 0.6) < 0.5 <= probability_below(GoldRecord(8, 14), 0.6)
    assert _judged(history).verdict == "undecided"  # waits for the block, which will tell


#: 19 of 20 right, then random ratings (a quarter right): the first block after the turn is lucky,
#: 11 of 20 (P(accuracy < 0.6) = 0.75, no flag), and its last 10 answers hold 7 right.
LUCKY_TURN = (
    [(2, 2)] * 9 + [(1, 2)] + [(0, 2), (2, 2), (1, 2), (0, 2), (1, 2), (1, 2), (2, 2), (1, 2), (2, 2), (1, 2)]
)


def test_a_lucky_block_after_a_turn_does_not_release_the_work_held_back_while_it_filled() -> None:
    from hits.requester.quality.policy import held_back, judge_recent, recent_window

    # Judged after every HIT, as the pipeline does: the 11th and 12th HITs are approved (the
    # latest answers still hold the good work), the 13th to 20th wait while the block fills.
    history, undecided = LUCKY_TURN[:12], [False] * 12
    for gold in LUCKY_TURN[12:]:
        history, undecided = [*history, gold], [*undecided, True]
    recent = recent_window(history, 20)
    assert recent is not None and recent.blocks == (GoldRecord(19, 20), GoldRecord(11, 20))
    assert recent.latest == GoldRecord(7, 10) and recent.filling == GoldRecord(0, 0)
    whole = judge_worker(GoldRecord(30, 40), threshold=0.6, confidence=0.9, min_gold=3)
    # The block does not flag, the latest answers lean good, the whole record approves: without the
    # held work's own gold, the 8 held spam assignments were approved here.
    assert judge_recent(whole, recent, threshold=0.6, confidence=0.9).verdict == "approve"
    held = held_back(history, undecided, 20, 0.6)
    # Held since the 13th HIT, the first after which the latest 10 answers leaned bad (5 right).
    assert held == GoldRecord(9, 16)
    verdict = judge_recent(whole, recent, threshold=0.6, confidence=0.9, held=held)
    assert verdict.verdict == "undecided"
    assert verdict.evidence["held_back_gold"] == "9/16"
    # Work done while the recent gold leaned good needs nothing more (a diligent worker's).
    diligent = [(2, 2)] * 14 + [(1, 2)]
    assert held_back(diligent, [False] * 14 + [True], 20, 0.6) is None
    # Held work whose own gold is confidently good is paid: a careful worker's unlucky run.
    unlucky = [(2, 2)] * 10 + [(0, 2)] * 3 + [(2, 2)] * 6
    held = held_back(unlucky, [False] * 10 + [True] * 9, 20, 0.6)
    assert held == GoldRecord(12, 16)  # since the 12th HIT: 6 right of the latest 10
    whole = judge_worker(GoldRecord(32, 38), threshold=0.6, confidence=0.9, min_gold=3)
    verdict = judge_recent(whole, recent_window(unlucky, 20), threshold=0.6, confidence=0.9, held=held)
    assert verdict.verdict == "undecided"  # 12/16: P(accuracy < 0.6) = 0.13, not yet confident
    unlucky += [(2, 2)] * 2
    held = held_back(unlucky, [False] * 10 + [True] * 11, 20, 0.6)
    whole = judge_worker(GoldRecord(36, 42), threshold=0.6, confidence=0.9, min_gold=3)
    verdict = judge_recent(whole, recent_window(unlucky, 20), threshold=0.6, confidence=0.9, held=held)
    assert held == GoldRecord(16, 20) and verdict.verdict == "approve"
