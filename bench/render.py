"""Markdown tables of each benchmark's exported figures, for docs/benchmarks.md's generated sections.

Each function takes the variants that ran with what each exported (bench/results.py) and
returns the table. Only the figures are rendered here; what they mean stays in the
prose around the markers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.suite import Variant

Runs = list[tuple["Variant", Any]]


def table(header: list[str], rows: list[list[str]], right_from: int = 1) -> str:
    """A Markdown table; columns from ``right_from`` on are right-aligned (figures)."""
    align = ["---" if n < right_from else "---:" for n in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def n(value: float, digits: int = 0) -> str:
    """A figure with thousands separators."""
    return f"{value:,.{digits}f}"


def cli_startup(runs: Runs) -> str:
    """Wall median (min, max) and CPU median of each command."""
    (_, result), *_ = runs
    rows = [
        [
            f"`{label}`",
            f"{n(med * 1000)} ms",
            f"{n(low * 1000)} ms",
            f"{n(high * 1000)} ms",
            f"{n(cpu * 1000)} ms",
        ]
        for label, med, low, high, cpu in result["commands"]
    ]
    return table([f"command ({result['runs']} runs)", "wall median", "min", "max", "CPU median"], rows)


def grading_core(runs: Runs) -> str:
    """Assignments a second by each path."""
    (_, result), *_ = runs
    rows = []
    for path, rate in result["rates"].items():
        on = result["assignments"] if path.startswith("cached") else result["slice"]
        rows.append([path, f"{n(rate)}/s", n(on)])
    return table(["path", "assignments/s", "assignments graded"], rows)


def broker_latency(runs: Runs) -> str:
    """Round trip of one message at a time, per broker."""
    (_, result), *_ = runs
    names = {"embedded": "hitforge's embedded transport (0.05 s poll)", "redis": "Redis on loopback"}
    rows = [
        [names.get(name, name), f"{f['median']:.1f} ms", f"{f['p95']:.1f} ms", f"{f['max']:.1f} ms"]
        for name, f in result["brokers"].items()
    ]
    return table([f"broker ({result['count']} messages)", "median", "p95", "max"], rows)


def _rate(f: dict[str, Any]) -> str:
    return f"{n(f['rate'])}/s, p99 {f['p99']:.0f} ms"


def api_throughput(runs: Runs) -> str:
    """Floors and the two workloads per database, with CPU a call."""
    rows = []
    for variant, r in runs:
        # The database's share is PostgreSQL's processes; on SQLite it is inside the server's.
        shares = 3 if r["database"].startswith("postgresql") else 2
        cpu = lambda f, shares=shares: " / ".join(n(us) for us in f["cpu_us"][:shares])  # noqa: E731
        rows.append(
            [variant.label or r["database"], r["server"], f"{n(r['noop_floor']['rate'])}/s",
             f"{n(r['page_floor']['rate'])}/s", _rate(r["create_hit"]), _rate(r["pages"]),
             f"{r['create_hit']['rate'] / r['noop_floor']['rate']:.0%}",
             " / ".join(n(us) for us in r["noop_floor"]["cpu_us"][:2]), cpu(r["create_hit"]), cpu(r["pages"])]
        )  # fmt: skip
    # The floor's CPU a call is what any server costs this client at least: the bound the
    # review pipeline's calls an assignment are multiplied by (docs/benchmarks.md).
    header = ["database", "server", "no-op floor", "page floor", "CreateHIT", "ListAssignmentsForHIT pages",
              "CreateHIT / no-op floor", "no-op CPU us: client / server",
              "CreateHIT CPU us: client / server / db", "page CPU us"]  # fmt: skip
    return table(header, rows, right_from=2)


def _ratio(mine: dict[str, Any], other: dict[str, Any] | None) -> str:
    return f"{mine['rate'] / other['rate']:.1f}x" if other and other["rate"] else "-"


def worker_path(runs: Runs) -> str:
    """One row per crowd size and variant: sites' rates, ratios, CPU a submission."""
    rows = []
    for variant, r in runs:
        for workers in sorted({run["workers"] for run in r["runs"]}):
            site = {run["site"]: run for run in r["runs"] if run["workers"] == workers}
            mine = site["hitforge"]
            turkle, floor = site.get("turkle"), site.get("floor")
            cpu = f"{mine['server_cpu_ms']:.1f}"
            if mine["database_cpu_ms"] > 0:  # every PostgreSQL process's: others' work included
                cpu += f" (+{mine['database_cpu_ms']:.1f} db)"
            share = f"{mine['rate'] / floor['rate']:.1%}" if floor and floor["rate"] else "-"
            latency = ", ".join(f"{k} {p50:.0f}/{p99:.0f}" for k, (p50, p99) in mine["latency_ms"].items())
            rows.append(
                [variant.label, str(workers), f"{mine['rate']:.1f}",
                 f"{turkle['rate']:.1f}" if turkle else "not run", f"{floor['rate']:.1f}" if floor else "-",
                 _ratio(mine, turkle), share, f"{mine['failed_accepts_per_submission']:.2f}", cpu, latency]
            )  # fmt: skip
    header = ["run", "workers", "hitforge subs/s", "Turkle subs/s", "floor subs/s", "hitforge / Turkle",
              "hitforge / floor", "failed accepts a submission", "server CPU a submission, ms",
              "p50/p99 ms (begun after warm-up)"]  # fmt: skip
    return table(header, rows, right_from=1)


def worker_path_profile(runs: Runs) -> str:
    """In-process time and CPU of each request of a cycle, per database, and the database's share."""
    kinds = ["list", "accept", "work", "frame", "submit"]
    rows = []
    for variant, r in runs:
        req = r["requests"]
        cycle_cpu = sum(req[k]["cpu_ms"] for k in kinds if k in req)
        in_statements = sum(req[k].get("in_statements_ms", 0.0) for k in kinds if k in req)
        database = r.get("database_cpu_ms_per_cycle")
        rows.append(
            [f"{variant.label}, {n(r['hits'])} HITs, {r['cycles']} cycles"]
            + [f"{req[k]['ms']:.2f} / {req[k]['cpu_ms']:.2f} ({req[k]['statements']})" for k in kinds]
            + [f"{cycle_cpu:.2f} ms", f"{1000 / cycle_cpu:.0f}" if cycle_cpu else "-",
               f"{in_statements:.2f} ms", f"{database:.2f} ms" if database is not None else "-"]
        )  # fmt: skip
    header = ["run", *(f"{k}: ms / CPU ms (statements)" for k in kinds), "app CPU a cycle",
              "cycles/s a core (app only)", "in statements a cycle", "PostgreSQL CPU a cycle"]  # fmt: skip
    return table(header, rows)


def review_pipeline(runs: Runs) -> str:
    """Phases, throughput and CPU an assignment per configuration."""
    rows = []
    for variant, r in runs:
        marks = r["marks"]
        # The database's share counts every PostgreSQL process on the machine (others' ones may end;
        # on SQLite none of it is this run's: its work is in the processes that use it).
        cpu = {k: v for k, v in r["cpu"].items() if k != "database" or r["database"].startswith("postgresql")}
        spent = sum(seconds for seconds in cpu.values() if seconds > 0)
        rows.append(
            [variant.label, r["server"], n(r["assignments"]), f"{marks.get('synced', 0):.0f} s",
             f"{r['elapsed']:.0f} s", f"{n(r['throughput'])}/s",
             f"{1000 * spent / r['assignments']:.1f} ms" if spent else "-"]
        )  # fmt: skip
    header = [
        "database, broker",
        "API server",
        "assignments",
        "synced",
        "applied",
        "throughput",
        "CPU an assignment",
    ]
    return table(header, rows, right_from=2)


def qa_pages(runs: Runs) -> str:
    """Median ms and x floor of each page, one pair of columns per database."""
    header, columns = ["page"], []
    for variant, r in runs:
        header += [f"{n(r['hits'])} HITs, {variant.label} ms", "x floor"]
        columns.append(r)
    names = ["floor: the staff sign-in page", *columns[0]["pages"]] if columns else []
    rows = []
    for name in names:
        row = [name]
        for r in columns:
            ms = r["floor"] if name.startswith("floor") else r["pages"].get(name)
            row += ["-", "-"] if ms is None else [f"{ms:.1f}", f"{ms / r['floor']:.1f}"]
        rows.append(row)
    return table(header, rows)


def growth(runs: Runs) -> str:
    """Per-request ms at each size and the largest over the smallest (bench/growth.py)."""
    parts = []
    for variant, r in runs:
        sizes = [str(size) for size in r["sizes"]]
        header = [
            "request",
            *(f"{n(int(s))} HITs, ms" for s in sizes),
            f"{n(int(sizes[-1]))} / {n(int(sizes[0]))}",
        ]
        rows = []
        for name, by_size in r["requests"].items():
            cells = [f"{by_size[s]:.2f}" if s in by_size else "-" for s in sizes]
            first, last = by_size.get(sizes[0]), by_size.get(sizes[-1])
            ratio = f"{last / first:.2f}" if first and last else "-"
            rows.append([name, *cells, ratio])
        parts.append((f"{variant.label}:\n\n" if len(runs) > 1 else "") + table(header, rows))
    return "\n\n".join(parts)


def worker_model(runs: Runs) -> str:
    """The before/after tables as ``compare`` prints them, one per crowd."""
    return "\n\n".join(f"{variant.label}, {r['seeds']} seeds:\n\n{r['table'].strip()}" for variant, r in runs)


def decision_step(runs: Runs) -> str:
    """Model off and on, and their ratio, per campaign size."""
    rows = [
        [f"{n(r['hits'])} HITs ({r['workers']} workers in the batch)", f"{n(r['off_ms'])} ms",
         f"{n(r['on_ms'])} ms", f"{r['ratio']:.2f}"]
        for _, r in runs
    ]  # fmt: skip
    return table(["campaign (median of each)", "model off", "model on", "on/off"], rows)


def metrics_cost(runs: Runs) -> str:
    """Submissions a second and server CPU a submission with metrics on and off."""
    (_, r), *_ = runs
    rows = [
        [name, f"{r['rate'][name]:.1f}", f"{r['cpu_ms'][name]:.2f} ms",
         ", ".join(f"{rate:.1f}" for rate in r["round_rates"][name])]
        for name in ("on", "off")
    ]  # fmt: skip
    rows.append(
        [
            "on / off",
            f"{r['rate']['on'] / r['rate']['off']:.1%}",
            f"{r['cpu_ms']['on'] / r['cpu_ms']['off']:.1%}",
            "",
        ]
    )
    return table(
        [f"metrics ({r['workers']} workers)", "submissions/s", "server CPU a submission", "each round"], rows
    )
