"""``make demo`` on a fresh machine says what it is doing while pip installs (it was silent for minutes)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_MAKE_ENV = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR"}


def test_every_install_step_is_announced_and_pip_shows_its_progress(tmp_path: Path) -> None:
    # A copy without .venv: what `make demo` runs on a fresh clone (-n prints, runs nothing).
    shutil.copy2(REPO / "Makefile", tmp_path / "Makefile")
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    result = subprocess.run(  # noqa: S603
        ["make", "-n", "demo"],  # noqa: S607 - make from PATH, as a user runs it
        cwd=tmp_path,
        # Run as a user's shell would, not as a sub-make of `make test`: an inherited
        # MAKELEVEL/MAKEFLAGS makes make print "Entering/Leaving directory" lines.
        env={k: v for k, v in os.environ.items() if k not in _MAKE_ENV},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    installs = [n for n, line in enumerate(lines) if "pip install" in line and "-e" in line]
    assert len(installs) == 1
    install = lines[installs[0]]
    # pip prints a line per package (and its download bar on a terminal) unless told to be quiet.
    assert "--quiet" not in install and " -q" not in install
    announced = [line for line in lines[: installs[0]] if line.startswith("echo")]
    assert any("installing hitforge and its dependencies" in line for line in announced)
    assert any("creating the virtual environment" in line for line in announced)
    assert lines[-1].endswith("hitforge demo")  # still one command after the install
