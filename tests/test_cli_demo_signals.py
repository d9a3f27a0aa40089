"""``hitforge demo`` keeps to ``demo/`` under HITFORGE_VAR_DIR, and SIGTERM stops everything it started."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.celery


def demo_env(var_dir: Path) -> dict[str, str]:
    # Unbuffered: the test reads the demo's lines as it prints them.
    return {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "COLUMNS": "200",
        "PYTHONUNBUFFERED": "1",
        "HITFORGE_VAR_DIR": str(var_dir),
    }


def processes_of(var_dir: Path, group: int) -> list[int]:
    """Live processes in process group ``group``, or whose environment names ``var_dir`` (/proc)."""
    marker = f"HITFORGE_VAR_DIR={var_dir}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat.rpartition(")")[2].split()
            state, pgrp = fields[0], int(fields[2])
            if state == "Z":  # a zombie runs nothing; its parent has not reaped it yet
                continue
            environ = (entry / "environ").read_bytes()
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
        if pgrp == group or marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def test_sigterm_stops_the_worker_and_nothing_lands_in_the_cwd(tmp_path: Path) -> None:
    cwd, var_dir = tmp_path / "cwd", tmp_path / "var"
    cwd.mkdir()
    demo = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo", "--keep-serving", "--hits", "1"],
        cwd=cwd,
        env=demo_env(var_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    lines: list[str] = []
    try:
        for line in demo.stdout:
            lines.append(line)
            if "Celery worker pid" in line or "Traceback" in line:
                break
        started = re.search(r"Celery worker pid (\d+)", lines[-1] if lines else "")
        assert started, "".join(lines)
        worker = int(started.group(1))
        # The worker's own group holds it (and, once forked, its pool and beat).
        assert worker in processes_of(var_dir / "demo", worker)
        demo.send_signal(signal.SIGTERM)
        rest, _ = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert "Traceback" not in "".join(lines) + rest
    deadline = time.monotonic() + 5
    while processes_of(var_dir / "demo", worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = processes_of(var_dir / "demo", worker)
    for pid in left:  # not left behind for the next test, whatever this one says
        os.kill(pid, signal.SIGKILL)
    assert left == [], "processes the demo left running"
    assert list(cwd.iterdir()) == []
    assert (var_dir / "demo" / "market.sqlite").exists() and (var_dir / "demo" / ".hitforge-demo").exists()


def test_a_demo_folder_the_demo_did_not_make_is_kept(tmp_path: Path) -> None:
    var_dir = tmp_path / "var"
    mine = var_dir / "demo" / "notes.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("not the demo's\n")
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo"],
        cwd=tmp_path,
        env=demo_env(var_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "was not made by hitforge demo" in " ".join(result.stdout.split())
    assert mine.read_text() == "not the demo's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["var"]
