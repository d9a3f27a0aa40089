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
and 3 random, slow workers. ``mixture`` is a few bad among many good: 300
HITs, 40 diligent, one of each bad kind, the turning worker turning after 30
answers. A flag by the model or by gold rejects the worker's undecided work and
stops them; a flag on the signals holds it and lets them go on.

``issue-adaptive`` and ``mixture-adaptive`` are the same crowds with adaptive
gold (:mod:`demo.simulation.adaptive`): newcomer HITs of 3 gold + 3 items,
trusted HITs of 1 gold + 5 items, interleaved so the gold budget stays 2 per
HIT; a worker is trusted after an approving verdict on at least 8 gold answers
and loses it (for good) on a flag. The question they answer: are bad
newcomers stopped in fewer assignments, at what cost in catching a trusted
worker's turn, for the same gold.

The figures (precision, recall, late spam, the table) are
:mod:`demo.simulation.model_figures`'.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from demo.simulation.adaptive import Slot, Tier, pick, plan
from demo.simulation.pairs import PairTally
from hits.requester.quality.copying import agreement_p_value
from hits.requester.quality.policy import (
    GoldRecord,
    WorkerVerdict,
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
    voter_accuracy,
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
    #: (newcomers, trusted): gold on a newcomer and on a trusted HIT of the same page size
    #: (:mod:`demo.simulation.adaptive`); None: every HIT carries gold_per_hit.
    adaptive_gold: tuple[int, int] | None = None
    #: Gold answers a worker needs, with an approving verdict, before it is trusted.
    trust_after_gold: int = 8


CROWDS = {
    "issue": Crowd(60, {"diligent": 10, "fixed": 2, "turning": 2, "copy_a": 1, "copy_b": 1, "random": 3}, 10),
    "mixture": Crowd(
        300, {"diligent": 40, "fixed": 1, "turning": 1, "copy_a": 1, "copy_b": 1, "random": 1}, 30
    ),
}
# The same crowds with adaptive gold: 3 gold on a newcomer's HIT, 1 on a trusted worker's, 2 on
# average, so the gold budget is the plain crowd's and only who sees the gold changes.
CROWDS["issue-adaptive"] = replace(CROWDS["issue"], adaptive_gold=(3, 1))
CROWDS["mixture-adaptive"] = replace(CROWDS["mixture"], adaptive_gold=(3, 1))


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
    #: Assignments done when flagged, and before the turn (a turning worker): how many
    #: assignments a bad worker's work cost before it was stopped, which gold counts hide when
    #: assignments carry different gold.
    flagged_at_assignment: int | None = None
    turned_at_assignment: int | None = None
    #: Gold answers when trusted (adaptive gold only), and whether the trust was revoked.
    trusted_at_gold: int | None = None
    trust_revoked: bool = False
    #: Gold answers on the worker's rejected assignments: gold the campaign paid for whose HIT
    #: is done again (a rejection reopens it), which the plan's gold budget does not count.
    gold_rejected: int = 0


@dataclass
class _Work:
    hit: int
    answers: list[int]
    gold: tuple[int, int]
    status: str = "pending"
    after_turn: bool = False
    #: The HIT's tier, and whether the worker was trusted when it took it (adaptive gold).
    tier: Tier = "plain"
    trusted: bool = False


@dataclass
class _Worker:
    outcome: Outcome
    fixed_label: int
    stopped: bool = False
    flagged: bool = False
    trusted: bool = False
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
        self.layout: list[list[Slot]] = []
        self.tiers: list[Tier] = []
        if crowd.adaptive_gold is not None:
            self.layout, self.tiers = plan(self.rng, crowd.hits * k, k, g, pool, crowd.adaptive_gold)
        else:
            for h in range(crowd.hits):
                slots = [("item", h * k + i) for i in range(k)]
                slots += [("gold", pool[(h * g + j) % len(pool)]) for j in range(g)]
                self.rng.shuffle(slots)
                self.layout.append(slots)
            self.tiers = ["plain"] * crowd.hits
        self.open = [crowd.assignments] * len(self.layout)
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
            hit = self._next_hit(worker)
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
                and (self.tiers[hit] != "trusted" or partner.trusted)
            ):
                self._work(partner, hit, copy_of=worker)
        for worker in self.workers.values():
            for w in worker.work:
                if w.status == "pending":
                    w.status = "held"
                    worker.outcome.held += 1
        return [w.outcome for w in self.workers.values()]

    def _next_hit(self, worker: _Worker) -> int | None:
        """The oldest open HIT the worker has not done (the Accept button), within its tiers."""
        done = {w.hit for w in worker.work}
        if self.crowd.adaptive_gold is not None:
            return pick(self.tiers, self.open, done, worker.trusted)
        return next((h for h in range(len(self.layout)) if self.open[h] and h not in done), None)

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
            out.turned_at_assignment = out.assignments
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
        worker.work.append(
            _Work(
                hit,
                answers,
                (right, total),
                "pending",
                out.turned_at_gold is not None,
                self.tiers[hit],
                worker.trusted,
            )
        )
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
            out.flagged_at_assignment = out.assignments
            out.flag_reason = reason if by_model else "+".join(suspicious)
        worker.flagged = worker.flagged or decision == "flag"
        if self.crowd.adaptive_gold is not None:
            self._trust(worker, verdict)
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
                out.gold_rejected += w.gold[1]
                self.open[w.hit] += 1
                self._drop_labels(name, w.hit)
            else:
                w.status = "held"
                out.held += 1
                self._drop_labels(name, w.hit)
        worker.stopped = worker.stopped or by_model

    def _trust(self, worker: _Worker, verdict: WorkerVerdict) -> None:
        """Grant the "trusted" qualification once, on a confident approval; revoke it on a flag.

        The rule's own verdict (gold's for the before rule, the model's for the after rule)
        decides, as the live grant would read it. Trust is never granted again once revoked: a
        worker who was flagged has shown it can turn, and a trusted HIT's single gold answer
        would be slow to show it again.
        """
        out, p = worker.outcome, self.policy
        if worker.flagged:
            out.trust_revoked = out.trust_revoked or worker.trusted
            worker.trusted = False
            return
        if (
            out.trusted_at_gold is None
            and verdict.verdict == "approve"
            and out.gold_total >= self.crowd.trust_after_gold
            and verdict.p_below <= 1 - p.confidence
        ):
            worker.trusted = True
            out.trusted_at_gold = out.gold_total

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
                        accuracy[o] = voter_accuracy(g, len(RATINGS))
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


def run(crowd: Crowd, policy: Policy, rule: Rule, seeds: Sequence[int]) -> list[Outcome]:
    """Every worker's outcome over the seeds (one campaign per seed)."""
    return [o for seed in seeds for o in _Run(crowd, policy, rule, seed).run()]
