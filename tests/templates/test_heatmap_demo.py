"""``hitforge demo --template heatmap`` as a user runs it, then ``hitforge results heatmap``."""

from __future__ import annotations

import csv
import io

import pytest

from demo.tasks.heatmap import MODELS
from hits.requester.templates.heatmap import QUESTIONS
from tests.helpers import run_hitforge

# The demo makes 36 pages of heatmaps: 261 s measured at load average 27 on 2 cores, near the 300 s default.
pytestmark = [pytest.mark.celery, pytest.mark.timeout(900)]


def test_the_heatmap_demo_runs_and_its_table_ranks_the_models_as_they_were_made(tmp_path) -> None:
    demo = run_hitforge(tmp_path, "demo", "--template", "heatmap", "--hits", "12", timeout=800)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in demo.stdout

    table = run_hitforge(tmp_path, "results", "heatmap", "demo-heatmap", timeout=120)
    assert table.returncode == 0, table.stdout + table.stderr
    assert (
        "Round 1: report sentences" in table.stdout and "Round 2: the workers' own sentences" in table.stdout
    )
    for label, _, _ in QUESTIONS.values():
        assert table.stdout.count(f"  {label}: ") == 2
    assert "Krippendorff's alpha, ordinal: " in table.stdout

    rows = list(
        csv.DictReader(
            io.StringIO(
                run_hitforge(tmp_path, "results", "heatmap", "demo-heatmap", "--format", "csv").stdout
            )
        )
    )
    assert {(r["round"], r["model"], r["question"]) for r in rows} == {
        (part, m, q) for part in ("report", "custom") for m in MODELS for q in QUESTIONS
    }
    mean = {(r["round"], r["model"], r["question"]): float(r["mean"]) for r in rows}
    for part in ("report", "custom"):
        # The demo's models were made to differ: the focused one is the most intuitive, the blurry one
        # covers the region but mostly lies elsewhere, the lost one points at the wrong places.
        assert mean[(part, "focused", "intuitive")] > mean[(part, "blurry", "intuitive")]
        assert mean[(part, "focused", "intuitive")] > mean[(part, "lost", "intuitive")]
        assert mean[(part, "blurry", "coverage")] > mean[(part, "lost", "coverage")]
        assert mean[(part, "focused", "share")] > mean[(part, "blurry", "share")]
        for r in rows:
            shares = [float(r[f"share_{v}"]) for v in range(1, 6)]
            assert abs(sum(shares) - 1) < 1e-3 and r["no_heatmap"] == "0"
    assert all(r["alpha"] and float(r["alpha"]) > 0 for r in rows)

    wrong = run_hitforge(tmp_path, "results", "heatmap", "demo-heatmap", "--format", "pdf", timeout=120)
    assert wrong.returncode == 2 and "--format" in wrong.stderr and "Traceback" not in wrong.stderr
