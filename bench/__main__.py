"""``python -m bench`` (``make bench``): the benchmarks that need nothing but this checkout.

Runs, one after the other, on the embedded SQLite default:

- ``bench.cli_startup``: how long ``hitforge`` commands that do no work take to start;
- ``bench.grading_core``: gold scoring and the decision rule, in memory;
- ``bench.broker_latency``: the embedded broker's round trip;
- ``bench.api_throughput``: CreateHIT and ListAssignmentsForHIT pages through boto3, with both floors;
- ``bench.review_pipeline``: the whole review pipeline on 3,000 assignments.

Each prints its own figures. The PostgreSQL and Redis variants, and the
100,000-assignment run, are in docs/benchmarks.md with their commands.
"""

from __future__ import annotations

import subprocess
import sys

RUNS = [
    ["bench.cli_startup"],
    ["bench.grading_core"],
    ["bench.broker_latency", "--count", "60"],
    ["bench.api_throughput", "--seconds", "10"],
    ["bench.review_pipeline", "--assignments", "3000"],
]


def main() -> int:
    """Run every benchmark in turn; stop at the first that fails."""
    for argv in RUNS:
        print(f"\n$ python -m {' '.join(argv)}", flush=True)
        code = subprocess.call([sys.executable, "-m", *argv])  # noqa: S603 - our own interpreter and modules
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
