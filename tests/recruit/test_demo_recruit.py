"""``hitforge demo --recruit prolific``: a campaign's crowd recruited through the stand-in, end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.celery


def count(output: str, label: str) -> int:
    found = re.search(rf"│ {re.escape(label)}\s+│\s+(\d+) │", output)
    assert found, f"no {label!r} row in:\n{output[-3000:]}"
    return int(found.group(1))


def test_the_demo_recruits_on_the_stand_in_and_prints_what_prolific_was_asked(tmp_path: Path) -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [
            sys.executable,
            "-m",
            "server.cli",
            "demo",
            "--template",
            "rating",
            "--hits",
            "6",
            "--recruit",
            "prolific",
        ],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-3000:]
    assert "Prolific STAND-IN (not Prolific)" in out
    assert re.search(r"Prolific study [0-9a-f]{24} created and published \(6 places\)", out)
    assert "spammers caught, diligent workers paid" in out
    assert count(out, "studies created") == 1 and count(out, "study PUBLISH") == 1
    # 6 places: 2 diligent participants approved, 2 spammers rejected with a category; the 2 careless
    # ones (right 65% of the time, just above the 0.6 threshold) are approved, rejected or left
    # waiting, their work held for QA, as their gold and agreement with the others fell.
    approvals = count(out, "approvals")
    rejected = re.search(r"│ rejections \(FAILED_CHECK (\d)\)\s+│\s+(\d) │", out)
    assert rejected is not None, out[-3000:]
    assert rejected.group(1) == rejected.group(2) and 2 <= int(rejected.group(1)) <= 4, out[-3000:]
    assert 2 <= approvals <= 4 and approvals + int(rejected.group(1)) <= 6, out[-3000:]
    assert count(out, "bonuses set up") == count(out, "bonus payments") >= 1
    assert "Prolific: study published, good places approved, spammers' places rejected" in out
    # The participants entered by the study link: no one signed up on the worker site.
    assert "could not sign in" not in out and "crowd error" not in out
