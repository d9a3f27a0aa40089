"""``hitforge demo --template iiw``: the chained workflow with the simulated crowd, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.celery


def test_the_iiw_demo_runs_every_picture_to_its_end(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo", "--template", "iiw", "--hits", "3"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (
        "every picture converged or reached the round limit; no worker saw a picture twice" in result.stdout
    )
    assert "Task 2 over rounds" in result.stdout
    assert (tmp_path / "var" / "demo" / "campaign" / "seeds.jsonl").exists()
