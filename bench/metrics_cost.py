"""What the metrics cost on the worker path: the same crowd against the server with them on and off.

    python -m bench.metrics_cost [--workers 50] [--seconds 20] [--rounds 3] [--hits 5000]

Two production servers (granian, 2 x 4) on the same seeded SQLite databases,
one with metrics as ``hitforge serve --production`` runs them (request timing,
the counters, multiprocess mode writing to ``PROMETHEUS_MULTIPROC_DIR``), one
with ``HITFORGE_METRICS=off``, measured in interleaved rounds so the machine's
drift falls on both alike. It reports submissions per second and server CPU
per submission for each, and their ratio (target: on within 5% of off).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import uuid
from pathlib import Path

from bench.results import export
from bench.serving import serve, stop
from bench.worker_path import Result, measure
from bench.worker_path_client import HitforgeFlow
from bench.worker_path_seed import seed, top_up
from demo.runner import free_port
from hits.db import make_engine, make_session_factory
from hits.schema import upgrade
from hits.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--think", type=float, default=0.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hits", type=int, default=5_000)
    args = parser.parse_args()
    args.postgres = None  # measure() reads PostgreSQL's CPU only for runs on it
    run = uuid.uuid4().hex[:8]
    var_dir = Path("var/bench-metrics-cost").resolve()
    shutil.rmtree(var_dir, ignore_errors=True)
    (var_dir / "metrics").mkdir(parents=True)
    ports = {"on": free_port(), "off": free_port()}
    base = {"HITFORGE_VAR_DIR": str(var_dir), "HITFORGE_SECRET_KEY": uuid.uuid4().hex}
    settings = load_settings(base)
    upgrade(settings)
    market = make_session_factory(make_engine(settings.market_database_url))
    seeded = seed(market, args.hits)
    envs = {
        "on": {**base, "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{ports['on']}",
               "PROMETHEUS_MULTIPROC_DIR": str(var_dir / "metrics")},
        "off": {**base, "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{ports['off']}", "HITFORGE_METRICS": "off"},
    }  # fmt: skip
    servers = {
        name: serve("granian", "server:create_app()", ports[name], 2, 4, envs[name], var_dir / f"{name}.log")
        for name in ("on", "off")
    }
    results: dict[str, list[Result]] = {"on": [], "off": []}
    try:
        for round_ in range(args.rounds):
            for name in ("off", "on") if round_ % 2 else ("on", "off"):
                top_up(market, seeded, args.hits)
                flow = HitforgeFlow(f"{run}-{name}-{round_}")
                result = measure(name, flow, ports[name], servers[name].pid, args.workers, args)
                results[name].append(result)
                print(f"metrics {result.line()}", flush=True)
    finally:
        for process in servers.values():
            stop(process)
    rate = {name: statistics.mean(r.rate for r in rs) for name, rs in results.items()}
    cpu = {
        name: statistics.mean(r.server_cpu / max(r.stats.submissions, 1) * 1000 for r in rs)
        for name, rs in results.items()
    }
    print()
    rounds = f"{args.rounds} interleaved rounds of {args.seconds:g} s"
    print(f"{args.workers} workers, {rounds}, SQLite, granian 2 x 4")
    print(f"metrics on:  {rate['on']:.1f} submissions/s, server CPU {cpu['on']:.2f} ms/submission")
    print(f"metrics off: {rate['off']:.1f} submissions/s, server CPU {cpu['off']:.2f} ms/submission")
    print(
        f"on/off: throughput {rate['on'] / rate['off']:.1%}, CPU per submission {cpu['on'] / cpu['off']:.1%}"
    )
    export(
        {
            "workers": args.workers,
            "rounds": args.rounds,
            "seconds": args.seconds,
            "rate": rate,
            "cpu_ms": cpu,
            "round_rates": {name: [r.rate for r in rs] for name, rs in results.items()},
        }
    )


if __name__ == "__main__":
    main()
