"""``hitforge demo --template NAME``: a whole campaign of another template, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hits.demo_tasks import demo_tasks

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.celery


def test_the_demo_runs_with_the_target_template(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo", "--template", "target"],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(REPO),
            "COLUMNS": "120",
            # A shell set up for another deployment: the demo keeps to its own embedded files.
            "HITFORGE_DATABASE_URL": f"sqlite:///{tmp_path / 'elsewhere.sqlite'}",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in result.stdout
    assert (tmp_path / "var" / "demo" / "campaign" / "items.jsonl").exists()
    assert '"template": "target"' not in result.stdout  # the summary, not a dump


def test_an_unknown_template_is_refused_with_the_choices(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "server.cli", "demo", "--template", "nonsense"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "choose one of: " + ", ".join(sorted(demo_tasks())) in result.stdout
    assert "objects" in demo_tasks() and "rank" in demo_tasks() and "heatmap" in demo_tasks()
    assert "iiw" in result.stdout
