"""Server time of the QA review pages on a large campaign.

``python -m bench.qa_pages [--hits 10000] [--assignments 3] [--database-url URL]`` seeds a
campaign of ``--hits`` HITs (two items and one gold each) with ``--assignments`` submissions
per HIT from 300 workers (every tenth worker flagged with all their work held), signs a
reviewer in, and requests each QA page through the app in this process (no network): the
queue (first and a later page), a flagged worker's page (about 300 assignments), one
assignment's evidence, the audit log, the home page, and the requester's campaign page, its
items list (first, middle and a late page) and its two plots. Each page is requested ``--repeat``
times; the median server time is printed, and its ratio to the floor measured in the same
run: the sign-in page, the cheapest page the same app serves.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, text
from werkzeug.security import generate_password_hash

from bench.results import export
from hits.db import make_engine, make_session_factory, session_scope, utcnow
from hits.requester.tables.campaigns import (
    Campaign,
    GoldItem,
    HITSlot,
    Item,
    PublishedHIT,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.requester.tables.counters import recount
from hits.schema import upgrade
from hits.settings import load_settings

WORKERS = 300
CHUNK = 10_000  # HITs a round of inserts


def seed(url: str, hits: int, per_hit: int, rng: random.Random) -> tuple[int, str, str]:
    """The campaign; returns (campaign id, a flagged worker, one of their held assignments)."""
    sessions = make_session_factory(make_engine(url))
    workers = [f"A{n:012d}" for n in range(WORKERS)]
    flagged = set(workers[::10])
    with session_scope(sessions) as session:
        campaign = Campaign(
            name="qa-bench",
            template="rating",
            # A stored spec as ``create_campaign`` keeps it: the whole campaign file, validated.
            spec={
                "name": "qa-bench",
                "template": "rating",
                "title": "Rate how well a sentence describes a picture",
                "description": "Benchmark campaign.",
                "reward": "0.10",
                "budget": "100000.00",
                "assignments_per_hit": per_hit,
                "items_per_hit": 2,
                "gold_per_hit": 1,
                "items": "items.jsonl",
                "gold": "gold.jsonl",
                "quality": {"accuracy_threshold": 0.6},
            },
            budget=Decimal("100000"),
            status="review",
        )
        session.add(campaign)
        session.flush()
        cid = campaign.id
        rows: list[dict[str, Any]] = []  # the first submissions, for the audit log's rows
        held_of: dict[str, str] = {}
        counts: dict[str, int] = {}
        now = utcnow()
        # In chunks of HITs, so that a million HITs' rows never sit in memory at once.
        for first in range(0, hits, CHUNK):
            chunk = _seed_chunk(session, cid, range(first, min(hits, first + CHUNK)), per_hit, now, rng)
            for row in chunk:
                worker = row["worker_id"]
                counts[worker] = counts.get(worker, 0) + 1
                if worker in flagged:
                    held_of.setdefault(worker, row["assignment_id"])
            rows += chunk[: max(0, 2000 - len(rows))]
        session.execute(
            insert(WorkerStats),
            [
                {
                    "campaign_id": cid,
                    "worker_id": w,
                    "gold_correct": 0 if w in flagged else n,
                    "gold_total": n,
                    "assignments": n,
                    "approved": 0 if w in flagged else n,
                    "rejected": 0,
                    "flagged": w in flagged,
                    "flag_reason": "gold accuracy low; suspicious signals: straightline"
                    if w in flagged
                    else None,
                }
                for w, n in counts.items()
            ],
        )
        staff = StaffUser(
            username="bench", password_hash=generate_password_hash("bench-password"), role="admin"
        )
        session.add(staff)
        session.flush()
        session.execute(
            insert(ReviewAction),
            [
                {
                    "campaign_id": cid,
                    "worker_id": workers[n % WORKERS],
                    "staff_user_id": staff.id,
                    "action": "approve",
                    "note": "looked fine",
                    "assignments": [rows[n % len(rows)]["assignment_id"]],
                }
                for n in range(2000)
            ],
        )
        # Rows inserted through Core pass by the counters' listeners: count them as the migration
        # counts an upgraded database's.
        recount(session, cid)
        # The first flagged worker (on a tiny campaign, the first one with held work).
        worker = workers[0] if workers[0] in held_of else next(iter(held_of))
        return cid, worker, held_of[worker]


def _seed_chunk(
    session: Any, cid: int, numbers: range, per_hit: int, now: Any, rng: random.Random
) -> list[dict[str, Any]]:
    """HITs ``numbers`` of the campaign with their items, gold, slots and submissions; the submissions."""
    workers = [f"A{n:012d}" for n in range(WORKERS)]
    flagged = set(workers[::10])
    last_item = session.scalar(select(func.max(Item.id))) or 0
    last_gold = session.scalar(select(func.max(GoldItem.id))) or 0
    last_hit = session.scalar(select(func.max(PublishedHIT.id))) or 0
    session.execute(
        insert(Item),
        [
            {
                "campaign_id": cid,
                # Two items a HIT, the chunks in order from HIT 0: the n-th item of the campaign.
                "position": n,
                "external_id": f"i{n}",
                "payload": {"image": f"{n}.png", "sentence": "A shape."},
            }
            for n in range(2 * numbers.start, 2 * numbers.stop)
        ],
    )
    session.execute(
        insert(GoldItem),
        [
            {"campaign_id": cid, "external_id": f"g{n}",
             "payload": {"image": f"g{n}.png", "sentence": "Gold."},
             "answer": {"rating": 3}}
            for n in numbers
        ],
    )  # fmt: skip
    session.execute(
        insert(PublishedHIT),
        [
            {
                "campaign_id": cid,
                "mturk_hit_id": f"3H{n:012d}",
                "status": "complete",
                "page_token": f"{n:032x}",
            }
            for n in numbers
        ],
    )
    items = list(session.scalars(select(Item.id).where(Item.id > last_item).order_by(Item.id)))
    golds = list(session.scalars(select(GoldItem.id).where(GoldItem.id > last_gold).order_by(GoldItem.id)))
    published = list(
        session.scalars(select(PublishedHIT.id).where(PublishedHIT.id > last_hit).order_by(PublishedHIT.id))
    )
    session.execute(
        insert(HITSlot),
        [
            row
            for k, pid in enumerate(published)
            for row in (
                {"published_hit_id": pid, "position": 0, "item_id": items[2 * k]},
                {"published_hit_id": pid, "position": 1, "item_id": items[2 * k + 1]},
                {"published_hit_id": pid, "position": 2, "gold_item_id": golds[k]},
            )
        ],
    )
    rows = []
    for n, pid in zip(numbers, published, strict=True):
        for k, worker in enumerate(rng.sample(workers, per_hit)):
            bad = worker in flagged
            rows.append(
                {
                    "assignment_id": f"3A{n:010d}{k:02d}",
                    "published_hit_id": pid,
                    "worker_id": worker,
                    "answers": {"answers": [rng.randint(1, 4), rng.randint(1, 4), 3 if not bad else 1]},
                    "work_seconds": rng.uniform(20, 90),
                    # Over the last 40 hours: the campaign page's throughput has hours to count.
                    "submitted_at": now - timedelta(seconds=rng.uniform(0, 40 * 3600)),
                    "gold_correct": 0 if bad else 1,
                    "gold_total": 1,
                    "graded": True,
                    "decision": "held" if bad else "approve",
                    "evidence": {"signals": {"suspicious": ["straightline"]}, "held_for": "flag"}
                    if bad
                    else {},
                }
            )
    session.execute(insert(Submission), rows)
    return rows


def timed(client: Any, path: str, repeat: int) -> float:
    """Median server time of ``path`` in milliseconds (the first request, warming caches, left out)."""
    assert client.get(path).status_code == 200, path
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (path, response.status_code)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hits", type=int, default=10_000)
    parser.add_argument("--assignments", type=int, default=3, help="per HIT")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--database-url", default=None, help="the requester database (default: SQLite)")
    args = parser.parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="hitforge-qa-bench-"))
    env = {**os.environ, "HITFORGE_VAR_DIR": str(var_dir), "HITFORGE_SECRET_KEY": "bench-" * 6}
    if args.database_url:
        env["HITFORGE_DATABASE_URL"] = args.database_url
    settings = load_settings(env)
    upgrade(settings)
    started = time.perf_counter()
    campaign_id, worker, assignment = seed(
        settings.database_url, args.hits, args.assignments, random.Random(7)
    )
    if settings.database_url.startswith("postgresql"):
        # Freshly loaded tables have no planner statistics until autovacuum's ANALYZE comes by (a
        # minute or so later), and PostgreSQL plans for them as if they were nearly empty; a
        # running deployment's tables have statistics.
        engine = make_engine(settings.database_url)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("ANALYZE"))
        engine.dispose()
    print(
        f"seeded {args.hits} HITs, {args.hits * args.assignments} assignments "
        f"in {time.perf_counter() - started:.1f} s ({settings.database_url.split(':')[0]})"
    )
    from server import create_app

    app = create_app({"WTF_CSRF_ENABLED": False}, settings=settings)
    client = app.test_client()
    response = client.post("/dashboard/signin", data={"username": "bench", "password": "bench-password"})
    assert response.status_code == 302, response.status_code
    floor = timed(client, "/dashboard/signin", args.repeat)
    pages = {
        "queue": "/dashboard/queue",
        "queue, page 2 of flagged": "/dashboard/queue?reason=flagged&page=2",
        "worker page": f"/dashboard/workers/{campaign_id}/{worker}",
        "assignment evidence": f"/dashboard/assignments/{assignment}",
        "audit log": "/dashboard/audit",
        "home": "/dashboard/",
        "campaign page": f"/dashboard/campaigns/{campaign_id}",
        "items list, first page": f"/dashboard/campaigns/{campaign_id}/items",
        "items list, middle page": f"/dashboard/campaigns/{campaign_id}/items?page={args.hits * 2 // 100}",
        "items list, a late page": f"/dashboard/campaigns/{campaign_id}/items?page={args.hits * 2 // 50 - 1}",
        "throughput plot": f"/dashboard/campaigns/{campaign_id}/plots/throughput.svg",
        "gold accuracy plot": f"/dashboard/campaigns/{campaign_id}/plots/gold.svg",
    }
    print(f"floor (sign-in page): {floor:.1f} ms")
    print(f"{'page':28} {'median ms':>10} {'x floor':>8}")
    measured = {}
    for name, path in pages.items():
        ms = measured[name] = timed(client, path, args.repeat)
        print(f"{name:28} {ms:10.1f} {ms / floor:8.1f}")
    database = settings.database_url.split(":", 1)[0]
    export({"database": database, "hits": args.hits, "floor": floor, "pages": measured})


if __name__ == "__main__":
    main()
