"""Grading a paper, and the exact chance that a guesser passes.

The overall score is the integer percentage of correct answers, rounded
down: ``100 * correct // total``. This is the same number the exported
AnswerKey's ``PercentageMapping`` yields (``qualification.mturk``), so a test
graded here and one graded from MTurk XML give the same qualification value.
A worker passes when every section reaches its ``pass_threshold`` (correct
answers among the drawn items) and the score reaches ``bank.overall_pass``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from math import comb

from qualification.assembly import Paper
from qualification.bank import Bank


@dataclass(frozen=True)
class SectionResult:
    section: str
    correct: int
    total: int
    threshold: int

    @property
    def passed(self) -> bool:
        return self.correct >= self.threshold


@dataclass(frozen=True)
class GradeResult:
    """The outcome of one attempt. ``score`` (0..100) becomes the qualification value."""

    score: int
    passed: bool
    sections: tuple[SectionResult, ...]
    correct_items: dict[str, bool]
    unanswered: tuple[str, ...]


def percentage(correct: int, total: int) -> int:
    """Integer percentage, rounded down, as AnswerKey PercentageMapping computes it."""
    return 100 * correct // total if total else 0


def grade(bank: Bank, paper: Paper, answers: dict[str, str]) -> GradeResult:
    """Grade ``answers`` (question id -> chosen choice id) for ``paper``.

    A missing answer, or a choice id that is not one of the item's choices,
    counts as wrong. Answers to questions not on the paper are ignored.
    """
    correct_items: dict[str, bool] = {}
    unanswered: list[str] = []
    for entry in paper.items:
        chosen = answers.get(entry.item_id)
        if chosen is None or chosen == "":
            unanswered.append(entry.item_id)
        correct_items[entry.item_id] = chosen == bank.items[entry.item_id].answer
    sections = tuple(
        SectionResult(
            section.id,
            sum(1 for e in paper.items if e.section == section.id and correct_items[e.item_id]),
            sum(1 for e in paper.items if e.section == section.id),
            section.pass_threshold,
        )
        for section in bank.sections
    )
    score = percentage(sum(correct_items.values()), len(paper.items))
    passed = all(s.passed for s in sections) and score >= bank.overall_pass
    return GradeResult(score, passed, sections, correct_items, tuple(unanswered))


def _section_guess_p(bank: Bank, section_id: str) -> Fraction:
    """Chance of guessing one item of the section right (items must share a choice count)."""
    counts = {len(bank.choices(item)) for item in bank.items_in(section_id)}
    if len(counts) != 1:
        raise ValueError(f"section '{section_id}' mixes items with different numbers of choices")
    return Fraction(1, counts.pop())


def binomial_pmf(n: int, p: Fraction) -> list[Fraction]:
    """Exact P(X = k) for k = 0..n, X ~ Binomial(n, p)."""
    return [comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)]


def guessing_pass_probability(bank: Bank) -> Fraction:
    """The exact probability that a worker choosing uniformly at random passes.

    Sections are independent binomials (``sample`` draws, success ``1/choices``);
    the sum runs over every combination of per-section counts that meets all
    section thresholds and the overall score threshold.
    """
    pmfs = [binomial_pmf(s.sample, _section_guess_p(bank, s.id)) for s in bank.sections]
    total = sum(s.sample for s in bank.sections)
    out = Fraction(0)
    ranges = [range(s.pass_threshold, s.sample + 1) for s in bank.sections]
    for counts in product(*ranges):
        if percentage(sum(counts), total) < bank.overall_pass:
            continue
        term = Fraction(1)
        for pmf, k in zip(pmfs, counts, strict=True):
            term *= pmf[k]
        out += term
    return out
