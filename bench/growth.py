"""Per-request cost as the data grows: the API, the worker site and the dashboard at 10,000 to 1,000,000 HITs.

    python -m bench.growth [--sizes 10000,100000,1000000] [--repeat 30] [--postgres URL]

For each size, fresh databases (SQLite under var/, or a database of its own on the
``--postgres`` server, dropped after) are seeded in bulk, with multi-row INSERTs:

- the marketplace: one requester's HIT type with ``size`` HITs, half of them Assignable
  (what the worker site lists and accepts, ``bench.worker_path_seed``) and half Reviewable
  with one Submitted assignment each (what the API's reads find), from 300 workers;
- the requester side: a campaign of ``size`` HITs (two items and one gold each) and one
  submission each, a tenth of them held for review (``bench.qa_pages``).

Then each request is made ``--repeat`` times in this process, through the app with no
network (Flask's test client; the API's through boto3, whose requests are handed to the app
instead of a socket, so boto3 signs and parses as usual but only the server's time is
counted), and the median server time is printed per request and size, with the ratio of the
largest size to the smallest: a request whose statements read a bounded index range costs
the same at every size.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from sqlalchemy import insert, text

from bench.qa_pages import seed as seed_campaign
from bench.results import export
from bench.worker_path import _drop_postgres, _fresh_postgres
from bench.worker_path_profile import run_cycle, sign_up
from bench.worker_path_seed import BATCH, QUESTION, Seeded, hit_rows, seed
from hits.db import make_engine, make_session_factory, session_scope, utcnow
from hits.market.ids import new_entity_id
from hits.market.models import HIT, Assignment, Worker
from hits.schema import upgrade
from hits.settings import Settings, load_settings
from hits.wire.documents import answers_to_xml

CROWD = 300
SAMPLE = 200  # Reviewable HITs the API's reads pick from


def seed_market(market: Any, size: int) -> tuple[Seeded, list[str]]:
    """Half the HITs Assignable, half Reviewable with a Submitted assignment; (group, some Reviewable ids)."""
    seeded = seed(market, size - size // 2, progress=size >= 200_000)
    workers = [f"AW{new_entity_id()[:12]}" for _ in range(CROWD)]
    with session_scope(market) as session:
        session.execute(
            insert(Worker),
            [{"id": w, "username": w.lower(), "password_hash": "!", "country": "US"} for w in workers],
        )
    now = utcnow()
    answer = answers_to_xml([("caption", "a picture")])
    sample: list[str] = []
    for written in range(0, size // 2, BATCH):
        # Created before every Assignable HIT: the older half of the campaign, already worked.
        hits = hit_rows(seeded, min(BATCH, size // 2 - written), size + written, status="Reviewable")
        assignments = [
            {"id": new_entity_id(), "hit_id": hit["id"], "worker_id": workers[n % CROWD],
             "status": "Submitted",
             "accept_time": now - timedelta(minutes=5), "deadline": now + timedelta(minutes=5),
             "submit_time": now - timedelta(minutes=1), "auto_approval_time": now + timedelta(days=1),
             "answer": answer}
            for n, hit in enumerate(hits)
        ]  # fmt: skip
        with session_scope(market) as session:
            session.execute(insert(HIT), hits)
            session.execute(insert(Assignment), assignments)
        sample += [hit["id"] for hit in hits[:: max(1, len(hits) // 20)]]
    return seeded, random.Random(3).sample(sample, min(SAMPLE, len(sample)))


class _Body:
    """What botocore reads a response body from."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Any:
        yield self.data

    def read(self, *_: Any) -> bytes:
        return self.data


def api_client(app: Any, seeded: Seeded, spent: list[float]) -> Any:
    """A boto3 MTurk client whose requests go to ``app`` in this process (server times join ``spent``)."""
    client = boto3.client(
        "mturk", endpoint_url="http://127.0.0.1:5000", region_name="us-east-1",
        aws_access_key_id=seeded.access_key_id, aws_secret_access_key=seeded.secret_access_key,
        config=Config(retries={"max_attempts": 1}),
    )  # fmt: skip
    test_client = app.test_client()

    def send(request: Any, **_: Any) -> AWSResponse:
        parts = urlsplit(request.url)
        headers = {
            k: v.decode() if isinstance(v, bytes) else v
            for k, v in request.headers.items()
            if k.lower() not in ("host", "content-length")
        }
        body = request.body.read() if hasattr(request.body, "read") else request.body
        started = time.perf_counter()
        response = test_client.open(
            parts.path or "/", method=request.method, headers=headers, data=body,
            base_url=f"{parts.scheme}://{parts.netloc}",
        )  # fmt: skip
        spent.append(time.perf_counter() - started)
        return AWSResponse(
            request.url, response.status_code, dict(response.headers), _Body(response.get_data())
        )

    # Returning a response from before-send skips botocore's HTTP: the app answers instead of a socket.
    client.meta.events.register("before-send.mturk", send)
    return client


def _median_ms(call: Callable[[], Any], repeat: int, spent: list[float] | None = None) -> float:
    """Median ms of ``call`` after one warm-up (``spent``: the server's share, recorded by the call)."""
    call()
    times = []
    for _ in range(repeat):
        if spent is not None:
            spent.clear()
        started = time.perf_counter()
        call()
        times.append(sum(spent) if spent is not None else time.perf_counter() - started)
    return statistics.median(times) * 1000


def measure(settings: Settings, seeded: Seeded, reviewable: list[str], campaign: tuple[int, str, str],
            size: int, repeat: int) -> dict[str, float]:  # fmt: skip
    """Median server ms of each request at this size."""
    from server import create_app

    figures: dict[str, float] = {}
    app = create_app(settings=settings)
    spent: list[float] = []
    api = api_client(app, seeded, spent)
    rng = random.Random(size)
    hit = {"Title": "Growth bench", "Description": "A HIT made by the growth benchmark.", "Reward": "0.05",
           "AssignmentDurationInSeconds": 600, "LifetimeInSeconds": 3600, "MaxAssignments": 1,
           "Question": QUESTION}  # fmt: skip
    figures["API: GetHIT"] = _median_ms(lambda: api.get_hit(HITId=rng.choice(reviewable)), repeat, spent)
    figures["API: ListAssignmentsForHIT"] = _median_ms(
        lambda: api.list_assignments_for_hit(HITId=rng.choice(reviewable)), repeat, spent
    )
    figures["API: ListReviewableHITs, first page of 100"] = _median_ms(
        lambda: api.list_reviewable_hits(HITTypeId=seeded.hit_type_id, MaxResults=100), repeat, spent
    )
    figures["API: CreateHIT"] = _median_ms(lambda: api.create_hit(**hit), repeat, spent)
    # The worker site: one signed-in worker's cycles; each request's median over the cycles.
    site = app.test_client()
    sign_up(site, f"growth{uuid.uuid4().hex[:6]}")
    cycles: dict[str, list[float]] = defaultdict(list)

    def timed(kind: str, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        response = call()
        cycles[kind].append(time.perf_counter() - started)
        return response

    for _ in range(repeat + 1):
        run_cycle(site, timed)
    names = {
        "list": "HIT list",
        "accept": "accept",
        "work": "work page",
        "frame": "task frame",
        "submit": "submit",
    }
    for kind, times in cycles.items():
        figures[f"worker site: {names[kind]}"] = statistics.median(times[1:]) * 1000
    # The dashboard, signed in as staff (its own app: the sign-in form without CSRF).
    campaign_id = campaign[0]
    dashboard = create_app({"WTF_CSRF_ENABLED": False}, settings=settings).test_client()
    signed = dashboard.post("/dashboard/signin", data={"username": "bench", "password": "bench-password"})
    assert signed.status_code == 302, signed.status_code
    pages = {
        "dashboard: campaign page": f"/dashboard/campaigns/{campaign_id}",
        "dashboard: items list, first page": f"/dashboard/campaigns/{campaign_id}/items",
        "dashboard: items list, middle page": f"/dashboard/campaigns/{campaign_id}/items?page={size // 50}",
        "dashboard: review queue, first page": "/dashboard/queue",
    }
    for name, path in pages.items():

        def get(path: str = path) -> None:
            assert dashboard.get(path).status_code == 200, path

        figures[name] = _median_ms(get, repeat)
    return figures


def run_size(size: int, args: argparse.Namespace, run: str) -> dict[str, float]:
    """Seed fresh databases of ``size`` HITs, measure, and drop them."""
    var_dir = Path(f"var/bench-growth-{size}").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    env = {
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_SECRET_KEY": run,
        "HITFORGE_PUBLIC_URL": "http://127.0.0.1:5000",
    }
    pg_name = f"hitforge_growth_{run}_{size}"
    if args.postgres:
        env["HITFORGE_DATABASE_URL"] = _fresh_postgres(args.postgres, pg_name)
    try:
        settings = load_settings(env)
        upgrade(settings)
        started = time.perf_counter()
        market = make_session_factory(make_engine(settings.market_database_url))
        seeded, reviewable = seed_market(market, size)
        campaign = seed_campaign(settings.database_url, size, 1, random.Random(7))
        if args.postgres:
            # As autovacuum would before anyone reads: fresh tables have no planner statistics.
            engine = make_engine(settings.database_url)
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(text("ANALYZE"))
            engine.dispose()
        market.kw["bind"].dispose()
        print(f"{size:,} HITs seeded in {time.perf_counter() - started:.0f} s", flush=True)
        return measure(settings, seeded, reviewable, campaign, size, args.repeat)
    finally:
        if args.postgres:
            _drop_postgres(args.postgres, pg_name)
        shutil.rmtree(var_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000", help="HITs, comma-separated")
    parser.add_argument("--repeat", type=int, default=30, help="requests of each kind per size")
    parser.add_argument("--postgres", help="a PostgreSQL server URL: each size gets a fresh database there")
    parser.add_argument("--one-size", help=argparse.SUPPRESS)  # internal: measure one size, write JSON here
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    run = uuid.uuid4().hex[:8]
    if args.one_size:
        # A size measured in a process of its own (below): its figures go to the file named.
        run_size(100, args, run)  # thrown away: the process's first requests
        figures = run_size(sizes[0], args, run)
        Path(args.one_size).write_text(json.dumps(figures))
        return
    by_request: dict[str, dict[str, float]] = defaultdict(dict)
    for size in sizes:
        # One process a size, each warmed by a throw-away small size first: in one process the
        # earlier sizes' apps (their clock threads, their objects) slowed the later sizes' API
        # calls, and the first size paid for the process's first requests.
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "figures.json"
            argv = [sys.executable, "-m", "bench.growth", "--sizes", str(size), "--repeat", str(args.repeat),
                    "--one-size", str(out)]  # fmt: skip
            argv += ["--postgres", args.postgres] if args.postgres else []
            subprocess.run(argv, check=True)
            for name, ms in json.loads(out.read_text()).items():
                by_request[name][str(size)] = ms
    database = "postgresql" if args.postgres else "sqlite"
    print(f"\nmedian server ms a request ({database}, {args.repeat} requests each)")
    print(f"{'request':46s}" + "".join(f"{size:>12,}" for size in sizes) + f"{'ratio':>8}")
    for name, by_size in by_request.items():
        first, last = by_size[str(sizes[0])], by_size[str(sizes[-1])]
        cells = "".join(f"{by_size[str(s)]:12.2f}" for s in sizes)
        print(f"{name:46s}{cells}{last / first:8.2f}")
    export({"database": database, "sizes": sizes, "repeat": args.repeat, "requests": by_request})


if __name__ == "__main__":
    main()
