"""``hitforge demo --template sxs`` as a user runs it, then ``hitforge results sxs`` on what it left."""

from __future__ import annotations

import pytest

from demo.tasks.sxs import SYSTEMS
from hits.requester.templates.sxs import METRICS
from tests.helpers import run_hitforge

pytestmark = pytest.mark.celery


def test_the_sxs_demo_runs_and_its_table_prints_every_pair_and_metric(tmp_path) -> None:
    demo = run_hitforge(tmp_path, "demo", "--template", "sxs", "--hits", "12")
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in demo.stdout

    table = run_hitforge(tmp_path, "results", "sxs", "demo-sxs", timeout=120)
    assert table.returncode == 0, table.stdout + table.stderr
    pairs = [line for line in table.stdout.splitlines() if " vs " in line and line.endswith("judgements")]
    assert {tuple(line.split(":")[0].split(" vs ")) for line in pairs} <= {
        (x, y) for x in SYSTEMS for y in SYSTEMS if x < y
    }
    assert pairs
    for label, _ in METRICS.values():
        assert table.stdout.count(label) == len(pairs)
    # The demo's systems differ in skill; the strongest beats the weakest on comprehensiveness.
    hasty_keen = table.stdout.split("hasty vs keen:")[1].split("\n\n")[0]
    row = next(line for line in hasty_keen.splitlines() if line.startswith("Comprehensiveness"))
    assert row.split()[-3].startswith("+")

    wrong = run_hitforge(tmp_path, "results", "sxs", "demo-sxs", "--confidence", "2", timeout=120)
    assert wrong.returncode == 2 and "--confidence" in wrong.stderr and "Traceback" not in wrong.stderr
