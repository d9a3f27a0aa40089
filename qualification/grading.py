"""Grading a paper, the qualification value it earns, and the exact chance that a guesser passes.

The score is the integer percentage of correct answers, rounded down:
``100 * correct // total`` (27 of 28 is 96, not 96.4 or 97). A worker passes
when every section reaches its ``pass_threshold`` (correct answers among the
drawn items) and the score reaches ``bank.overall_pass``.

The qualification value, what the marketplace records and a
QualificationRequirement compares, is the score when the worker passed and 0
when not (``qualification_value``), so ``GreaterThanOrEqualTo overall_pass``
holds exactly for workers who passed: a high score with a failed section does
not clear it. The exported AnswerKey (``qualification.mturk``) yields the same
value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

    @property
    def value(self) -> int:
        """The qualification value this attempt earns (see ``qualification_value``)."""
        return qualification_value(self.score, self.passed)


def percentage(correct: int, total: int) -> int:
    """Integer percentage, rounded down, as AnswerKey PercentageMapping computes it."""
    return 100 * correct // total if total else 0


def qualification_value(score: int, passed: bool) -> int:
    """What the marketplace records for an attempt: the score if it passed, else 0.

    A requirement ``GreaterThanOrEqualTo overall_pass`` (``overall_pass`` is at
    least 1) is then met by exactly the workers who passed.
    """
    return score if passed else 0


def verdict(bank: Bank, counts: Sequence[int]) -> tuple[int, bool]:
    """(score, passed) for ``counts``, the correct answers per section in ``bank.sections`` order."""
    total = sum(s.sample for s in bank.sections)
    score = percentage(sum(counts), total)
    sections_met = all(k >= s.pass_threshold for k, s in zip(counts, bank.sections, strict=True))
    return score, sections_met and score >= bank.overall_pass


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
    return tally(bank, paper, correct_items, tuple(unanswered))


def tally(
    bank: Bank, paper: Paper, correct_items: Mapping[str, bool], unanswered: tuple[str, ...] = ()
) -> GradeResult:
    """The result of ``paper`` from which of its items were answered correctly (a stored attempt)."""
    correct = {e.item_id: bool(correct_items.get(e.item_id)) for e in paper.items}
    sections = tuple(
        SectionResult(
            section.id,
            sum(1 for e in paper.items if e.section == section.id and correct[e.item_id]),
            sum(1 for e in paper.items if e.section == section.id),
            section.pass_threshold,
        )
        for section in bank.sections
    )
    score, passed = verdict(bank, [s.correct for s in sections])
    return GradeResult(score, passed, sections, correct, unanswered)


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
    out = Fraction(0)
    ranges = [range(s.pass_threshold, s.sample + 1) for s in bank.sections]
    for counts in product(*ranges):
        if not verdict(bank, counts)[1]:
            continue
        term = Fraction(1)
        for pmf, k in zip(pmfs, counts, strict=True):
            term *= pmf[k]
        out += term
    return out
