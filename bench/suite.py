"""What ``python -m bench`` runs: every benchmark in bench/, with the settings docs/benchmarks.md names.

A benchmark is one module and one generated section of docs/benchmarks.md (between
``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->``); its variants are the runs
that fill that section's table (SQLite and PostgreSQL, with and without think time, ...).
Arguments may hold placeholders the runner fills in:

- ``{postgres}``: the test PostgreSQL server's URL (the module makes its own database there);
- ``{fresh_postgres}``: a database the runner creates for this run and drops after it;
- ``{redis}``: a Redis database for the run.

A variant whose placeholders cannot be filled is skipped with a line saying why;
``optional`` arguments are added only when what they need is there (Redis for the broker
round trip, Turkle's virtualenv for the worker path's peer).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import render

PLACEHOLDER = re.compile(r"\{(postgres|fresh_postgres|redis)\}")


@dataclass(frozen=True)
class Variant:
    """One run of a benchmark module: a row (or rows) of its table."""

    label: str
    argv: tuple[str, ...]
    quick: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    #: (what it needs, arguments added when it is there), e.g. ("turkle", ("--against-turkle",)).
    optional: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def needs(self) -> set[str]:
        """The services this variant cannot run without (``fresh_postgres`` counts as postgres)."""
        found = set()
        for text in (*self.argv, *self.env.values()):
            found |= {name.replace("fresh_", "") for name in PLACEHOLDER.findall(text)}
        return found


@dataclass(frozen=True)
class Benchmark:
    """A module of bench/ and the section of docs/benchmarks.md its figures fill."""

    name: str
    module: str
    variants: tuple[Variant, ...]
    render: Callable[[list[tuple[Variant, Any]]], str]


PG_URL = {"HITFORGE_DATABASE_URL": "{fresh_postgres}"}

SUITE: tuple[Benchmark, ...] = (
    Benchmark(
        "cli_startup",
        "bench.cli_startup",
        (Variant("", ("--runs", "10"), ("--runs", "1")),),
        render.cli_startup,
    ),
    Benchmark(
        "grading_core",
        "bench.grading_core",
        (Variant("", (), ("--assignments", "3000", "--uncached-slice", "300")),),
        render.grading_core,
    ),
    Benchmark(
        "broker_latency",
        "bench.broker_latency",
        (Variant("", ("--count", "60"), ("--count", "3"), optional=(("redis", ("--redis", "{redis}")),)),),
        render.broker_latency,
    ),
    Benchmark(
        "api_throughput",
        "bench.api_throughput",
        (
            Variant("SQLite", ("--seconds", "10"), ("--seconds", "1")),
            Variant("PostgreSQL", ("--seconds", "10"), ("--seconds", "1"), env=PG_URL),
        ),
        render.api_throughput,
    ),
    Benchmark(
        "worker_path",
        "bench.worker_path",
        tuple(
            Variant(
                f"{database}, think {think} s",
                ("--workers", "50,200", "--think", think, "--seconds", "20", "--warmup", warmup, *where),
                (
                    "--workers",
                    "4",
                    "--think",
                    "0",
                    "--seconds",
                    "2",
                    "--warmup",
                    "1",
                    "--hits",
                    "100",
                    "--no-floor",
                    *where,
                ),
                optional=(("turkle", ("--against-turkle",)),),
            )  # fmt: skip
            for database, where in (("PostgreSQL", ("--postgres", "{postgres}")), ("SQLite", ()))
            for think, warmup in (("0", "3"), ("2", "5"))
        ),
        render.worker_path,
    ),
    Benchmark(
        "worker_path_profile",
        "bench.worker_path_profile",
        (
            Variant(
                "SQLite",
                ("--cycles", "300", "--no-profile"),
                ("--hits", "100", "--cycles", "5", "--no-profile"),
            ),
            Variant(
                "PostgreSQL",
                ("--cycles", "300", "--no-profile", "--postgres", "{postgres}"),
                ("--hits", "100", "--cycles", "5", "--no-profile", "--postgres", "{postgres}"),
            ),
        ),
        render.worker_path_profile,
    ),
    Benchmark(
        "review_pipeline",
        "bench.review_pipeline",
        (
            Variant("SQLite, embedded broker", ("--assignments", "3000"), ("--assignments", "30")),
            Variant(
                "PostgreSQL, Redis",
                ("--assignments", "3000", "--server-processes", "2"),
                ("--assignments", "30", "--server-processes", "2"),
                env={**PG_URL, "HITFORGE_BROKER_URL": "{redis}"},
            ),
        ),
        render.review_pipeline,
    ),
    Benchmark(
        "qa_pages",
        "bench.qa_pages",
        (
            Variant("SQLite", ("--hits", "10000"), ("--hits", "100", "--repeat", "2")),
            Variant(
                "PostgreSQL",
                ("--hits", "10000", "--database-url", "{fresh_postgres}"),
                ("--hits", "100", "--repeat", "2", "--database-url", "{fresh_postgres}"),
            ),
        ),
        render.qa_pages,
    ),
    Benchmark(
        "growth",
        "bench.growth",
        (Variant("SQLite", ("--sizes", "10000,100000,1000000"), ("--sizes", "100,200", "--repeat", "3")),),
        render.growth,
    ),
    Benchmark(
        "worker_model",
        "bench.worker_model",
        (
            Variant("issue crowd", ("issue", "20"), ("issue", "1")),
            Variant("mixture crowd", ("mixture", "20"), ("mixture", "1")),
        ),
        render.worker_model,
    ),
    Benchmark(
        "decision_step",
        "bench.decision_step",
        tuple(
            Variant(f"{hits} HITs", ("--hits", hits, "--repeats", "3"), ("--hits", "20", "--repeats", "1"))
            for hits in ("300", "500", "2000")
        ),
        render.decision_step,
    ),
    Benchmark(
        "metrics_cost",
        "bench.metrics_cost",
        (
            Variant(
                "",
                ("--workers", "50", "--seconds", "20", "--rounds", "3"),
                ("--workers", "4", "--seconds", "2", "--warmup", "1", "--rounds", "1", "--hits", "100"),
            ),
        ),
        render.metrics_cost,
    ),
)


def by_name() -> dict[str, Benchmark]:
    """The suite keyed by section name."""
    return {benchmark.name: benchmark for benchmark in SUITE}
