"""API throughput through the real boto3 client: CreateHIT and ListAssignmentsForHIT pages.

    python -m bench.api_throughput --threads 8 --seconds 10 [--server granian|gunicorn]
        [--server-processes 2] [--server-threads 4]

Runs the marketplace under ``--server`` (granian, as the README recommends
for production, or gunicorn; ``--server-processes`` processes,
``--server-threads`` threads each) and hammers it from ``--threads`` client threads, each with its own boto3
client, for ``--seconds`` per workload. Prints calls per second and latency
percentiles, and two floors: the same client against a server that answers
every call at once without doing anything, with an empty result (the no-op
floor) and with a copy of a real 10-assignment page (the page floor, which
includes the client's parsing of the page). They bound what any server could
reach from this client on this machine. CPU per call is shown for the client
(this process), the server's processes and the database. Embedded SQLite unless
HITFORGE_DATABASE_URL names PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from bench.cpu import is_database, named_cpu, tree_cpu
from bench.results import export
from bench.serving import SERVERS, serve, stop
from demo.runner import free_port
from hits.db import make_engine, make_session_factory, session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_requester, create_worker
from hits.schema import upgrade
from hits.settings import load_settings
from hits.wire.documents import answers_to_xml
from server.market.mturk_api import TARGET_PREFIX

QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://bench.invalid/task</ExternalURL>'
    "<FrameHeight>600</FrameHeight></ExternalQuestion>"
)
HIT = {
    "MaxAssignments": 3,
    "LifetimeInSeconds": 3600,
    "AssignmentDurationInSeconds": 600,
    "Reward": "0.05",
    "Title": "Bench task",
    "Description": "A HIT made by the API benchmark.",
    "Question": QUESTION,
}


def _as_wire(response: dict[str, Any]) -> str:
    """A parsed boto3 response as the JSON the server sent (timestamps as epoch seconds)."""
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    return json.dumps(body, default=lambda value: value.timestamp())


def _client(url: str, key_id: str, secret: str) -> Any:
    return boto3.client(
        "mturk",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1}, max_pool_connections=4),
    )


def _hammer(make_call: Callable[[Any], int], clients: list[Any], seconds: float) -> tuple[int, list[float]]:
    """Run ``make_call`` from one thread per client for ``seconds``; (calls made, latencies in s)."""
    latencies: list[list[float]] = [[] for _ in clients]
    counts = [0] * len(clients)
    stop = time.monotonic() + seconds

    def loop(i: int) -> None:
        while time.monotonic() < stop:
            started = time.perf_counter()
            counts[i] += make_call(clients[i])
            latencies[i].append(time.perf_counter() - started)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts), [x for part in latencies for x in part]


class _CpuMeter:
    """CPU seconds spent by the client (this process), the server tree and the database during a workload."""

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid

    def _read(self) -> tuple[float, float, float]:
        mine = os.times()
        return mine.user + mine.system, tree_cpu([self.server_pid]), named_cpu(is_database)

    def __enter__(self) -> _CpuMeter:
        self.start = self._read()
        return self

    def __exit__(self, *exc: object) -> None:
        self.spent = tuple(after - before for after, before in zip(self._read(), self.start, strict=True))


def _report(
    name: str, calls: int, latencies: list[float], seconds: float, cpu: _CpuMeter
) -> tuple[str, dict[str, Any]]:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[int(len(ordered) * 0.99) - 1] * 1000 if ordered else 0.0
    per_call = [spent / max(calls, 1) * 1e6 for spent in cpu.spent]
    figures = {"rate": calls / seconds, "p50": p50, "p99": p99, "calls": calls, "cpu_us": per_call}
    return (
        f"{name:38s} {calls / seconds:8,.0f}/s   p50 {p50:6.1f} ms   p99 {p99:6.1f} ms   ({calls:,} calls; "
        f"CPU us a call, client / server / database: {' / '.join(f'{us:,.0f}' for us in per_call)})"
    ), figures


def _measure(
    name: str, make_call: Callable[[Any], int], clients: list[Any], seconds: float, server_pid: int
) -> tuple[str, dict[str, Any]]:
    with _CpuMeter(server_pid) as cpu:
        calls, latencies = _hammer(make_call, clients, seconds)
    return _report(name, calls, latencies, seconds, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--server-processes", type=int, default=2)
    parser.add_argument("--server-threads", type=int, default=4)
    parser.add_argument("--server", choices=SERVERS, default="granian")
    args = parser.parse_args()
    var_dir = Path("var/bench-api").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    port, noop_port = free_port(), free_port()
    env = {"HITFORGE_VAR_DIR": str(var_dir), "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    if os.environ.get("HITFORGE_DATABASE_URL"):
        env["HITFORGE_DATABASE_URL"] = os.environ["HITFORGE_DATABASE_URL"]
    settings = load_settings(env)
    upgrade(settings)
    market = make_session_factory(make_engine(settings.market_database_url))
    run = uuid.uuid4().hex[:8]  # a PostgreSQL database may hold earlier runs' accounts
    with session_scope(market) as session:
        key = create_requester(session, f"api-bench-{run}", Decimal("1000000.00"))
    shape = (args.server_processes, args.server_threads)
    server = serve(args.server, "server:create_app()", port, *shape, env, var_dir / "server.log")
    noop = None
    try:
        url = f"http://127.0.0.1:{port}"
        clients = [_client(url, key.access_key_id, key.secret_access_key) for _ in range(args.threads)]
        hit_id = clients[0].create_hit(**{**HIT, "MaxAssignments": 100})["HIT"]["HITId"]
        with session_scope(market) as session:
            for n in range(100):
                worker = create_worker(session, f"bench-{run}-{n}", "a-long-password")
                assignment = assignment_ops.accept(session, worker, hit_id)
                assignment_ops.submit(session, worker, assignment.id, answers_to_xml([("q", str(n))]))
        # The do-nothing server answers a page with a copy of a real one, so
        # that the page floor includes the client's parsing of it.
        canned = var_dir / "canned.json"
        page_body = _as_wire(clients[0].list_assignments_for_hit(HITId=hit_id, MaxResults=10))
        canned.write_text(json.dumps({f"{TARGET_PREFIX}ListAssignmentsForHIT": page_body}))
        noop = serve(
            args.server,
            "bench.noop_app:app",
            noop_port,
            *shape,
            {"HITFORGE_BENCH_CANNED": str(canned)},
            var_dir / "noop.log",
        )
        noop_clients = [
            _client(f"http://127.0.0.1:{noop_port}", key.access_key_id, key.secret_access_key)
            for _ in range(args.threads)
        ]

        def create(client: Any) -> int:
            client.create_hit(**HIT)
            return 1

        def page(client: Any) -> int:
            client.list_assignments_for_hit(HITId=hit_id, MaxResults=10)
            return 1

        def nothing(client: Any) -> int:
            client.get_account_balance()
            return 1

        seconds = args.seconds
        measured = {
            "noop_floor": _measure(
                "no-op floor (do-nothing server)", nothing, noop_clients, seconds, noop.pid
            ),
            "page_floor": _measure("page floor (do-nothing server)", page, noop_clients, seconds, noop.pid),
            "create_hit": _measure("CreateHIT", create, clients, seconds, server.pid),
            "pages": _measure("ListAssignmentsForHIT pages (10 each)", page, clients, seconds, server.pid),
        }
    finally:
        for process in (server, noop):
            if process is not None:
                stop(process)
    database = settings.market_database_url.split(":", 1)[0]
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}")
    print(f"database: {database}; server: {args.server}, {args.server_processes} processes x "
          f"{args.server_threads} threads; "
          f"clients: {args.threads} threads, {args.seconds:g} s each")  # fmt: skip
    for line, _ in measured.values():
        print(line)
    export(
        {
            "database": database,
            "server": f"{args.server} {args.server_processes} x {args.server_threads}",
            "threads": args.threads,
            "seconds": args.seconds,
            **{name: figures for name, (_, figures) in measured.items()},
        }
    )


if __name__ == "__main__":
    main()
