"""Today's gold rule against the one-coin worker model, on the same simulated crowds (issue 28).

A small rating campaign in memory (no server, no database), run twice per
seed: once decided by today's rule (gold's Beta posterior, the recent-work
blocks, and the signals: straight-lining, agreement with the others'
majority, copying pairs, which hold work for a person) and once by the
worker model of :mod:`hits.requester.quality.worker_model` (gold and
agreement in one posterior, a CUSUM test for a turn; straight-lining and
copying still hold). Each worker is judged after each of their assignments,
as the live pipeline judges a synced batch's workers.

Crowds (``CROWDS``): ``issue`` is the issue's: 60 HITs of 4 items + 2 gold,
3 assignments each; 10 diligent workers right 85% of the time, 2 always
giving the same rating, 2 turning to random after 10 good answers, a pair
copying each other (the second gives the first's answers, which are random)
and 3 random, slow workers. ``mixture`` is a few bad among many good: 200
HITs, 40 diligent, one of each bad kind, the turning worker turning after 10
HITs. A flag by the model or by gold rejects the worker's undecided work and
stops them; a flag on the signals holds it and lets them go on.

Measured, pooled over seeds with 95% Wilson intervals: precision of flags
(bad workers flagged over all flagged; a turning worker flagged before its
turn, or a diligent one, is a false flag), recall within 10 gold answers
(for a turning worker, counted from its turn), diligent assignments
rejected, and late spam approved (a turning worker's assignments after the
turn that were approved).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from demo.simulation.pairs import PairTally
from hits.requester.quality.copying import agreement_p_value
from hits.requester.quality.policy import (
    GoldRecord,
    held_back,
    judge_recent,
    judge_worker,
    recent_window,
)
from hits.requester.quality.signals import (
    agrees_with_others,
    combined_verdict,
    majority_agreement_signal,
    straightline_signal,
)
from hits.requester.quality.worker_model import (
    PARTNER_MIN_SHARED,
    PARTNER_P,
    Evidence,
    WorkerEvidence,
    consensus_voters,
    judge_model,
    partner_record,
    probability_right,
)

Rule = Literal["before", "after"]
RATINGS = (1, 2, 3, 4)
RATING_WEIGHTS = (0.10, 0.20, 0.35, 0.35)
#: The profiles counted as bad (a turning worker: only after its turn).
BAD = ("fixed", "random", "turning", "copy_a", "copy_b")


@dataclass(frozen=True)
class Crowd:
    hits: int
    profiles: Mapping[str, int]
    #: A turning worker's good answers (items, gold included) before it answers at random.
    turn_after_answers: int
    items_per_hit: int = 4
    gold_per_hit: int = 2
    assignments: int = 3
    gold_pool: int = 200


CROWDS = {
    "issue": Crowd(60, {"diligent": 10, "fixed": 2, "turning": 2, "copy_a": 1, "copy_b": 1, "random": 3}, 10),
    "mixture": Crowd(
        300, {"diligent": 40, "fixed": 1, "turning": 1, "copy_a": 1, "copy_b": 1, "random": 1}, 30
    ),
}


@dataclass(frozen=True)
class Policy:
    threshold: float = 0.6
    confidence: float = 0.9
    min_gold: int = 4
    recent_gold: int = 20
    max_gold: int = 10


@dataclass
class Outcome:
    worker: str
    profile: str
    assignments: int = 0
    gold_total: int = 0
    answers_right: int = 0
    answers_total: int = 0
    flagged_at_gold: int | None = None
    flag_reason: str = ""
    turned_at_gold: int | None = None
    approved: int = 0
    rejected: int = 0
    held: int = 0
    after_turn: int = 0
    approved_after_turn: int = 0
    #: The model's mean accuracy at its last judgement (after rule only).
    predicted: float | None = None


@dataclass
class _Work:
    hit: int
    answers: list[int]
    gold: tuple[int, int]
    status: str = "pending"
    after_turn: bool = False


@dataclass
class _Worker:
    outcome: Outcome
    fixed_label: int
    stopped: bool = False
    flagged: bool = False
    work: list[_Work] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)


class _Run:
    def __init__(self, crowd: Crowd, policy: Policy, rule: Rule, seed: int) -> None:
        self.crowd, self.policy, self.rule = crowd, policy, rule
        self.rng = random.Random(seed)
        k, g = crowd.items_per_hit, crowd.gold_per_hit
        self.truth = self.rng.choices(RATINGS, RATING_WEIGHTS, k=crowd.hits * k)
        self.gold = self.rng.choices(RATINGS, RATING_WEIGHTS, k=crowd.gold_pool)
        pool = list(range(crowd.gold_pool))
        self.rng.shuffle(pool)
        # Each HIT: ("item", i) or ("gold", j) per slot, gold dealt from the shuffled pool in turn.
        self.layout: list[list[tuple[str, int]]] = []
        for h in range(crowd.hits):
            slots = [("item", h * k + i) for i in range(k)]
            slots += [("gold", pool[(h * g + j) % len(pool)]) for j in range(g)]
            self.rng.shuffle(slots)
            self.layout.append(slots)
        self.open = [crowd.assignments] * crowd.hits
        self.workers: dict[str, _Worker] = {}
        for profile, count in crowd.profiles.items():
            for n in range(count):
                name = f"{profile}-{n}"
                self.workers[name] = _Worker(Outcome(name, profile), self.rng.choice((3, 4)))
        #: Per real item: (worker, answer) of the labels that count.
        self.labels: dict[int, list[tuple[str, int]]] = defaultdict(list)
        self.hit_work: dict[int, list[tuple[str, list[int]]]] = defaultdict(list)
        self.pairs = PairTally()
        self.label_counts: Counter[int] = Counter()

    # -- the crowd ---------------------------------------------------------------------------
    def _answer(self, worker: _Worker, slot: tuple[str, int], hit: int) -> int:
        kind, index = slot
        true = self.gold[index] if kind == "gold" else self.truth[index]
        profile = worker.outcome.profile
        if profile == "turning" and worker.outcome.turned_at_gold is not None:
            profile = "random"
        if profile == "fixed":
            return worker.fixed_label
        if profile in ("random", "copy_a", "copy_b"):
            return self.rng.randint(1, 4)
        if self.rng.random() < 0.85:
            return true
        return self.rng.choice([r for r in (true - 1, true + 1) if 1 <= r <= 4])

    def run(self) -> list[Outcome]:
        active = sorted(self.workers)
        while active and any(self.open):
            name = self.rng.choice(active)
            worker = self.workers[name]
            done = {w.hit for w in worker.work}
            hit = next((h for h in range(self.crowd.hits) if self.open[h] and h not in done), None)
            if hit is None or worker.stopped:
                active.remove(name)
                continue
            self._work(worker, hit)
            # A copying pair: whichever of the two takes a HIT, the other takes it right after,
            # with the same answers (two accounts of one person; alone, it answers at random).
            partner = self.workers.get(self._partner_name(name) or "")
            if (
                partner
                and not partner.stopped
                and self.open[hit]
                and hit not in {w.hit for w in partner.work}
            ):
                self._work(partner, hit, copy_of=worker)
        for worker in self.workers.values():
            for w in worker.work:
                if w.status == "pending":
                    w.status = "held"
                    worker.outcome.held += 1
        return [w.outcome for w in self.workers.values()]

    @staticmethod
    def _partner_name(name: str) -> str | None:
        if name.startswith("copy_a"):
            return name.replace("copy_a", "copy_b")
        if name.startswith("copy_b"):
            return name.replace("copy_b", "copy_a")
        return None

    def _work(self, worker: _Worker, hit: int, copy_of: _Worker | None = None) -> None:
        out = worker.outcome
        turns = out.profile == "turning" and out.turned_at_gold is None
        if turns and out.answers_total >= self.crowd.turn_after_answers:
            out.turned_at_gold = out.gold_total
        slots = self.layout[hit]
        if copy_of is not None:
            answers = list(copy_of.work[-1].answers)
        else:
            answers = [self._answer(worker, s, hit) for s in slots]
        self.open[hit] -= 1
        right = total = 0
        real = []
        for i, ((kind, index), a) in enumerate(zip(slots, answers, strict=True)):
            true = self.gold[index] if kind == "gold" else self.truth[index]
            out.answers_right += a == true
            out.answers_total += 1
            if kind == "gold":
                right, total = right + (a == true), total + 1
            else:
                real.append(i)
        for other, other_answers in self.hit_work[hit]:
            self.pairs.add(out.worker, other, answers, other_answers, real)
        self.hit_work[hit].append((out.worker, answers))
        for (kind, index), a in zip(slots, answers, strict=True):
            if kind == "item":
                self.labels[index].append((out.worker, a))
                self.label_counts[a] += 1
        out.gold_total += total
        out.assignments += 1
        if out.turned_at_gold is not None:
            out.after_turn += 1
        worker.answers.extend(answers)
        worker.work.append(_Work(hit, answers, (right, total), "pending", out.turned_at_gold is not None))
        self._decide(worker)

    # -- deciding --------------------------------------------------------------------------
    def _gold_record(self, name: str) -> GoldRecord:
        work = self.workers[name].work
        return GoldRecord(sum(w.gold[0] for w in work), sum(w.gold[1] for w in work))

    def _copying(self, name: str, bound: float, min_shared: int) -> set[str]:
        found = set()
        for other in self.pairs.partners.get(name, ()):
            shared, identical = self.pairs.counts[(min(name, other), max(name, other))]
            if shared >= min_shared and (
                agreement_p_value(identical, shared, self._gold_record(name), self._gold_record(other))
                <= bound
            ):
                found.add(other)
        return found

    def _decide(self, worker: _Worker) -> None:
        p = self.policy
        name = worker.outcome.worker
        gold = self._gold_record(name)
        suspicious = []
        if self.rule == "before":
            history = [w.gold for w in worker.work]
            undecided = [w.status == "pending" for w in worker.work]
            recent = recent_window(history, p.recent_gold)
            held = held_back(history, undecided, p.recent_gold, p.threshold) if recent else None
            verdict = judge_recent(
                judge_worker(gold, threshold=p.threshold, confidence=p.confidence, min_gold=p.min_gold),
                recent,
                threshold=p.threshold,
                confidence=p.confidence,
                held=held,
            )
            reason = "recent gold" if verdict.evidence.get("flagged_on") else "gold"
        else:
            verdict = judge_model(
                self._evidence(worker),
                threshold=p.threshold,
                confidence=p.confidence,
                min_gold=p.min_gold,
                classes=len(RATINGS),
            )
            worker.outcome.predicted = verdict.evidence["model_accuracy"]
            reason = str(verdict.evidence.get("flagged_on", "model"))
        by_model = verdict.verdict == "flag"
        decision = verdict.verdict
        if decision != "flag" and self._copying(name, 1e-6, 20):
            decision, suspicious = "flag", ["copying"]
        elif decision == "undecided" and gold.total >= p.min_gold:
            if straightline_signal(worker.answers).suspicious:
                suspicious.append("straightline")
            if self.rule == "before" and self._majority_suspicious(worker):
                suspicious.append("agreement")
            decision = combined_verdict(verdict, suspicious, gold_total=gold.total, min_gold=p.min_gold)
        out = worker.outcome
        if decision == "flag" and out.flagged_at_gold is None:
            out.flagged_at_gold = out.gold_total
            out.flag_reason = reason if by_model else "+".join(suspicious)
        worker.flagged = worker.flagged or decision == "flag"
        if decision == "undecided":
            return
        for w in worker.work:
            if w.status != "pending":
                continue
            if decision == "approve":
                w.status = "approved"
                out.approved += 1
                out.approved_after_turn += bool(w.after_turn)
            elif by_model:
                w.status = "rejected"
                out.rejected += 1
                self.open[w.hit] += 1
                self._drop_labels(name, w.hit)
            else:
                w.status = "held"
                out.held += 1
                self._drop_labels(name, w.hit)
        worker.stopped = worker.stopped or by_model

    def _drop_labels(self, name: str, hit: int) -> None:
        for kind, index in self.layout[hit]:
            if kind == "item":
                self.labels[index] = [(w, a) for w, a in self.labels[index] if w != name]

    def _majority_suspicious(self, worker: _Worker) -> bool:
        agreed = compared = 0
        name = worker.outcome.worker
        for w in worker.work:
            for (kind, index), a in zip(self.layout[w.hit], w.answers, strict=True):
                if kind != "item":
                    continue
                agrees = agrees_with_others(a, Counter(x for o, x in self.labels[index] if o != name))
                if agrees is not None:
                    agreed, compared = agreed + agrees, compared + 1
        return majority_agreement_signal(agreed, compared, confidence=self.policy.confidence).suspicious

    def _evidence(self, worker: _Worker) -> WorkerEvidence:
        name = worker.outcome.worker
        total = sum(self.label_counts.values()) + len(RATINGS)
        priors: dict[Hashable, float] = {r: (self.label_counts[r] + 1) / total for r in RATINGS}
        accuracy: dict[str, float] = {}
        per_assignment = []
        for w in worker.work:
            evidence = []
            for (kind, index), a in zip(self.layout[w.hit], w.answers, strict=True):
                if kind == "gold":
                    evidence.append(Evidence(1.0 if a == self.gold[index] else 0.0, True))
                    continue
                others = consensus_voters(self.labels[index], name, self._partner_of)
                for o, _ in others:
                    if o not in accuracy:
                        g = self._gold_record(o)
                        accuracy[o] = (g.correct + 1) / (g.total + 2)
                p = probability_right(a, [(x, accuracy[o]) for o, x in others], priors)
                if p is not None:
                    evidence.append(Evidence(p, False))
            per_assignment.append(evidence)
        return WorkerEvidence(per_assignment, [w.status == "pending" for w in worker.work])

    def _partner_of(self, first: str, second: str) -> bool:
        key = (min(first, second), max(first, second))
        if key not in self.pairs.counts:
            return False
        shared, identical = self.pairs.counts[key]
        better = partner_record(self._gold_record(first), self._gold_record(second))
        return shared >= PARTNER_MIN_SHARED and (
            agreement_p_value(identical, shared, better, better) <= PARTNER_P
        )


# -- measuring ---------------------------------------------------------------------------------


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return (max(0.0, centre - half), min(1.0, centre + half))


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


def figures(
    outcomes: Sequence[Outcome], policy: Policy, gold_per_assignment: float
) -> dict[str, Figure | float]:
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
        "gold_per_assignment": gold_per_assignment,
    }


def run(crowd: Crowd, policy: Policy, rule: Rule, seeds: Sequence[int]) -> list[Outcome]:
    """Every worker's outcome over the seeds (one campaign per seed)."""
    return [o for seed in seeds for o in _Run(crowd, policy, rule, seed).run()]


LABELS = {
    "precision": ("precision of flags", ">= 0.98"),
    "recall": ("recall within 10 gold answers", ">= 0.95"),
    "diligent_rejected": ("diligent assignments rejected", "< 0.01"),
    "diligent_held": ("diligent assignments held for a person", "-"),
    "late_spam_approved": ("late spam approved (after the turn)", "< 0.10"),
    "gold_per_assignment": ("gold per assignment", "no higher"),
}


def compare(crowd_name: str, seeds: int, policy: Policy | None = None) -> str:
    """The before/after table of one crowd over seeds 1..``seeds``, as text (Markdown)."""
    policy = policy or Policy()
    crowd = CROWDS[crowd_name]
    results = {rule: run(crowd, policy, rule, range(1, seeds + 1)) for rule in ("before", "after")}
    table = {rule: figures(out, policy, float(crowd.gold_per_hit)) for rule, out in results.items()}
    lines = [
        f"crowd {crowd_name}: {crowd.hits} HITs x ({crowd.items_per_hit} items + "
        f"{crowd.gold_per_hit} gold) x "
        f"{crowd.assignments}; {dict(crowd.profiles)}; threshold {policy.threshold}, confidence "
        f"{policy.confidence}, min_gold {policy.min_gold}; seeds 1..{seeds}; pooled, 95% Wilson intervals",
        "",
        "| metric | target | before (today's rule) | after (worker model) |",
        "|---|---|---|---|",
    ]
    for name, (label, target) in LABELS.items():
        cells = [
            v.text() if isinstance(v, Figure) else f"{v:.2f}"
            for v in (table["before"][name], table["after"][name])
        ]
        lines.append(f"| {label} | {target} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "| profile | workers | flagged before / after | within 10 gold before / after "
        "| median gold at flag before / after |",
        "|---|---|---|---|---|",
    ]
    for profile in crowd.profiles:
        row: list[tuple[int, int, int | str, int]] = []
        for rule in ("before", "after"):
            group = [o for o in results[rule] if o.profile == profile]
            at = sorted(
                (o.flagged_at_gold - (o.turned_at_gold or 0)) for o in group if o.flagged_at_gold is not None
            )
            row.append(
                (
                    len(group),
                    len(at),
                    at[len(at) // 2] if at else "-",
                    sum(0 < n <= policy.max_gold for n in at),
                )
            )
        b, a = row
        lines.append(f"| {profile} | {b[0]} | {b[1]} / {a[1]} | {b[3]} / {a[3]} | {b[2]} / {a[2]} |")
    lines += [
        "",
        "Reliability of the model (after): predicted mean accuracy at the last judgement against the",
        "worker's true accuracy over all answers, by prediction",
        "",
        "| predicted | workers | mean predicted | mean observed |",
        "|---|---|---|---|",
    ]
    from hits.requester.quality.worker_model import reliability_table

    judged = [o for o in results["after"] if o.predicted is not None and o.answers_total]
    for bin_ in reliability_table(
        [o.predicted or 0.0 for o in judged], [o.answers_right / o.answers_total for o in judged]
    ):
        lines.append(
            f"| {bin_.low:.1f}-{bin_.high:.1f} | {bin_.workers} "
            f"| {bin_.predicted:.3f} | {bin_.observed:.3f} |"
        )
    return "\n".join(lines)
