"""A sync batch's decision step with the worker model on and off, in the same run (issue 28).

    python -m bench.decision_step [--hits 2000] [--batch 300] [--repeats 5]

Setup (not timed) writes a graded rating campaign straight into a SQLite file's requester
tables: ``--hits`` HITs of 4 items + 2 gold, 3 assignments each, 40 workers (90% right 85% of
the time, the rest at random). The timed part is
:func:`hits.requester.quality.gold_verdicts.judge_gold` for the workers of the newest ``--batch``
assignments (what a sync batch decides), once with ``worker_model: false`` and once with
``worker_model: true``, alternating, ``--repeats`` times; the medians and their ratio are printed.
Each side is what a sync batch pays for it: off, gold's posterior and the signals for undecided
workers (the agreement signal's Dawid-Skene fit among them); on, the model (its leave-one-out
consensus for every ordinary answer of the batch's workers) and the other signals (the model
counts agreement itself, so the fit is skipped).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

from sqlalchemy import select

from hits.db import RequesterBase, make_engine, make_session_factory, utcnow
from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality.gold_verdicts import judge_gold
from hits.requester.tables.campaigns import (
    Campaign,
    GoldItem,
    HITSlot,
    Item,
    PublishedHIT,
    Submission,
    WorkerStats,
)


def _setup(url: str, hits: int, seed: int) -> int:
    rng = random.Random(seed)
    engine = make_engine(url)
    RequesterBase.metadata.create_all(engine)
    workers = [f"W{i:04d}" for i in range(40)]
    good = set(workers[:36])
    stats = {w: [0, 0, 0] for w in workers}
    start = utcnow() - timedelta(days=1)
    with make_session_factory(engine)() as session:
        campaign = Campaign(name="bench", template="rating", spec={}, budget=Decimal("1000"))
        session.add(campaign)
        session.flush()
        golds = [
            GoldItem(campaign_id=campaign.id, external_id=f"g{i}", payload={}, answer=0) for i in range(200)
        ]
        session.add_all(golds)
        session.flush()
        n = 0
        for h in range(hits):
            hit = PublishedHIT(campaign_id=campaign.id, status="reviewable")
            session.add(hit)
            session.flush()
            items = [
                Item(campaign_id=campaign.id, position=4 * h + k, external_id=f"i{h}-{k}", payload={})
                for k in range(4)
            ]
            session.add_all(items)
            session.flush()
            truth = [rng.randint(1, 4) for _ in range(6)]
            for position in range(6):
                slot = HITSlot(published_hit_id=hit.id, position=position)
                if position < 4:
                    slot.item_id = items[position].id
                else:
                    slot.gold_item_id = golds[(2 * h + position) % len(golds)].id
                session.add(slot)
            for worker in rng.sample(workers, 3):
                answers = [t if worker in good and rng.random() < 0.85 else rng.randint(1, 4) for t in truth]
                right = sum(a == t for a, t in zip(answers[4:], truth[4:], strict=True))
                n += 1
                session.add(
                    Submission(
                        assignment_id=f"A{n:08d}",
                        published_hit_id=hit.id,
                        worker_id=worker,
                        answers={"answers": answers},
                        submitted_at=start + timedelta(seconds=n),
                        gold_correct=right,
                        gold_total=2,
                        graded=True,
                    )
                )
                stats[worker][0] += right
                stats[worker][1] += 2
                stats[worker][2] += 1
        for w, (c, t, a) in stats.items():
            session.add(
                WorkerStats(campaign_id=campaign.id, worker_id=w, gold_correct=c, gold_total=t, assignments=a)
            )
        session.commit()
        return campaign.id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hits", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        campaign_id = _setup(url, args.hits, seed=1)
        factory = make_session_factory(make_engine(url))
        with factory() as session:
            newest = session.scalars(
                select(Submission.worker_id).order_by(Submission.id.desc()).limit(args.batch)
            ).all()
            records = list(
                session.scalars(
                    select(WorkerStats).where(
                        WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id.in_(set(newest))
                    )
                )
            )
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.repeats):
                for model in (False, True):
                    policy = QualityPolicy(min_gold=4, worker_model=model)
                    started = time.perf_counter()
                    judge_gold(session, campaign_id, records, policy, straightline=True)
                    times[model].append(time.perf_counter() - started)
            session.rollback()
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"{args.hits} HITs x 3 assignments, a batch of {args.batch} assignments ({len(records)} workers); "
        f"median of {args.repeats}: model off {off * 1000:.0f} ms, on {on * 1000:.0f} ms, "
        f"on/off {on / off:.2f}"
    )
    _export(args, len(records), off, on)


def _export(args: argparse.Namespace, workers: int, off: float, on: float) -> None:
    """The run's figures for ``python -m bench`` (bench/results.py)."""
    from bench.results import export

    export({"hits": args.hits, "batch": args.batch, "repeats": args.repeats, "workers": workers,
            "off_ms": off * 1000, "on_ms": on * 1000, "ratio": on / off})  # fmt: skip


if __name__ == "__main__":
    main()
