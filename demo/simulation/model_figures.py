"""The figures of :mod:`demo.simulation.model_compare`: the metrics with Wilson intervals, the table.

Measured, pooled over seeds with 95% Wilson intervals: precision of flags
(bad workers flagged over all flagged; a turning worker flagged before its
turn, or a diligent one, is a false flag), recall within 10 gold answers
(for a turning worker, counted from its turn), diligent assignments
rejected, and late spam approved (a turning worker's assignments after the
turn that were approved). Gold per assignment is measured too (gold answers
shown over assignments done, rejected ones included), not read off the plan:
with adaptive gold it depends on who took which tier and which HITs were
redone after a rejection; it is shown also over the assignments not rejected,
the ones the plan's budget is about. Assignments before the flag is the median number of
assignments a flagged bad worker completed (a turning worker's counted from
its turn): what a bad worker's work cost before it was stopped, which the
gold-count figures hide when assignments carry different gold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from demo.simulation.model_compare import BAD, CROWDS, Outcome, Policy, run
from hits.requester.quality.worker_model import reliability_table


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Median:
    """A median over ``n`` workers (nan when there are none), with the mean beside it.

    The mean is shown because counts of a few assignments tie: two crowds can share a median of
    2 while one stops a tenth of its bad workers an assignment later.
    """

    value: float
    n: int
    mean: float = float("nan")

    def text(self) -> str:
        return f"{self.value:g} (median of {self.n}; mean {self.mean:.2f})" if self.n else "- (none flagged)"


def median(values: Sequence[int]) -> Median:
    ordered = sorted(values)
    if not ordered:
        return Median(float("nan"), 0)
    mid = len(ordered) // 2
    value = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return Median(float(value), len(ordered), sum(ordered) / len(ordered))


@dataclass(frozen=True)
class Figure:
    numerator: int
    denominator: int

    @property
    def value(self) -> float:
        return self.numerator / self.denominator if self.denominator else float("nan")

    def text(self) -> str:
        low, high = wilson(self.numerator, self.denominator)
        return f"{self.value:.3f} ({self.numerator}/{self.denominator}; {low:.3f}-{high:.3f})"


def _bad(o: Outcome) -> bool:
    if o.profile == "turning":
        return (
            o.flagged_at_gold is not None
            and o.turned_at_gold is not None
            and o.flagged_at_gold > o.turned_at_gold
        )
    return o.profile in BAD


def assignments_before_flag(o: Outcome) -> int | None:
    """Assignments a flagged bad worker completed before the flag (from its turn, if turning).

    The flagging assignment counts: its work was done (and paid for, unless rejected) when the
    judgement after it flagged the worker. None for a worker not flagged as bad.
    """
    if o.flagged_at_assignment is None or not _bad(o):
        return None
    start = o.turned_at_assignment if o.profile == "turning" else 0
    return o.flagged_at_assignment - (start or 0)


def gold_per_assignment(outcomes: Sequence[Outcome], *, kept_only: bool = False) -> float:
    """Gold answers shown over assignments done, every worker and every assignment (rejected too).

    ``kept_only``: over the assignments not rejected. A rejection reopens the HIT, so its gold is
    shown again to whoever redoes it; the plan's budget holds for the kept assignments, and the
    difference between the two figures is the gold spent on rejected work. With adaptive gold
    that work sits mostly on newcomer HITs (more gold than average), so the all-assignments
    figure can exceed the plan's gold per HIT.
    """
    done = sum(o.assignments - (o.rejected if kept_only else 0) for o in outcomes)
    gold = sum(o.gold_total - (o.gold_rejected if kept_only else 0) for o in outcomes)
    return gold / done if done else float("nan")


def figures(outcomes: Sequence[Outcome], policy: Policy) -> dict[str, Figure | Median | float]:
    """The issue's figures, pooled over every run's workers."""
    flagged = [o for o in outcomes if o.flagged_at_gold is not None]
    bad = [
        o for o in outcomes if o.profile in BAD and (o.profile != "turning" or o.turned_at_gold is not None)
    ]

    def caught(o: Outcome) -> bool:
        if o.flagged_at_gold is None:
            return False
        start = o.turned_at_gold if o.profile == "turning" else 0
        return (
            start is not None
            and start < o.flagged_at_gold <= start + policy.max_gold
            or (o.profile != "turning" and o.flagged_at_gold <= policy.max_gold)
        )

    diligent = [o for o in outcomes if o.profile == "diligent"]
    turning = [o for o in outcomes if o.profile == "turning"]
    return {
        "precision": Figure(sum(_bad(o) for o in flagged), len(flagged)),
        "recall": Figure(sum(caught(o) for o in bad), len(bad)),
        "diligent_rejected": Figure(sum(o.rejected for o in diligent), sum(o.assignments for o in diligent)),
        "diligent_held": Figure(sum(o.held for o in diligent), sum(o.assignments for o in diligent)),
        "late_spam_approved": Figure(
            sum(o.approved_after_turn for o in turning), sum(o.after_turn for o in turning)
        ),
        "assignments_before_flag": median(
            [n for n in map(assignments_before_flag, outcomes) if n is not None]
        ),
        "gold_per_assignment": gold_per_assignment(outcomes),
        "gold_per_kept_assignment": gold_per_assignment(outcomes, kept_only=True),
    }


LABELS = {
    "precision": ("precision of flags", ">= 0.98"),
    "recall": ("recall within 10 gold answers", ">= 0.95"),
    "diligent_rejected": ("diligent assignments rejected", "< 0.01"),
    "diligent_held": ("diligent assignments held for a person", "-"),
    "late_spam_approved": ("late spam approved (after the turn)", "< 0.10"),
    "assignments_before_flag": ("assignments before the flag (bad workers, from the turn)", "lower"),
    "gold_per_assignment": ("gold per assignment (measured, every assignment done)", "no higher"),
    "gold_per_kept_assignment": ("gold per assignment not rejected (measured)", "no higher"),
}


def compare(crowd_name: str, seeds: int, policy: Policy | None = None) -> str:
    """The before/after table of one crowd over seeds 1..``seeds``, as text (Markdown)."""
    policy = policy or Policy()
    crowd = CROWDS[crowd_name]
    results = {rule: run(crowd, policy, rule, range(1, seeds + 1)) for rule in ("before", "after")}
    table = {rule: figures(out, policy) for rule, out in results.items()}
    adaptive = ""
    if crowd.adaptive_gold is not None:
        newcomers, trusted = crowd.adaptive_gold
        adaptive = (
            f"; adaptive gold: {newcomers} gold on a newcomer's HIT, {trusted} on a trusted worker's "
            f"(trusted after {crowd.trust_after_gold} gold)"
        )
    lines = [
        f"crowd {crowd_name}: {crowd.hits} HITs x ({crowd.items_per_hit} items + "
        f"{crowd.gold_per_hit} gold) x "
        f"{crowd.assignments}{adaptive}; {dict(crowd.profiles)}; threshold {policy.threshold}, confidence "
        f"{policy.confidence}, min_gold {policy.min_gold}; seeds 1..{seeds}; pooled, 95% Wilson intervals",
        "",
        "| metric | target | before (today's rule) | after (worker model) |",
        "|---|---|---|---|",
    ]
    for name, (label, target) in LABELS.items():
        cells = [
            v.text() if isinstance(v, Figure | Median) else f"{v:.2f}"
            for v in (table["before"][name], table["after"][name])
        ]
        lines.append(f"| {label} | {target} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "| profile | workers | flagged before / after | within 10 gold before / after "
        "| median gold at flag before / after | median assignments at flag before / after |",
        "|---|---|---|---|---|---|",
    ]
    for profile in crowd.profiles:
        row: list[tuple[int, int, int | str, int, int | str]] = []
        for rule in ("before", "after"):
            group = [o for o in results[rule] if o.profile == profile]
            at = sorted(
                (o.flagged_at_gold - (o.turned_at_gold or 0)) for o in group if o.flagged_at_gold is not None
            )
            # Assignments, counted as gold is: from the turn for a turning worker.
            jobs = sorted(
                o.flagged_at_assignment - (o.turned_at_assignment or 0)
                for o in group
                if o.flagged_at_assignment is not None
            )
            row.append(
                (
                    len(group),
                    len(at),
                    at[len(at) // 2] if at else "-",
                    sum(0 < n <= policy.max_gold for n in at),
                    jobs[len(jobs) // 2] if jobs else "-",
                )
            )
        b, a = row
        lines.append(
            f"| {profile} | {b[0]} | {b[1]} / {a[1]} | {b[3]} / {a[3]} | {b[2]} / {a[2]} | {b[4]} / {a[4]} |"
        )
    lines += [
        "",
        "Reliability of the model (after): predicted mean accuracy at the last judgement against the",
        "worker's true accuracy over all answers, by prediction",
        "",
        "| predicted | workers | mean predicted | mean observed |",
        "|---|---|---|---|",
    ]
    judged = [o for o in results["after"] if o.predicted is not None and o.answers_total]
    for bin_ in reliability_table(
        [o.predicted or 0.0 for o in judged], [o.answers_right / o.answers_total for o in judged]
    ):
        lines.append(
            f"| {bin_.low:.1f}-{bin_.high:.1f} | {bin_.workers} "
            f"| {bin_.predicted:.3f} | {bin_.observed:.3f} |"
        )
    return "\n".join(lines)
