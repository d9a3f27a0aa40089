"""``hitforge db upgrade`` says what it did: created, migrated, or already up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from alembic import command
from alembic.script import ScriptDirectory

from hits.schema import alembic_config

REPO = Path(__file__).resolve().parent.parent


def db_upgrade(folder: Path) -> str:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "db", "upgrade"],
        cwd=folder,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "300"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_an_empty_folder_is_reported_created_then_up_to_date(tmp_path: Path) -> None:
    market = tmp_path / "var" / "market.sqlite"
    script = ScriptDirectory.from_config(alembic_config("market", f"sqlite:///{market}"))
    [head] = script.get_revisions("market@head")
    assert head is not None
    market_count = len(list(script.iterate_revisions(head.revision, "base")))
    first = db_upgrade(tmp_path)
    assert market.exists() and (tmp_path / "var" / "requester.sqlite").exists()
    assert (
        f"market database sqlite:///{market}: created; "
        f"applied {market_count} migration(s), now at {head.revision}"
    ) in first
    assert "requester database" in first and "created; applied" in first
    assert "up to date" not in first

    second = db_upgrade(tmp_path)
    assert second.count("already up to date") == 2 and "created" not in second

    # One migration behind: exactly that one is applied.
    command.downgrade(alembic_config("market", f"sqlite:///{market}"), "market@-1")
    third = db_upgrade(tmp_path)
    assert f"applied 1 migration(s), now at {head.revision}" in third
    assert "created" not in third
