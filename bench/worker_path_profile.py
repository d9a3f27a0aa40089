"""Where a worker-path cycle's server time goes: one worker's cycles in-process under cProfile.

    python -m bench.worker_path_profile [--hits 5000] [--cycles 200] [--postgres URL] [--top 25]
                                        [--statements] [--pyinstrument]

Seeds like ``bench.worker_path``, then runs ``--cycles`` cycles (list, group
accept, work page, task frame, submit) through Flask's test client, with no
HTTP server, and prints the server time of each request type and the
functions that cost the most (cumulative and own time), or with
``--pyinstrument`` a sampled call tree instead of cProfile's tables (less
distorted: cProfile's per-call overhead inflates small, often-called
functions such as SQLAlchemy's and Werkzeug's). The HTTP layer and
the client are left out on purpose: this is the application's own cost.
"""

from __future__ import annotations

import argparse
import cProfile
import html
import io
import pstats
import re
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from sqlalchemy import event

from bench.cpu import tree_cpu
from bench.results import export
from bench.worker_path import _drop_postgres, _fresh_postgres
from bench.worker_path_seed import seed
from hits.db import make_engine, make_session_factory
from hits.schema import upgrade
from hits.settings import load_settings
from server import create_app

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
GROUP_ACCEPT = re.compile(r'action="(/groups/[^"/]+/accept)"')
IFRAME_SRC = re.compile(r'<iframe[^>]* src="([^"]+)"')


def _report(title: str, spent: dict[str, float], cycles: int, cpu: dict[str, float] | None = None) -> None:
    print(f"{title}: {sum(spent.values()) / cycles * 1000:.1f} ms a cycle over {cycles} cycles")
    if cpu is not None:
        print(f"  CPU     {sum(cpu.values()) / cycles * 1000:6.2f} ms a cycle (this process only)")
    for kind, seconds in spent.items():
        mine = f"  CPU {cpu[kind] / cycles * 1000:6.2f} ms" if cpu is not None else ""
        print(f"  {kind:7s} {seconds / cycles * 1000:6.2f} ms{mine}")


def sign_up(client: Any, username: str) -> None:
    """Sign a new worker up (and so in) through the test client."""
    page = client.get("/signup").text
    client.post(
        "/signup",
        data={"csrf_token": CSRF.findall(page)[0], "username": username, "password": "a-long-password"},
    )


def run_cycle(client: Any, timed: Callable[[str, Callable[[], Any]], Any]) -> None:
    """One worker's cycle through the test client: list, group accept, work page, task frame, submit.

    ``timed(kind, call)`` makes each request and returns its response (and times it).
    """
    listing = timed("list", lambda: client.get("/")).text
    action, token = GROUP_ACCEPT.findall(listing)[0], CSRF.findall(listing)[0]
    accepted = timed("accept", lambda: client.post(action, data={"csrf_token": token}))
    work = timed("work", lambda: client.get(accepted.headers["Location"])).text
    frame = html.unescape(IFRAME_SRC.findall(work)[0])
    timed("frame", lambda: client.get(frame))
    params = {k: v[0] for k, v in parse_qs(urlparse(frame).query).items()}
    answer = {
        "assignmentId": params["assignmentId"],
        "hitforgeToken": params["hitforgeToken"],
        "caption": "x",
    }
    timed("submit", lambda: client.post("/mturk/externalSubmit", data=answer))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hits", type=int, default=5_000)
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--postgres")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--statements", action="store_true", help="print the SQL statements of one cycle, by request"
    )
    parser.add_argument("--no-profile", action="store_true", help="only the timings, no profiler run")
    parser.add_argument(
        "--pyinstrument", action="store_true", help="a sampled call tree (pyinstrument) instead of cProfile"
    )
    args = parser.parse_args()
    run = uuid.uuid4().hex[:8]
    var_dir = Path("var/bench-worker-path-profile").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    var_dir.mkdir(parents=True)
    env = {"HITFORGE_VAR_DIR": str(var_dir), "HITFORGE_SECRET_KEY": run}
    if args.postgres:
        env["HITFORGE_DATABASE_URL"] = _fresh_postgres(args.postgres, f"hitforge_prof_{run}")
    settings = load_settings(env)
    upgrade(settings)
    seed(make_session_factory(make_engine(settings.market_database_url)), args.hits, progress=True)
    app = create_app(settings=settings)
    client = app.test_client()
    sign_up(client, "p")
    spent: dict[str, float] = defaultdict(float)
    # CPU time of this process as well as wall time: on a shared machine the wall time
    # mostly measures the others' load.
    cpu: dict[str, float] = defaultdict(float)
    sent: list[str] = []
    statements: dict[str, list[str]] = defaultdict(list)
    rt = app.extensions["hitforge"]
    # Time inside the driver's execute (the round trip and the database's work), and on
    # PostgreSQL the backends serving this process, whose CPU is then read from /proc: what
    # the database spends a cycle, apart from whatever else the server is doing.
    in_statements: dict[str, float] = defaultdict(float)
    backends: set[int] = set()
    for engine in {rt.market_engine, rt.requester_engine}:
        event.listen(engine, "before_cursor_execute", lambda _c, _cur, sql, *_: sent.append(sql))
        event.listen(
            engine, "before_cursor_execute", lambda c, *_: c.info.__setitem__("t0", time.perf_counter())
        )
        event.listen(
            engine,
            "after_cursor_execute",
            lambda c, *_: in_statements.__setitem__(
                "now", in_statements["now"] + time.perf_counter() - c.info["t0"]
            ),
        )
        if engine.dialect.name == "postgresql":  # psycopg's connection knows its backend's pid
            event.listen(engine, "checkout", lambda dbapi, *_: backends.add(dbapi.info.backend_pid))

    def timed(kind: str, call):  # type: ignore[no-untyped-def]
        sent.clear()
        in_statements["now"] = 0.0
        started, started_cpu = time.perf_counter(), time.process_time()
        result = call()
        spent[kind] += time.perf_counter() - started
        cpu[kind] += time.process_time() - started_cpu
        in_statements[kind] += in_statements["now"]
        statements[kind] = list(sent)
        return result

    def cycle() -> None:
        run_cycle(client, timed)

    for _ in range(5):
        cycle()  # warm caches and pools
    spent.clear()
    cpu.clear()
    in_statements.clear()
    backends.discard(0)
    database_before = tree_cpu(backends)
    for _ in range(args.cycles):
        cycle()
    database_cpu = (tree_cpu(backends) - database_before) / args.cycles * 1000 if backends else None
    _report(f"{args.hits:,} HITs, no profiler", spent, args.cycles, cpu)
    statement_ms = sum(v for k, v in in_statements.items() if k != "now") / args.cycles * 1000
    print(
        f"  in statements {statement_ms:.2f} ms a cycle"
        + (f"; PostgreSQL backends' CPU {database_cpu:.2f} ms a cycle" if database_cpu is not None else "")
    )
    print("statements a request: " + ", ".join(f"{k} {len(v)}" for k, v in statements.items()))
    export(
        {
            "database": settings.market_database_url.split(":", 1)[0],
            "hits": args.hits,
            "cycles": args.cycles,
            "requests": {
                kind: {
                    "ms": spent[kind] / args.cycles * 1000,
                    "cpu_ms": cpu[kind] / args.cycles * 1000,
                    "statements": len(statements[kind]),
                    "in_statements_ms": in_statements[kind] / args.cycles * 1000,
                }
                for kind in spent
            },
            "database_cpu_ms_per_cycle": database_cpu,
        }
    )
    if args.statements:
        for kind, sqls in statements.items():
            print(f"-- {kind}")
            for sql in sqls:
                print("   " + " ".join(sql.split())[:200])
    spent.clear()
    if args.no_profile:
        pass
    elif args.pyinstrument:
        from pyinstrument import Profiler  # a bench-only tool: imported only when asked for

        sampler = Profiler(interval=0.0005)
        sampler.start()
        for _ in range(args.cycles):
            cycle()
        sampler.stop()
        _report(f"{args.hits:,} HITs, under pyinstrument", spent, args.cycles)
        print(sampler.output_text(unicode=False, color=False, short_mode=False))
    else:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.cycles):
            cycle()
        profiler.disable()
        _report(f"{args.hits:,} HITs, under cProfile", spent, args.cycles)
        for order in ("cumulative", "tottime"):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(args.top)
            print(out.getvalue())
    if args.postgres:
        _drop_postgres(args.postgres, f"hitforge_prof_{run}")


if __name__ == "__main__":
    main()
