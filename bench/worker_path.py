"""The worker path under a crowd: list -> accept -> work page -> task frame -> submit, over HTTP.

    python -m bench.worker_path [--workers 8,50,200] [--think 0] [--seconds 20] [--hits 5000]
        [--postgres postgresql+psycopg://user@127.0.0.1:port/db] [--accept-next]
        [--server granian|gunicorn] [--server-processes 2] [--server-threads 4]
        [--rounds 1] [--against-turkle] [--max-requests 200000]

Seeds ``--hits`` one-assignment HITs of one HIT type by bulk SQL (SQLite in
var/, or a fresh database on the ``--postgres`` server, dropped at the end),
serves the site the way production does, and lets each number of simulated
workers, each signed in with its own cookies and keep-alive connection, loop
through the flow a browser takes with ``--think`` seconds on each task. Each
run is bounded: ``--warmup`` seconds, then ``--seconds`` measured or
``--max-requests`` requests in all, whichever ends first. It reports
submissions per second, failed accepts per submission, p50/p99 of each
request, and the server's (and PostgreSQL's) CPU per submission; the same
client against a server of canned pages gives the floor. ``--against-turkle``
installs Turkle from PyPI into its own virtualenv under var/, loads the same
tasks, and runs it interleaved with hitforge (``bench.turkle``). Every request
goes to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from bench.cpu import is_database, named_cpu, tree_cpu
from bench.results import export
from bench.serving import SERVERS, serve, stop
from bench.worker_path_client import Browser, Flow, HitforgeFlow, Stats, run_crowd
from bench.worker_path_seed import Seeded, seed, top_up
from demo.runner import free_port
from hits.db import make_engine, make_session_factory
from hits.schema import upgrade
from hits.settings import load_settings

KINDS = ("list", "accept", "work", "frame", "submit")


@dataclass
class Result:
    """One measured run of one site at one crowd size."""

    site: str
    workers: int
    stats: Stats
    seconds: float
    server_cpu: float
    database_cpu: float

    @property
    def rate(self) -> float:
        return self.stats.submissions / self.seconds if self.seconds else 0.0

    def figures(self) -> dict[str, object]:
        """This run's figures as JSON: rate, CPU a submission, p50/p99 of requests begun after warm-up."""
        subs = max(self.stats.submissions, 1)
        latency = {}
        for kind in KINDS:
            began = sorted(self.stats.steady.get(kind, []))
            if began:
                p99 = began[max(0, int(len(began) * 0.99) - 1)]
                latency[kind] = [statistics.median(began) * 1000, p99 * 1000]
        return {
            "site": self.site,
            "workers": self.workers,
            "rate": self.rate,
            "submissions": self.stats.submissions,
            "failed_accepts_per_submission": self.stats.failed_accepts / subs,
            "errors": self.stats.errors,
            "server_cpu_ms": self.server_cpu / subs * 1000,
            "database_cpu_ms": self.database_cpu / subs * 1000,
            "latency_ms": latency,
        }

    def line(self) -> str:
        s = self.stats
        subs = max(s.submissions, 1)
        parts = [
            f"{self.site:9s} {self.workers:4d} workers  {self.rate:8.1f} submissions/s",
            f"failed accepts/submission {s.failed_accepts / subs:5.2f}",
            f"server CPU {self.server_cpu / subs * 1000:7.1f} ms/submission",
        ]
        if self.database_cpu:
            parts.append(f"database CPU {self.database_cpu / subs * 1000:6.1f} ms")
        if s.errors or s.empty_lists:
            parts.append(f"errors {s.errors}, empty lists {s.empty_lists}")
        timings, steady = [], []
        for kind in KINDS:
            ordered = sorted(s.latencies.get(kind, []))
            if ordered:
                p99 = ordered[max(0, int(len(ordered) * 0.99) - 1)]
                timings.append(f"{kind} {statistics.median(ordered) * 1000:.0f}/{p99 * 1000:.0f}")
            began = sorted(s.steady.get(kind, []))
            if began:
                p99 = began[max(0, int(len(began) * 0.99) - 1)]
                steady.append(f"{kind} {statistics.median(began) * 1000:.0f}/{p99 * 1000:.0f}")
        slowest = sorted(s.timeline, key=lambda t: -t[2])[:8]
        # When each of the slowest started (seconds into the run): together they mean a pause.
        slow = ", ".join(f"{kind} {spent * 1000:.0f} at {at:.1f} s" for at, kind, spent in slowest)
        return (
            "  ".join(parts)
            + "\n"
            + " " * 14
            + "p50/p99 ms: "
            + ", ".join(timings)
            + "\n"
            + " " * 14
            + "begun after the warm-up, p50/p99 ms: "
            + ", ".join(steady)
            + "\n"
            + " " * 14
            + "slowest ms: "
            + slow
        )


def measure(site: str, flow: Flow, port: int, pid: int, workers: int, args: argparse.Namespace) -> Result:
    """Run ``workers`` simulated workers of ``flow`` against the server ``pid`` on ``port``."""
    marks: dict[str, tuple[float, float]] = {}

    def mark(name: str) -> Callable[[], None]:
        return lambda: marks.__setitem__(name, (tree_cpu([pid]), named_cpu(is_database)))

    stats, seconds = run_crowd(
        flow,
        port,
        workers,
        args.think,
        (args.warmup, args.seconds, args.max_requests),
        mark("start"),
        mark("stop"),
    )
    server = marks["stop"][0] - marks["start"][0]
    database = marks["stop"][1] - marks["start"][1] if args.postgres else 0.0
    return Result(site, workers, stats, seconds, server, database)


def capture_pages(port: int, run: str, path: Path) -> None:
    """One real cycle's pages, for the canned floor server."""
    browser, flow = Browser(port), HitforgeFlow(f"{run}-pages")
    flow.sign_in(browser, 0)
    pages = {"list": browser.request("GET", "/")[2]}
    stats = Stats()
    captured: dict[str, str] = {}
    original = browser.request

    def recording(method: str, target: str, form: dict[str, str] | None = None, referer: str | None = None):  # type: ignore[no-untyped-def]
        result = original(method, target, form, referer)
        kind = "work" if target.startswith("/work/") else "frame" if target.startswith("/hits/") else None
        kind = "submitted" if target.endswith("/externalSubmit") else kind
        if kind:
            captured[kind] = result[2]
        return result

    browser.request = recording  # type: ignore[method-assign]
    flow.one_task(browser, stats, 0.0)
    browser.close()
    path.write_text(json.dumps({**pages, **captured}))


def _fresh_postgres(admin_url: str, name: str) -> str:
    url = make_url(admin_url)
    with psycopg.connect(
        url.set(drivername="postgresql").render_as_string(hide_password=False), autocommit=True
    ) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


def _drop_postgres(admin_url: str, name: str) -> None:
    url = make_url(admin_url)
    with psycopg.connect(
        url.set(drivername="postgresql").render_as_string(hide_password=False), autocommit=True
    ) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", default="8,50", help="crowd sizes, comma-separated")
    parser.add_argument("--think", type=float, default=0.0, help="seconds each worker spends on a task")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--max-requests", type=int, default=200_000, help="requests per run, at most")
    parser.add_argument("--hits", type=int, default=5_000, help="Assignable HITs at the start of each run")
    parser.add_argument("--postgres", help="a PostgreSQL server URL: the run uses a fresh database there")
    parser.add_argument("--accept-next", action="store_true", help="workers tick 'accept the next HIT'")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds per crowd size")
    parser.add_argument("--server", choices=SERVERS, default="granian")
    parser.add_argument("--server-processes", type=int, default=2)
    parser.add_argument("--server-threads", type=int, default=4)
    parser.add_argument("--against-turkle", action="store_true")
    parser.add_argument("--no-floor", action="store_true", help="skip the canned-page floor")
    args = parser.parse_args()
    crowds = [int(n) for n in args.workers.split(",")]
    run = uuid.uuid4().hex[:8]
    var_dir = Path("var/bench-worker-path").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    port, floor_port = free_port(), free_port()
    env = {
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "HITFORGE_SECRET_KEY": uuid.uuid4().hex,
    }
    pg_name = f"hitforge_bench_{run}"
    if args.postgres:
        env["HITFORGE_DATABASE_URL"] = _fresh_postgres(args.postgres, pg_name)
    settings = load_settings(env)
    upgrade(settings)
    market = make_session_factory(make_engine(settings.market_database_url))
    seeded = seed(market, args.hits, progress=args.hits >= 200_000)
    shape = (args.server_processes, args.server_threads)
    processes = []
    turkle = None
    results: list[Result] = []
    try:
        server = serve(args.server, "server:create_app()", port, *shape, env, var_dir / "server.log")
        processes.append(server)
        if not args.no_floor:
            capture_pages(port, run, var_dir / "pages.json")
            floor = serve(
                args.server,
                "bench.canned_worker_site:app",
                floor_port,
                *shape,
                {"HITFORGE_BENCH_PAGES": str(var_dir / "pages.json")},
                var_dir / "floor.log",
            )
            processes.append(floor)
        if args.against_turkle:
            from bench import turkle as turkle_bench

            turkle_db = _fresh_postgres(args.postgres, f"{pg_name}_turkle") if args.postgres else None
            turkle = turkle_bench.start(var_dir, args.hits, *shape, turkle_db)
        for workers in crowds:
            for round_ in range(args.rounds):
                tag = f"{run}-{workers}-{round_}"
                if not args.no_floor:
                    results.append(
                        measure("floor", HitforgeFlow(f"{tag}-f"), floor_port, floor.pid, workers, args)
                    )
                    print(results[-1].line(), flush=True)
                top_up(market, seeded, args.hits)
                flow = HitforgeFlow(f"{tag}-h", accept_next=args.accept_next)
                results.append(measure("hitforge", flow, port, server.pid, workers, args))
                print(results[-1].line(), flush=True)
                if turkle is not None:
                    turkle.top_up(args.hits)
                    tflow = turkle.flow(f"{tag}-t")
                    results.append(measure("turkle", tflow, turkle.port, turkle.pid, workers, args))
                    print(results[-1].line(), flush=True)
    finally:
        for process in processes:
            stop(process)
        if turkle is not None:
            turkle.stop()
        if args.postgres:
            market.kw["bind"].dispose()
            _drop_postgres(args.postgres, pg_name)
            if args.against_turkle:
                _drop_postgres(args.postgres, f"{pg_name}_turkle")
    _summary(results, settings.market_database_url, args, seeded)
    export(
        {
            "database": settings.market_database_url.split(":", 1)[0],
            "hits": seeded.hits,
            "think": args.think,
            "seconds": args.seconds,
            "server": f"{args.server} {args.server_processes} x {args.server_threads}",
            "runs": [r.figures() for r in results],
        }
    )


def _summary(results: list[Result], database_url: str, args: argparse.Namespace, seeded: Seeded) -> None:
    print()
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}")
    print(
        f"database: {database_url.split(':', 1)[0]}; {seeded.hits:,} HITs at each run's start; "
        f"server: {args.server}, "
        f"{args.server_processes} processes x {args.server_threads} threads; think {args.think:g} s; "
        f"{args.seconds:g} s measured per run; accept-next: {'on' if args.accept_next else 'off'}"
    )
    for workers in sorted({r.workers for r in results}):
        mean = {
            site: statistics.mean(r.rate for r in results if r.site == site and r.workers == workers)
            for site in ("floor", "hitforge", "turkle")
            if any(r.site == site and r.workers == workers for r in results)
        }
        ratios = []
        if "turkle" in mean and mean["turkle"]:
            ratios.append(f"hitforge/Turkle {mean['hitforge'] / mean['turkle']:.1f}x")
        if "floor" in mean and mean["floor"]:
            ratios.append(f"hitforge/floor {mean['hitforge'] / mean['floor']:.1%}")
        rates = ", ".join(f"{site} {rate:.1f}/s" for site, rate in mean.items())
        print(f"{workers:4d} workers: {rates}; {'; '.join(ratios)}")


if __name__ == "__main__":
    main()
