"""Review throughput end to end: sync, grade, decide and apply, with real Celery worker processes.

    python -m bench.review_pipeline --assignments 100000 --celery-workers 2

Setup (not timed) writes a rating campaign whose HITs exist on the marketplace
with every assignment already Submitted by simulated workers (90% diligent,
10% spammers), inserted straight into the marketplace's tables, as if the
crowd had just finished. The timed part is everything the requester side
does through the API: ListReviewableHITs, ListAssignmentsForHIT and GetHIT per
HIT, grading and deciding, and one ApproveAssignment or RejectAssignment per
assignment, by ``--celery-workers`` worker processes (one runs the beat).
Embedded default unless HITFORGE_DATABASE_URL / HITFORGE_BROKER_URL are set.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import random
import re
import shutil
import subprocess
import time
import urllib.request
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import func, insert, select

from bench.cpu import is_database, named_cpu, tree_cpu
from bench.serving import SERVERS, serve, stop
from demo.data import write_rating_demo
from demo.runner import free_port, serve_in_thread, spawn_worker, stop_process
from hits.db import make_engine, make_session_factory, session_scope, utcnow
from hits.market.accounts import create_requester
from hits.market.hit_ops import create_hit, find_or_create_hit_type, hit_spec, hit_type_spec
from hits.market.ids import new_entity_id
from hits.market.models import Assignment, Worker
from hits.requester.campaigns.service import create_campaign
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, Submission
from hits.requester.templates import get_template
from hits.schema import upgrade
from hits.settings import load_settings
from hits.wire.documents import answers_to_xml
from server import create_app

ITEMS, GOLD, ASSIGNMENTS, CROWD = 4, 2, 3, 300


def _setup(var_dir: Path, hits: int, env: dict[str, str], worker_model: bool) -> tuple[Any, Any, Any, int]:
    settings = load_settings(env)
    upgrade(settings)
    market = make_session_factory(make_engine(settings.market_database_url))
    requester = make_session_factory(make_engine(settings.database_url))
    with session_scope(market) as session:
        key = create_requester(session, "bench", Decimal("1000000.00"))
    folder = var_dir / "campaign"
    truth = write_rating_demo(folder, items=hits * ITEMS, gold=200, seed=3)
    spec = {
        "name": "bench",
        "template": "rating",
        "title": "Rate drawings (bench)",
        "description": "Rate each sentence.",
        "reward": "0.05",
        "budget": "100000.00",
        "assignments_per_hit": ASSIGNMENTS,
        "items_per_hit": ITEMS,
        "gold_per_hit": GOLD,
        # 200 gold items recur across HITs (as before the pool check); the bench has no cheats.
        "allow_gold_reuse": True,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
        "media_dir": "media",
        "auto_approval_delay_seconds": 86400,
        "quality": {
            "accuracy_threshold": 0.6,
            "confidence": 0.9,
            "min_gold": 4,
            "worker_model": worker_model,
        },
    }
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with session_scope(requester) as session:
        campaign_id = create_campaign(session, load_campaign_file(folder / "campaign.yaml")).id
    _publish_and_submit(market, requester, key, campaign_id, truth)
    return settings, key, requester, campaign_id


def _publish_and_submit(
    market: Any, requester: Any, key: Any, campaign_id: int, truth: dict[str, int]
) -> None:
    """HITs created by the marketplace's own code; assignments inserted as already submitted."""
    template = get_template("rating")
    rng = random.Random(5)
    now = utcnow()
    with session_scope(requester) as rsession:
        published = list(
            rsession.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id))
        )
        pages = {p.id: [(s.payload["image"], s.payload["sentence"]) for s in p.slots] for p in published}
    workers = [f"W{new_entity_id()[:12]}" for _ in range(CROWD)]
    spammers = set(workers[: CROWD // 10])
    with session_scope(market) as session:
        session.execute(
            insert(Worker),
            [{"id": w, "username": w.lower(), "password_hash": "!", "country": "US"} for w in workers],
        )
        hit_type = find_or_create_hit_type(
            session,
            key.requester_id,
            hit_type_spec(
                {
                    "Title": "Rate drawings (bench)",
                    "Description": "Rate each sentence.",
                    "Reward": "0.05",
                    "AssignmentDurationInSeconds": 600,
                    "AutoApprovalDelayInSeconds": 86400,
                }
            ),
        )
        question = (
            '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
            '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://bench.invalid/</ExternalURL>'
            "<FrameHeight>600</FrameHeight></ExternalQuestion>"
        )
        mapping = {}
        rows = []
        spec = hit_spec({"Question": question, "LifetimeInSeconds": 86400, "MaxAssignments": ASSIGNMENTS})
        for p in published:
            hit = create_hit(session, key.requester_id, hit_type, spec)
            hit.status = "Reviewable"
            mapping[p.id] = hit.id
            for worker in rng.sample(workers, ASSIGNMENTS):
                answers = [
                    rng.randint(1, 4)
                    if worker in spammers
                    else (truth[f"{img}|{s}"] if rng.random() < 0.95 else rng.randint(1, 4))
                    for img, s in pages[p.id]
                ]
                rows.append(
                    {
                        "id": new_entity_id(),
                        "hit_id": hit.id,
                        "worker_id": worker,
                        "status": "Submitted",
                        "accept_time": now - timedelta(seconds=60),
                        "deadline": now + timedelta(seconds=600),
                        "submit_time": now,
                        "auto_approval_time": now + timedelta(seconds=86400),
                        "answer": answers_to_xml(template.answer_fields(answers)),
                    }
                )
        for start in range(0, len(rows), 5000):
            session.execute(insert(Assignment), rows[start : start + 5000])
    with session_scope(requester) as rsession:
        for p in rsession.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)):
            p.mturk_hit_id, p.status = mapping[p.id], "open"
        campaign = rsession.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.status, campaign.hit_type_id, campaign.access_key_id = (
            "running",
            hit_type.id,
            key.access_key_id,
        )


def _counts(requester: Any, campaign_id: int) -> tuple[int, int, int]:
    with session_scope(requester) as session:
        synced = session.scalar(
            select(func.count())
            .select_from(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        )
        decided = session.scalar(
            select(func.count())
            .select_from(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id, Submission.decision.is_not(None))
        )
        applied = session.scalar(
            select(func.count())
            .select_from(OutboxEntry)
            .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status == "done")
        )
    return int(synced or 0), int(decided or 0), int(applied or 0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--assignments", type=int, default=3000)
    parser.add_argument("--celery-workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument(
        "--server-processes",
        type=int,
        default=0,
        help="serve the API with --server, this many processes of 4 threads (0: a thread of this process)",
    )
    parser.add_argument("--server", choices=SERVERS, default="granian")
    parser.add_argument(
        "--rule",
        choices=("model", "gold"),
        default="model",
        help="the quality rule: the worker model (the default) or gold alone (worker_model: false)",
    )
    args = parser.parse_args()
    hits = max(1, args.assignments // ASSIGNMENTS)
    total = hits * ASSIGNMENTS
    var_dir = Path("var/bench-review").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    port = free_port()
    env = {
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "HITFORGE_SYNC_INTERVAL": "2.0",
        # The API server's processes sum their call counters here (printed at the end).
        "PROMETHEUS_MULTIPROC_DIR": str(var_dir / "metrics"),
    }
    (var_dir / "metrics").mkdir()
    for name in ("HITFORGE_DATABASE_URL", "HITFORGE_MARKET_DATABASE_URL", "HITFORGE_BROKER_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    started = time.monotonic()
    settings, key, requester, campaign_id = _setup(var_dir, hits, env, args.rule == "model")
    print(f"setup: {hits:,} HITs, {total:,} submitted assignments in {time.monotonic() - started:.1f} s")
    server = _start_server(settings, env, port, args.server_processes, args.server, var_dir)
    worker_env = {
        **env,
        "HITFORGE_MTURK_ENDPOINT_URL": settings.public_url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": key.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": key.secret_access_key,
    }
    began = time.monotonic()
    workers = [
        spawn_worker(worker_env, var_dir / f"celery-{i}.log", concurrency=1, beat=i == 0)
        for i in range(args.celery_workers)
    ]
    marks: dict[str, float] = {}
    cpu_before = {"database": named_cpu(is_database), "broker": named_cpu(_is_broker)}
    bench_before = os.times()
    cpu: dict[str, float] = {}
    calls: dict[str, float] = {}
    try:
        while time.monotonic() - began < args.timeout:
            synced, decided, applied = _counts(requester, campaign_id)
            now = time.monotonic() - began
            for name, value in (("synced", synced), ("decided", decided)):
                if value >= total and name not in marks:
                    marks[name] = now
            print(f"\r{now:7.1f} s  synced {synced:,}  decided {decided:,}  applied {applied:,}", end="")
            if decided >= total and applied >= _decisions_to_apply(requester, campaign_id):
                marks["applied"] = now
                break
            time.sleep(1.0)
        cpu = {
            "Celery workers": tree_cpu(w.pid for w in workers),
            "API server": tree_cpu([server.process.pid]) if isinstance(server, _Served) else 0.0,
            "database": named_cpu(is_database) - cpu_before["database"],
            "broker": named_cpu(_is_broker) - cpu_before["broker"],
            # This process: setup excluded; with no server processes it also serves the API.
            "bench process": sum(os.times()[:2]) - sum(bench_before[:2]),
        }
        calls = _api_calls(port)
    finally:
        for w in workers:
            stop_process(w)
        server.stop()  # type: ignore[union-attr]
    print()
    elapsed = marks.get("applied", time.monotonic() - began)
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}")
    print(
        f"database: {settings.database_url.split(':', 1)[0]}, broker: {settings.broker_url.split(':', 1)[0]}"
    )
    served = (
        f"{args.server}, {args.server_processes} processes x 4 threads"
        if args.server_processes
        else "one thread of the bench"
    )
    print(f"celery worker processes: {args.celery_workers}; API server: {served}; rule: {args.rule}")
    for name in ("synced", "decided", "applied"):
        if name in marks:
            print(f"all {name:8s} after {marks[name]:8.1f} s")
    print(f"review throughput: {total / elapsed:,.0f} assignments/s ({total:,} in {elapsed:.1f} s)")
    if cpu:
        spent = sum(cpu.values())
        print(
            f"CPU seconds ({spent:.0f} of the {elapsed * (os.cpu_count() or 1):.0f} the machine had; "
            f"{1000 * spent / total:.1f} ms an assignment): "
            + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items())
        )
    if calls:
        print(
            f"API calls an assignment: {sum(calls.values()) / total:.3f} ("
            + ", ".join(f"{op} {n / total:.3f}" for op, n in sorted(calls.items(), key=lambda kv: -kv[1]))
            + ")"
        )

    _export(settings, args, total, marks, elapsed, cpu, served, calls)


def _api_calls(port: int) -> dict[str, float]:
    """The API server's calls by operation (all outcomes), from its ``/metrics``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as reply:  # noqa: S310
        text = reply.read().decode()
    calls: dict[str, float] = {}
    for match in re.finditer(r"^hitforge_mturk_api_calls_total\{([^}]*)\} (\S+)$", text, re.M):
        op = re.search(r'operation="([^"]*)"', match[1])
        if op:
            calls[op[1]] = calls.get(op[1], 0.0) + float(match[2])
    return calls


def _export(
    settings: Any,
    args: Any,
    total: int,
    marks: dict[str, float],
    elapsed: float,
    cpu: dict[str, float],
    served: str,
    calls: dict[str, float],
) -> None:
    """The run's figures for ``python -m bench`` (bench/results.py)."""
    from bench.results import export

    export({
        "assignments": total, "database": settings.database_url.split(":", 1)[0],
        "broker": settings.broker_url.split(":", 1)[0], "server": served,
        "celery_workers": args.celery_workers, "marks": marks, "elapsed": elapsed,
        "throughput": total / elapsed, "cpu": cpu,
        "calls_per_assignment": sum(calls.values()) / total if calls else None,
    })  # fmt: skip


def _is_broker(name: str) -> bool:
    return name.startswith("redis")


class _Served:
    def __init__(self, process: subprocess.Popen[bytes]):
        self.process = process

    def stop(self) -> None:
        stop(self.process)


def _start_server(
    settings: Any, env: dict[str, str], port: int, processes: int, kind: str, var_dir: Path
) -> Any:
    """The API: in a thread of this process, or ``kind``'s worker processes as in production."""
    if not processes:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        return serve_in_thread(create_app(settings=settings), port=port)
    return _Served(serve(kind, "server:create_app()", port, processes, 4, env, var_dir / "server.log"))


def _decisions_to_apply(requester: Any, campaign_id: int) -> int:
    with session_scope(requester) as session:
        return int(
            session.scalar(
                select(func.count()).select_from(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)
            )
            or 0
        )


if __name__ == "__main__":
    main()
