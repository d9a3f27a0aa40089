"""Pure decision rules: trivial to test, no database, no clock.

A worker's gold accuracy gets a Beta posterior (uniform prior). Decisions
use confidence, not raw averages: a worker is flagged only when the
probability that their accuracy is below the campaign's threshold exceeds the
configured confidence, and approved automatically only when the probability
that it is above does.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from scipy.special import betainc
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


def probability_rate_below(successes: float, trials: float, rate: float) -> float:
    """P(true rate < ``rate``) after ``successes`` of ``trials``, under a uniform prior.

    The Beta(1 + successes, 1 + trials - successes) posterior; ``successes``
    may be fractional (an estimated accuracy times the labels it rests on).
    """
    # The Beta cdf is the regularised incomplete beta function. scipy.special.betainc
    # computes it directly (the same Boost routine behind beta.cdf, identical floats)
    # without the ~70 microseconds of argument handling of scipy.stats.
    if rate <= 0:
        return 0.0
    if rate >= 1:
        return 1.0
    return float(betainc(1 + successes, 1 + trials - successes, rate))


@lru_cache(maxsize=65536)
def _beta_cdf(threshold: float, correct: int, wrong: int) -> float:
    # Gold records are small integer pairs that recur across workers: memoised.
    return probability_rate_below(correct, correct + wrong, threshold)


def probability_below(record: GoldRecord, threshold: float) -> float:
    """P(accuracy < threshold | gold record) under a Beta(1 + correct, 1 + wrong) posterior."""
    return _beta_cdf(float(threshold), int(record.correct), int(record.total - record.correct))


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


#: How sure the recent window must be that the worker has turned bad before a gold approval
#: waits: even odds. An approval cannot be undone on the marketplace, so a worker whose
#: latest gold answers lean below the threshold is not paid on their earlier record alone.
RECENT_DOUBT = 0.5


@dataclass(frozen=True)
class RecentGold:
    """A worker's gold split for the recent-work test (:func:`recent_window`)."""

    #: The latest half block or so of gold answers, whatever the blocks (for holding back approvals).
    latest: GoldRecord
    #: The complete blocks of about ``size`` gold answers each, oldest first.
    blocks: tuple[GoldRecord, ...] = ()
    #: The answers after the latest complete block: the block being filled.
    filling: GoldRecord = GoldRecord(0, 0)
    #: Half a block: how many answers ``latest`` spans at least, and ``filling`` must hold to count.
    half: int = 1


def recent_window(per_assignment: Sequence[tuple[int, int]], size: int) -> RecentGold | None:
    """A worker's gold in consecutive blocks of ``size`` answers, for :func:`judge_recent`.

    ``per_assignment``: (correct, total) of each graded assignment, oldest
    first. Blocks are whole assignments (which of an assignment's gold
    answers came first is not recorded), each closed at the first assignment
    that brings it to ``size`` answers, counted from the first one: the same
    history always gives the same blocks, whenever it is judged. None when
    ``size`` is 0 (the recent test is off) or the whole history is no longer
    than the latest answers looked at (the whole-history verdict says it all).
    """
    half = max(1, size // 2)
    if size <= 0 or sum(t for _, t in per_assignment) <= half:
        return None
    blocks: list[GoldRecord] = []
    correct = total = 0
    for right, seen in per_assignment:
        correct, total = correct + right, total + seen
        if total >= size:
            blocks.append(GoldRecord(correct, total))
            correct = total = 0
    filling = GoldRecord(correct, total)
    correct = total = 0
    for right, seen in reversed(per_assignment):
        correct, total = correct + right, total + seen
        if total >= half:
            break
    return RecentGold(GoldRecord(correct, total), tuple(blocks), filling, half)


def judge_recent(
    verdict: WorkerVerdict,
    recent: RecentGold | None,
    *,
    threshold: float,
    confidence: float,
    held: GoldRecord | None = None,
) -> WorkerVerdict:
    """The whole-history gold verdict, checked for a turn for the worse in the worker's gold.

    A worker who answers well, is approved, then spams keeps a good whole
    history for a long time. Each complete block of gold answers and the
    answers before it are judged by the same rule, at the same threshold and
    confidence: a turn is a block that flags the worker after answers that
    approve them. Then the worker is flagged, a confident gold flag like any
    other (the evidence says ``"flagged_on": "recent gold"``), and stays
    flagged: the blocks after the turn do not undo it, though the answers
    before them, spam included, no longer approve.

    Why blocks, each judged once, rather than a window sliding at every
    answer: a worker near the threshold has, now and then, a bad run of
    answers, and testing every overlapping window finds it (in the
    simulation a sliding window of 20 flagged more than half the careless
    workers, against a quarter without). Why a confident approval before the
    block: the test is for a change, not a second whole-history test.

    An approval waits (undecided) while the latest half block of answers,
    or the block being filled once it holds half a block, leans below the
    threshold (P >= :data:`RECENT_DOUBT`): approvals are final, and work
    done after a turn should not be paid on the strength of the work before
    it while the block that will show the turn fills up. The second keeps a
    short lucky run after a turn from releasing the work held back so far:
    that waits for the block, which flags or clears it.

    A block that does not flag does not clear it either: after a turn, a
    random rater's block holds 9 or more right of 20 one time in 25, and the
    latest half block then often looks fine, which released all the work
    held while the block filled (10 spam assignments in a live run). So
    ``held``, the gold of the undecided work done since the recent gold first
    leaned below the threshold (:func:`held_back`), must itself approve the
    worker by the confidence rule, P(accuracy >= threshold) >= confidence,
    before that work is paid: not being confidently bad is not enough.
    """
    if recent is None:
        return verdict
    p_latest = probability_below(recent.latest, threshold)
    evidence: dict[str, Any] = {
        **verdict.evidence,
        "latest_gold_correct": recent.latest.correct,
        "latest_gold_total": recent.latest.total,
        "p_latest_accuracy_below_threshold": round(p_latest, 4),
    }
    before = GoldRecord(0, 0)
    for block in recent.blocks:
        if before.total:
            p_before = probability_below(before, threshold)
            p_block = probability_below(block, threshold)
            if p_block >= confidence and 1 - p_before >= confidence:
                turn = {
                    "flagged_on": "recent gold",
                    "recent_gold_correct": block.correct,
                    "recent_gold_total": block.total,
                    "p_recent_accuracy_below_threshold": round(p_block, 4),
                    "gold_before_recent": f"{before.correct}/{before.total}",
                    "p_accuracy_below_threshold_before_recent": round(p_before, 4),
                }
                if verdict.verdict == "flag":  # the whole record speaks for itself; the turn is noted
                    return WorkerVerdict("flag", verdict.p_below, {**evidence, "turn": turn})
                return WorkerVerdict("flag", p_block, {**evidence, **turn})
        before = GoldRecord(before.correct + block.correct, before.total + block.total)
    if verdict.verdict == "approve" and leans_below(recent, threshold):
        return WorkerVerdict("undecided", verdict.p_below, evidence)
    if verdict.verdict == "approve" and held is not None and held.total:
        p_held = probability_below(held, threshold)
        evidence["held_back_gold"] = f"{held.correct}/{held.total}"
        evidence["p_held_back_accuracy_below_threshold"] = round(p_held, 4)
        if 1 - p_held < confidence:
            return WorkerVerdict("undecided", verdict.p_below, evidence)
    return WorkerVerdict(verdict.verdict, verdict.p_below, {**evidence})


def leans_below(recent: RecentGold, threshold: float) -> bool:
    """Whether the latest half block, or the block being filled once it holds half a block,
    leans below the threshold (P >= :data:`RECENT_DOUBT`): the doubt that holds approvals back."""
    filling = recent.filling
    p_filling = probability_below(filling, threshold) if filling.total >= recent.half else 0.0
    return max(probability_below(recent.latest, threshold), p_filling) >= RECENT_DOUBT


def held_back(
    per_assignment: Sequence[tuple[int, int]], undecided: Sequence[bool], size: int, threshold: float
) -> GoldRecord | None:
    """The gold of the undecided work done since the recent gold first leaned below the threshold.

    ``per_assignment`` as for :func:`recent_window`, oldest first; ``undecided``: whether each
    of those assignments is still undecided (approving it is still open). The hold starts at
    the first undecided assignment after which the worker's recent gold leaned below the
    threshold (:func:`leans_below`, judged on the history up to it, so the same history gives
    the same answer whenever and however often it is judged). None when no undecided work was
    done under that doubt: :func:`judge_recent` then approves on the usual rule.
    """
    # One pass, not :func:`recent_window` over every prefix (quadratic in a long record; a sync
    # batch ran it for each judged worker): the block being filled is carried along, and the
    # latest half block ending at each assignment is found in the prefix sums.
    if size <= 0:
        return None
    half = max(1, size // 2)
    right_sums, seen_sums = [0], [0]
    for right, seen in per_assignment:
        right_sums.append(right_sums[-1] + right)
        seen_sums.append(seen_sums[-1] + seen)
    block = [0, 0]
    for start, (waiting, (right, seen)) in enumerate(zip(undecided, per_assignment, strict=True)):
        block[0], block[1] = block[0] + right, block[1] + seen
        if block[1] >= size:
            block = [0, 0]  # the block closed: the one being filled is empty
        if not waiting or seen_sums[start + 1] <= half:
            continue
        # The latest answers: back from here until at least half a block (the last j that leaves it).
        j = bisect_right(seen_sums, seen_sums[start + 1] - half) - 1
        latest = GoldRecord(right_sums[start + 1] - right_sums[j], seen_sums[start + 1] - seen_sums[j])
        if leans_below(RecentGold(latest, (), GoldRecord(block[0], block[1]), half), threshold):
            since = [g for g, w in zip(per_assignment[start:], undecided[start:], strict=True) if w]
            return GoldRecord(sum(c for c, _ in since), sum(t for _, t in since))
    return None


def judge_error_rate(
    errors: int, total: int, *, max_rate: float, confidence: float, min_total: int
) -> WorkerVerdict:
    """Approve, flag or wait, from a count of faults (e.g. misspelt words) among ``total`` observations.

    The same confidence rule as for gold, turned around: flag when
    P(fault rate > max_rate) reaches ``confidence`` after at least ``min_total``
    observations; approve when P(fault rate <= max_rate) does.
    """
    p_within = float(beta.cdf(max_rate, 1 + errors, 1 + total - errors))
    evidence = {
        "faults": errors,
        "observations": total,
        "max_fault_rate": max_rate,
        "confidence": confidence,
        "p_fault_rate_above_max": round(1 - p_within, 4),
    }
    if total >= min_total and 1 - p_within >= confidence:
        return WorkerVerdict("flag", 1 - p_within, evidence)
    if total >= min_total and p_within >= confidence:
        return WorkerVerdict("approve", 1 - p_within, evidence)
    return WorkerVerdict("undecided", 1 - p_within, evidence)
