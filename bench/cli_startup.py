"""CLI start-up: wall time of ``hitforge`` commands that do no work, as a user waits for them.

``python -m bench.cli_startup [--runs 10]`` runs each command ``--runs``
times (after one warm-up run, so the page cache is warm, as for a user who
types commands one after another) and prints the median, minimum and maximum
wall time, hyperfine-style, and the median CPU time. Each run is a fresh interpreter: the entry-point
script the venv installs (``hitforge``), or ``python -m server.cli`` where no
script is installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.results import export

COMMANDS = [
    ["--help"],
    ["launch", "--help"],
    ["staff", "--help"],
    ["results", "--help"],
    ["workers", "--help"],
    ["demo", "--help"],
]


def hitforge_argv() -> list[str]:
    """How to start ``hitforge``: the venv's script next to this interpreter, else ``-m server.cli``."""
    script = Path(sys.executable).with_name("hitforge")
    if script.exists():
        return [str(script)]
    found = shutil.which("hitforge")
    return [found] if found else [sys.executable, "-m", "server.cli"]


def time_runs(argv: list[str], runs: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Seconds of wall time and of CPU time (user + system) of ``runs`` runs of ``argv``.

    One untimed warm-up run first. The CPU time is what the start costs: on a
    shared machine the wall time adds however long the process waited for a core.
    """
    walls, cpus = [], []
    for n in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # noqa: S603 - our own command
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if n:
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def main() -> int:
    """Time each command of ``COMMANDS`` and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    base = hitforge_argv()
    with tempfile.TemporaryDirectory() as var_dir:
        # A var folder of its own: a command that reads settings creates var/ where it runs.
        env = {**os.environ, "HITFORGE_VAR_DIR": var_dir}
        print(f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores")
        print(f"{'command':<28} {'median':>8} {'min':>8} {'max':>8} {'CPU median':>11}  ({args.runs} runs)")
        rows = []
        for command in COMMANDS:
            walls, cpus = time_runs([*base, *command], args.runs, env)
            label = "hitforge " + " ".join(command)
            rows.append([label, statistics.median(walls), min(walls), max(walls), statistics.median(cpus)])
            print(
                f"{label:<28} {statistics.median(walls) * 1000:>6.0f} ms"
                f" {min(walls) * 1000:>5.0f} ms {max(walls) * 1000:>5.0f} ms"
                f" {statistics.median(cpus) * 1000:>8.0f} ms"
            )
    export({"runs": args.runs, "commands": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
