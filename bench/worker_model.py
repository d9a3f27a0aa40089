"""Issue 28's benchmark: today's rule against the worker model, on the simulated crowds.

``python -m bench.worker_model [issue|mixture|issue-adaptive|mixture-adaptive] [seeds]`` prints the
before/after table (Markdown), pooled over seeds 1..N with 95% Wilson intervals
(demo/simulation/model_figures.py). The -adaptive crowds are the same with adaptive gold.
"""

from __future__ import annotations

import sys
import time

from demo.simulation.model_figures import compare


def main() -> None:
    crowd = sys.argv[1] if len(sys.argv) > 1 else "issue"
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    started = time.perf_counter()
    table = compare(crowd, seeds)
    print(table)
    print(f"\n{time.perf_counter() - started:.0f} s")
    _export(crowd, seeds, table, time.perf_counter() - started)


def _export(crowd: str, seeds: int, table: str, seconds: float) -> None:
    """The run's table for ``python -m bench`` (bench/results.py)."""
    from bench.results import export

    export({"crowd": crowd, "seeds": seeds, "table": table, "seconds": seconds})


if __name__ == "__main__":
    main()
