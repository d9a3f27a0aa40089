"""``python -m bench`` (``make bench``): run every benchmark in bench/, rewrite docs/benchmarks.md's tables.

    python -m bench [--only NAME[,NAME]] [--quick] [--no-write] [--doc PATH] [--list]

Each benchmark of ``bench.suite.SUITE`` runs as its own process (``python -m
bench.MODULE ...``, the command printed before it and written into the doc), once per
variant, with the settings docs/benchmarks.md names. The module prints its report as
when run by hand and hands its figures over as JSON (bench/results.py); the runner
renders them (bench/render.py) between the benchmark's markers in the doc, with the
date, the machine and the commands, and leaves every other line of the doc alone.

PostgreSQL and Redis come from ``HITFORGE_TEST_POSTGRES_URL`` / ``HITFORGE_TEST_REDIS_URL``,
else from ``scripts/test-services.sh env``; a variant that needs one that is not
reachable is skipped with a line saying so, as is Turkle (the worker path's peer)
when ``var/turkle-venv`` is not installed. A section whose variants were all skipped
keeps its earlier figures. ``--quick`` runs small sizes (for the test of the runner
itself: its figures mean nothing), ``--no-write`` leaves the doc as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import doc_blocks, results
from bench.suite import PLACEHOLDER, SUITE, Benchmark, Variant, by_name

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
TURKLE_VENV = Path("var/turkle-venv/bin/python")
#: Each section's last figures, for ``--render-only``.
RESULTS = ROOT / "var" / "bench-results"
QUICK_NOTE = " with `--quick` (small sizes: not figures to quote)"
#: A Redis database of its own for the benchmarks' queues and round trips (tests use 0).
BENCH_REDIS_DB = 13
WHY = {
    "postgres": "no PostgreSQL (set HITFORGE_TEST_POSTGRES_URL or start scripts/test-services.sh)",
    "redis": "no Redis (set HITFORGE_TEST_REDIS_URL or start scripts/test-services.sh)",
    "turkle": "Turkle is not installed (var/turkle-venv; `bench.worker_path --against-turkle` installs it)",
}


def find_services() -> dict[str, str]:
    """The reachable services: "postgres" (a server URL), "redis" (a database URL), "turkle"."""
    urls = {
        "postgres": os.environ.get("HITFORGE_TEST_POSTGRES_URL", ""),
        "redis": os.environ.get("HITFORGE_TEST_REDIS_URL", ""),
    }
    script = ROOT / "scripts" / "test-services.sh"
    if not all(urls.values()) and script.exists():
        printed = subprocess.run([str(script), "env"], capture_output=True, text=True, check=False).stdout
        pairs = dict(line.split("=", 1) for line in printed.splitlines() if "=" in line)
        urls["postgres"] = urls["postgres"] or pairs.get("HITFORGE_TEST_POSTGRES_URL", "")
        urls["redis"] = urls["redis"] or pairs.get("HITFORGE_TEST_REDIS_URL", "")
    found = {}
    if urls["postgres"] and results.postgres_version(urls["postgres"]):
        found["postgres"] = urls["postgres"]
    if urls["redis"] and _redis_answers(urls["redis"]):
        found["redis"] = urls["redis"].rsplit("/", 1)[0] + f"/{BENCH_REDIS_DB}"
    if TURKLE_VENV.exists():
        found["turkle"] = str(TURKLE_VENV)
    return found


def _redis_answers(url: str) -> bool:
    try:
        import redis

        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except Exception:  # noqa: BLE001 - unreachable for whatever reason: skipped, with the reason above
        return False


class Run:
    """One variant's process: its arguments with the placeholders filled, and a fresh database if asked."""

    def __init__(self, benchmark: Benchmark, variant: Variant, quick: bool, services: dict[str, str]) -> None:
        self.benchmark, self.variant = benchmark, variant
        self.fresh_name = f"hitforge_bench_{uuid.uuid4().hex[:8]}"
        self.services = services
        argv = list(variant.quick if quick else variant.argv)
        for need, extra in variant.optional:
            if need in services:
                argv += extra
        self.argv, self.env = argv, dict(variant.env)
        self.uses_fresh = any("{fresh_postgres}" in text for text in (*argv, *self.env.values()))

    def fill(self, text: str, shown: bool = False) -> str:
        """``text`` with its placeholders replaced (``shown``: as the doc prints them, no password)."""
        from sqlalchemy.engine import make_url

        def value(match: Any) -> str:
            name = match.group(1)
            url = self.services["postgres" if name == "fresh_postgres" else name]
            if name == "fresh_postgres":
                url = make_url(url).set(database=self.fresh_name if not shown else "hitforge_bench_RUN")
                return url.render_as_string(hide_password=shown)
            return make_url(url).render_as_string(hide_password=True) if shown and "://" in url else url

        return PLACEHOLDER.sub(value, text)

    def command(self) -> str:
        """The command as the doc shows it."""
        env = " ".join(f"{k}={self.fill(v, shown=True)}" for k, v in self.env.items())
        argv = " ".join(self.fill(a, shown=True) for a in self.argv)
        return f"{env + ' ' if env else ''}python -m {self.benchmark.module} {argv}".rstrip()

    def execute(self) -> tuple[int, Any]:
        """Run the module; (exit code, its exported figures or None)."""
        from bench.worker_path import _drop_postgres, _fresh_postgres

        if self.uses_fresh:
            _fresh_postgres(self.services["postgres"], self.fresh_name)
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "result.json"
            env = {
                **os.environ,
                **{k: self.fill(v) for k, v in self.env.items()},
                results.RESULT_ENV: str(out),
            }
            argv = [sys.executable, "-m", self.benchmark.module, *(self.fill(a) for a in self.argv)]
            print(f"\n$ {self.command()}", flush=True)
            try:
                code = subprocess.call(argv, env=env, cwd=ROOT)
            finally:
                if self.uses_fresh:
                    _drop_postgres(self.services["postgres"], self.fresh_name)
            figures = json.loads(out.read_text()) if out.exists() else None
        return (code if figures is not None or code else 1), figures


def run_benchmark(
    benchmark: Benchmark, quick: bool, services: dict[str, str]
) -> tuple[dict[str, Any] | None, bool]:
    """Run every variant of ``benchmark``; (what ran, for :func:`compose`, or None if nothing did; all ok)."""
    started = datetime.now(UTC)
    machine = results.machine(services.get("postgres"))
    done: list[tuple[int, Any]] = []
    commands, notes, ok = [], [], True
    left_out: dict[str, list[str]] = {}
    for index, variant in enumerate(benchmark.variants):
        missing = sorted(variant.needs() - services.keys())
        run = Run(benchmark, variant, quick, services)
        label = variant.label or benchmark.name
        if missing:
            line = f"{label}: skipped, {'; '.join(WHY[m] for m in missing)}"
            print(f"\n# {benchmark.name}: {line}", flush=True)
            notes.append(line)
            continue
        for need, extra in variant.optional:
            if need not in services:
                left_out.setdefault(f"without `{' '.join(extra)}`: {WHY[need]}", []).append(label)
        code, figures = run.execute()
        commands.append(run.command())
        if code or figures is None:
            ok = False
            notes.append(f"{label}: failed (exit {code})")
            print(f"\n# {benchmark.name}: {label} failed (exit {code})", flush=True)
            continue
        done.append((index, figures))
    notes += [f"{', '.join(labels)}: {why}" for why, labels in left_out.items()]
    if not done:
        return None, ok
    minutes = (datetime.now(UTC) - started).total_seconds() / 60
    record = {"quick": quick, "started": f"{started:%Y-%m-%d %H:%M}", "minutes": minutes, "machine": machine,
              "commands": commands, "notes": notes, "done": done}  # fmt: skip
    saved = RESULTS / ("quick" if quick else "") / f"{benchmark.name}.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(record, indent=1, default=str))
    return record, ok


def compose(benchmark: Benchmark, record: dict[str, Any]) -> str:
    """The doc section's body: when, the machine, the commands, what was left out, the table."""
    machine = record["machine"]
    lines = [
        f"*Generated by `python -m bench` (`make bench`){QUICK_NOTE if record['quick'] else ''}"
        f" on {record['started']} UTC in {record['minutes']:.0f} min; the lines between the markers are"
        " rewritten at each run.*",
        "",
        f"Machine: {results.describe(machine)}; load average {machine['load']} at the start.",
        "",
        *(f"    {command}" for command in record["commands"]),
        "",
    ]
    if record["notes"]:
        lines += [*(f"- {note}" for note in record["notes"]), ""]
    lines.append(
        benchmark.render([(benchmark.variants[index], figures) for index, figures in record["done"]])
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks in turn and rewrite their sections of the doc."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated section names (see --list)")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the runner")
    parser.add_argument("--no-write", action="store_true", help="leave the doc as it is")
    parser.add_argument("--doc", type=Path, default=DOC, help="the document to rewrite")
    parser.add_argument("--list", action="store_true", help="print the benchmarks and their commands")
    parser.add_argument(
        "--render-only",
        action="store_true",
        help=f"rewrite the sections from the last run's figures ({RESULTS})",
    )
    args = parser.parse_args(argv)
    suite = by_name()
    chosen = [suite[name] for name in args.only.split(",")] if args.only else list(SUITE)
    if args.only and (unknown := set(args.only.split(",")) - suite.keys()):
        parser.error(f"unknown benchmark(s) {', '.join(sorted(unknown))}; choose from {', '.join(suite)}")
    if args.list:
        for benchmark in SUITE:
            for variant in benchmark.variants:
                print(
                    f"{benchmark.name:20s} {variant.label:24s} "
                    f"python -m {benchmark.module} {' '.join(variant.argv)}"
                )
        return 0
    text = args.doc.read_text()
    for benchmark in chosen:  # fail before running anything if a section has no markers
        if doc_blocks.block(text, benchmark.name) is None:
            parser.error(f"{args.doc} has no {' ... '.join(doc_blocks.markers(benchmark.name))} section")
    if args.render_only:
        for benchmark in chosen:
            saved = RESULTS / f"{benchmark.name}.json"
            if saved.exists():
                body = compose(benchmark, json.loads(saved.read_text()))
                args.doc.write_text(doc_blocks.replace_block(args.doc.read_text(), benchmark.name, body))
            else:
                print(f"{benchmark.name}: no saved figures ({saved})")
        return 0
    services = find_services()
    print(f"services: {', '.join(sorted(services)) or 'none'}", flush=True)
    failed = []
    began = time.monotonic()
    for benchmark in chosen:
        record, ok = run_benchmark(benchmark, args.quick, services)
        if not ok:
            failed.append(benchmark.name)
        if record is not None and not args.no_write:
            # Written after each benchmark: a long run stopped halfway keeps what it measured.
            body = compose(benchmark, record)
            args.doc.write_text(doc_blocks.replace_block(args.doc.read_text(), benchmark.name, body))
    print(f"\n{len(chosen)} benchmark(s) in {(time.monotonic() - began) / 60:.1f} min"
          + (f"; failed: {', '.join(failed)}" if failed else ""))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
