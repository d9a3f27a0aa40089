"""``hitforge demo --template rank`` as a user runs it, then ``hitforge results rank`` on what it left."""

from __future__ import annotations

import pytest

from demo.tasks.rank import CONDITIONS, SYSTEMS
from tests.helpers import run_hitforge

pytestmark = pytest.mark.celery


def _block(table: str, title: str) -> dict[str, list[str]]:
    """One block of the printed table: row name -> its cells (split on runs of two spaces)."""
    lines = table.split(title, 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    rows = {}
    for line in lines:
        cells = [c.strip() for c in line.split("  ") if c.strip()]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_rank_demo_runs_and_its_table_prints_every_system_and_condition(tmp_path) -> None:
    demo = run_hitforge(tmp_path, "demo", "--template", "rank", "--hits", "12")
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in demo.stdout

    table = run_hitforge(tmp_path, "results", "rank", "demo-rank", timeout=120)
    assert table.returncode == 0, table.stdout + table.stderr
    mean = _block(table.stdout, "Mean rank")
    assert mean["system"] == [*CONDITIONS, "all"]
    assert set(mean) == {"system", "items / rankings", *SYSTEMS}
    firsts = _block(table.stdout, "First places")
    strength = _block(table.stdout, "Davidson")
    assert "tie parameter nu" in strength
    # The demo's systems differ in skill: over everything the best ranks first and wins most first places.
    overall = {s: float(mean[s][-1].split()[0]) for s in SYSTEMS}
    assert (
        min(overall, key=overall.__getitem__) == "keen" and max(overall, key=overall.__getitem__) == "hasty"
    )
    assert int(firsts["keen"][-1].split()[0]) > int(firsts["hasty"][-1].split()[0])
    assert float(strength["keen"][-1]) > float(strength["hasty"][-1])

    wrong = run_hitforge(tmp_path, "results", "rank", "demo-rank", "--confidence", "2", timeout=120)
    assert wrong.returncode == 2 and "--confidence" in wrong.stderr and "Traceback" not in wrong.stderr
    other = run_hitforge(tmp_path, "results", "rank", "demo-rank-nope", timeout=120)
    assert other.returncode == 1 and "no campaign named" in other.stderr and "Traceback" not in other.stderr
