"""Grading-core throughput: gold scoring and the decision rule, without database or queue.

``python -m bench.grading_core [--assignments 100000]`` grades rating
assignments (4 items + 2 gold each) through the real rating template's
``score_gold_item`` / ``gold_passed`` and ``judge_worker`` after every
assignment, in a tight loop, and prints assignments per second. This is the
ceiling for the CPU work of the review pipeline; it leaves out everything
around it (SQL, the API round trips, Celery).

It runs the loop four ways: with the memoised Beta posterior from a cold
cache, again with a warm cache, and on a slice with the memo bypassed (one
``scipy.special.betainc`` call per judgement), and with the path used before
(one ``scipy.stats.beta.cdf`` call per judgement).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections.abc import Callable

import scipy
from scipy.stats import beta

from bench.results import export
from hits.requester.quality import policy
from hits.requester.quality.policy import GoldRecord, judge_worker
from hits.requester.templates import get_template

ITEMS, GOLD = 4, 2
Assignment = tuple[int, list[int], list[tuple[int, int]]]  # worker, answers, (position, true rating)


def make_assignments(count: int, workers: int, seed: int) -> list[Assignment]:
    """Assignments with gold at random positions; a worker is right on gold with their own accuracy."""
    rng = random.Random(seed)
    accuracy = [rng.choice((0.95, 0.95, 0.95, 0.65, 0.25)) for _ in range(workers)]
    out = []
    for _ in range(count):
        worker = rng.randrange(workers)
        answers = [rng.randint(1, 4) for _ in range(ITEMS + GOLD)]
        gold = []
        for position in rng.sample(range(ITEMS + GOLD), GOLD):
            true = rng.randint(1, 4)
            if rng.random() < accuracy[worker]:
                answers[position] = true
            gold.append((position, true))
        out.append((worker, answers, gold))
    return out


def grade_all(assignments: list[Assignment], workers: int) -> tuple[float, dict[str, int]]:
    """Grade every assignment and judge its worker; return (seconds, verdict counts)."""
    template = get_template("rating")
    options = {"gold_tolerance": 0}
    payload = {"image": "x.png", "sentence": "A red circle above a blue square."}
    keys = {r: {"rating": r} for r in range(1, 5)}
    correct = [0] * workers
    total = [0] * workers
    verdicts = {"approve": 0, "flag": 0, "undecided": 0}
    started = time.perf_counter()
    for worker, answers, gold in assignments:
        for position, true in gold:
            score = template.score_gold_item(answers[position], keys[true], payload, options)
            correct[worker] += template.gold_passed(score, options)
            total[worker] += 1
        verdict = judge_worker(
            GoldRecord(correct[worker], total[worker]), threshold=0.6, confidence=0.9, min_gold=3
        )
        verdicts[verdict.verdict] += 1
    return time.perf_counter() - started, verdicts


def _stats_cdf(threshold: float, correct: int, wrong: int) -> float:
    return float(beta.cdf(threshold, 1 + correct, 1 + wrong))


def uncached(
    run: Callable[[], tuple[float, dict[str, int]]], old_path: bool = False
) -> tuple[float, dict[str, int]]:
    """Run with the memo bypassed: every judgement calls betainc (or, ``old_path``, scipy.stats)."""
    cached = policy._beta_cdf
    policy._beta_cdf = _stats_cdf if old_path else cached.__wrapped__  # type: ignore[assignment]
    try:
        return run()
    finally:
        policy._beta_cdf = cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignments", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=1_000)
    parser.add_argument("--uncached-slice", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    assignments = make_assignments(args.assignments, args.workers, args.seed)
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
        f"scipy {scipy.__version__}"
    )
    print(f"{args.assignments:,} assignments ({ITEMS} items + {GOLD} gold), {args.workers:,} workers")
    policy._beta_cdf.cache_clear()
    cold, verdicts = grade_all(assignments, args.workers)
    warm, again = grade_all(assignments, args.workers)
    assert again == verdicts
    piece = assignments[: args.uncached_slice]
    direct, direct_verdicts = uncached(lambda: grade_all(piece, args.workers))
    old, old_verdicts = uncached(lambda: grade_all(piece, args.workers), old_path=True)
    # Every path must reach the same verdicts on the same slice.
    assert grade_all(piece, args.workers)[1] == direct_verdicts == old_verdicts
    info = policy._beta_cdf.cache_info()
    print(f"verdicts: {verdicts}; distinct gold records cached: {info.currsize:,}")
    print(f"cached, cold cache:  {args.assignments / cold:>12,.0f} assignments/s ({cold:.3f} s)")
    print(f"cached, warm cache:  {args.assignments / warm:>12,.0f} assignments/s ({warm:.3f} s)")
    print(f"no memo, betainc:    {len(piece) / direct:>12,.0f} assignments/s (on {len(piece):,})")
    print(f"old path, beta.cdf:  {len(piece) / old:>12,.0f} assignments/s (on {len(piece):,})")
    export(
        {
            "assignments": args.assignments,
            "workers": args.workers,
            "slice": len(piece),
            "rates": {
                "cached, cold cache": args.assignments / cold,
                "cached, warm cache": args.assignments / warm,
                "no memo, betainc": len(piece) / direct,
                "old path, beta.cdf": len(piece) / old,
            },
        }
    )


if __name__ == "__main__":
    main()
