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


def profile_row(output: str, profile: str) -> dict[str, int]:
    """A row of the demo's per-profile table: its assignments, approved, rejected and held."""
    found = re.search(rf"│ {profile}\s+│\s+\d+ │\s+(\d+) │\s+\d+% │\s+(\d+) │\s+(\d+) │\s+(\d+) │", output)
    assert found, f"no {profile!r} row in:\n{output[-3000:]}"
    return dict(zip(("assignments", "approved", "rejected", "held"), map(int, found.groups()), strict=True))


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
    # 6 places of 3 tasks: the 2 diligent participants' work all approved, the 2 spammers' never;
    # a spammer is rejected with a category when their 6 gold answers and agreement with the others
    # are confidently bad, else their work waits for QA (6 gold is little: the run's luck decides).
    # The 2 careless ones (right 65% of the time, just above the 0.6 threshold) are approved,
    # rejected or left waiting as their gold and agreement fell.
    assert profile_row(out, "diligent") == {"assignments": 6, "approved": 6, "rejected": 0, "held": 0}
    spammers = profile_row(out, "spammer")
    assert spammers["approved"] == 0 and spammers["rejected"] >= 3, out[-3000:]
    assert spammers["rejected"] + spammers["held"] == 6, out[-3000:]
    approvals = count(out, "approvals")
    rejected = re.search(r"│ rejections \(FAILED_CHECK (\d)\)\s+│\s+(\d) │", out)
    assert rejected is not None, out[-3000:]
    assert rejected.group(1) == rejected.group(2) and 1 <= int(rejected.group(1)) <= 4, out[-3000:]
    assert 2 <= approvals <= 4 and approvals + int(rejected.group(1)) <= 6, out[-3000:]
    assert count(out, "bonuses set up") == count(out, "bonus payments") >= 1
    assert "Prolific: study published, good places approved, spammers' places rejected" in out
    # The participants entered by the study link: no one signed up on the worker site.
    assert "could not sign in" not in out and "crowd error" not in out
