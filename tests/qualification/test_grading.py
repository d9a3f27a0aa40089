"""Grading, and the chance that random guessing passes (exact, then Monte-Carlo)."""

from __future__ import annotations

import random
from fractions import Fraction

from scipy import stats

from qualification.assembly import assemble
from qualification.bank import Bank
from qualification.grading import grade, guessing_pass_probability, percentage, tally


def _perfect(bank: Bank, seed: int) -> dict[str, str]:
    return {e.item_id: bank.items[e.item_id].answer for e in assemble(bank, seed).items}


def test_perfect_answer_sheet_passes_with_100(bank: Bank) -> None:
    for seed in range(5):
        result = grade(bank, assemble(bank, seed), _perfect(bank, seed))
        assert result.passed and result.score == 100
        assert all(s.passed and s.correct == s.total for s in result.sections)
        assert result.unanswered == ()


def test_all_wrong_and_empty_sheets_fail(bank: Bank) -> None:
    paper = assemble(bank, 3)
    wrong = {
        e.item_id: next(c for c in e.choice_order if c != bank.items[e.item_id].answer) for e in paper.items
    }
    assert grade(bank, paper, wrong).score == 0
    empty = grade(bank, paper, {})
    assert not empty.passed and empty.score == 0
    assert len(empty.unanswered) == len(paper.items)


def test_one_weak_section_fails_despite_a_high_score(bank: Bank) -> None:
    paper = assemble(bank, 11)
    answers = _perfect(bank, 11)
    judged = [e for e in paper.items if e.section == "judgment"]
    for entry in judged[:2]:  # 6/8 judgment, below the 7/8 threshold
        answers[entry.item_id] = next(c for c in entry.choice_order if c != answers[entry.item_id])
    result = grade(bank, paper, answers)
    assert result.score == percentage(len(paper.items) - 2, len(paper.items)) == 92
    assert not result.passed
    assert [s.section for s in result.sections if not s.passed] == ["judgment"]


def test_unknown_choice_counts_as_wrong(bank: Bank) -> None:
    paper = assemble(bank, 5)
    answers = _perfect(bank, 5)
    answers[paper.items[0].item_id] = "not-a-choice"
    assert grade(bank, paper, answers).correct_items[paper.items[0].item_id] is False


def test_guessing_probability_exact_value_is_below_one_percent(bank: Bank) -> None:
    p = guessing_pass_probability(bank)
    # Two yes/no sections of 10 needing 8, one two-way section of 8 needing 7; the overall
    # threshold (80) never binds because 23/28 = 82. P = (56/1024)^2 * (9/256).
    assert p == Fraction(56, 1024) ** 2 * Fraction(9, 256) == Fraction(441, 4194304)
    tail = 1.0
    for section in bank.sections:
        tail *= float(stats.binom.sf(section.pass_threshold - 1, section.sample, 0.5))
    assert abs(float(p) - tail) < 1e-15
    assert p < Fraction(1, 100)


def test_monte_carlo_guessing_agrees_with_the_exact_probability(bank: Bank) -> None:
    rng = random.Random(20261122)
    trials = 20_000
    passed = 0
    section_passes = {s.id: 0 for s in bank.sections}
    for trial in range(trials):
        paper = assemble(bank, trial)
        answers = {e.item_id: rng.choice(e.choice_order) for e in paper.items}
        result = grade(bank, paper, answers)
        passed += result.passed
        for s in result.sections:
            section_passes[s.section] += s.passed
    for section in bank.sections:
        expected = float(stats.binom.sf(section.pass_threshold - 1, section.sample, 0.5))
        observed = section_passes[section.id] / trials
        sd = (expected * (1 - expected) / trials) ** 0.5
        assert abs(observed - expected) < 5 * sd, (section.id, observed, expected)
    # The overall pass count is Binomial(trials, p) with mean ~2.1: a two-sided 99.9% band.
    p = float(guessing_pass_probability(bank))
    low, high = stats.binom.ppf([0.0005, 0.9995], trials, p)
    assert low <= passed <= high
    assert passed / trials < 0.01


def test_the_qualification_value_means_passed(bank: Bank) -> None:
    """Issue 15, item 9: a value that clears GreaterThanOrEqualTo overall_pass means the worker passed."""
    rng = random.Random(9)
    seen = {True: 0, False: 0}
    for seed in range(400):
        paper = assemble(bank, seed)
        skill = rng.uniform(0.6, 1.0)
        answers = {
            e.item_id: bank.items[e.item_id].answer if rng.random() < skill else rng.choice(e.choice_order)
            for e in paper.items
        }
        result = grade(bank, paper, answers)
        assert (result.value >= bank.overall_pass) == result.passed
        assert result.value == (result.score if result.passed else 0)
        again = tally(bank, paper, result.correct_items)  # from a stored attempt's correct items
        assert (again.score, again.passed, again.sections) == (result.score, result.passed, result.sections)
        seen[result.passed] += 1
    assert min(seen.values()) > 20
