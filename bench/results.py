"""How a benchmark hands its figures to ``python -m bench``: one JSON document, and the machine.

Each benchmark module still prints its own report. At the end of its ``main``
it also calls :func:`export` with its figures as plain JSON values; when the
runner started it, ``HITFORGE_BENCH_RESULT`` names the file to write them to
(otherwise the call does nothing), and the runner renders them into
docs/benchmarks.md. Keeping the hand-over to one call at the end of ``main``
leaves the modules' own code as it was.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
from pathlib import Path
from typing import Any

RESULT_ENV = "HITFORGE_BENCH_RESULT"


def export(figures: Any) -> None:
    """Write ``figures`` (JSON-serialisable) where the runner asked for them, if it did."""
    path = os.environ.get(RESULT_ENV)
    if path:
        Path(path).write_text(json.dumps(figures, indent=1, default=str))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return None


def postgres_version(url: str | None) -> str | None:
    """``server_version`` of the PostgreSQL at ``url`` (a SQLAlchemy URL), or None if unreachable."""
    if not url:
        return None
    try:
        import psycopg
        from sqlalchemy.engine import make_url

        plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(plain, connect_timeout=5) as connection:
            row = connection.execute("SHOW server_version").fetchone()
        return str(row[0]).split()[0] if row else None
    except Exception:  # noqa: BLE001 - the machine line just leaves the version out
        return None


def machine(postgres_url: str | None = None) -> dict[str, Any]:
    """The machine a run was taken on: CPU model, cores, RAM, OS, Python, SQLite, PostgreSQL, load."""
    ram = _ram_gb()
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gb": round(ram) if ram else None,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgres": postgres_version(postgres_url),
        "load": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None,
    }


def describe(info: dict[str, Any]) -> str:
    """One line naming the machine, for the generated sections."""
    parts = [f"{info['cpu']}, {info['cores']} cores"]
    if info.get("ram_gb"):
        parts.append(f"{info['ram_gb']} GB RAM")
    parts += [info["os"], f"Python {info['python']}", f"SQLite {info['sqlite']}"]
    if info.get("postgres"):
        parts.append(f"PostgreSQL {info['postgres']}")
    return ", ".join(parts)
