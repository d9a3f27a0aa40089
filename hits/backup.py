"""Backing up both halves' databases while hitforge runs, and restoring them into fresh ones.

A backup is a folder: one file per database and a ``manifest.json`` saying
what was taken, when, and at which migrations. SQLite files are copied with
SQLite's online backup (a consistent snapshot, writers go on); PostgreSQL
databases with ``pg_dump --format=custom`` (one MVCC snapshot).

**The requester side is backed up first.** The two databases cannot be
snapshotted at one instant, so the marketplace's copy is the later one: every
decision the requester's copy records as applied is in the marketplace's copy
too, and the requester's outbox entries still pending in its copy are sent
again after a restore, which the marketplace answers idempotently (an
assignment already approved stays approved and is paid once: one ledger leg
per transaction and account; a bonus's UniqueRequestToken pays once). The
other order would leave decisions the requester believes applied that the
restored marketplace never received.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from hits.db import make_engine
from hits.schema import current_heads
from hits.settings import Settings

MANIFEST = "manifest.json"


class BackupError(RuntimeError):
    """A backup or restore that cannot be done, said for the person running it."""


@dataclass(frozen=True)
class SavedDatabase:
    """One database in a backup: which half (or "both"), its file, its kind and migrations."""

    side: str
    file: str
    kind: str
    revisions: tuple[str, ...]


def _kind(url: str) -> str:
    backend = make_url(url).get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise BackupError(f"cannot back up a {backend} database")
    return backend


def _pg_url(url: str) -> str:
    """``url`` as libpq takes it (no SQLAlchemy driver suffix), for pg_dump and pg_restore."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _sqlite_path(url: str) -> Path:
    database = make_url(url).database
    if not database or database == ":memory:":
        raise BackupError("an in-memory SQLite database cannot be backed up")
    return Path(database)


def _run(argv: list[str]) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)  # noqa: S603
    except FileNotFoundError as exc:
        raise BackupError(f"{argv[0]} is not installed (PostgreSQL's client tools are needed)") from exc
    if done.returncode != 0:
        # libpq's messages name the database, never the password.
        raise BackupError(f"{argv[0]} failed: {done.stderr.strip()[-2000:]}")


def database_sides(settings: Settings) -> list[tuple[str, str]]:
    """(side, url) in backup order: the requester side first (see the module's docstring)."""
    if settings.requester_database_url_is_market:
        return [("both", settings.database_url)]
    return [("requester", settings.database_url), ("market", settings.market_database_url)]


def back_up_side(side: str, url: str, folder: Path) -> SavedDatabase:
    """Save the database at ``url`` into ``folder`` as it is now, while it runs."""
    kind = _kind(url)
    revisions = tuple(
        revision
        for half in (("market", "requester") if side == "both" else (side,))
        for revision in current_heads(half, url)
    )
    if kind == "sqlite":
        target = folder / f"{side}.sqlite"
        source = sqlite3.connect(_sqlite_path(url))
        copy = sqlite3.connect(target)
        try:
            with copy:
                source.backup(copy)
        finally:
            copy.close()
            source.close()
    else:
        target = folder / f"{side}.dump"
        _run(["pg_dump", "--format=custom", "--no-owner", f"--file={target}", _pg_url(url)])
    return SavedDatabase(side=side, file=target.name, kind=kind, revisions=revisions)


def back_up(settings: Settings, folder: Path) -> list[SavedDatabase]:
    """Back up every database of ``settings`` into ``folder`` (made; must be empty), requester first."""
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        raise BackupError(f"{folder} is not empty: a backup goes into a folder of its own")
    saved = [back_up_side(side, url, folder) for side, url in database_sides(settings)]
    write_manifest(folder, saved)
    return saved


def write_manifest(folder: Path, saved: list[SavedDatabase]) -> None:
    """Say what ``folder`` holds (read by ``restore``): written last, so a backup cut short has none."""
    manifest = {
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "databases": [saved_database.__dict__ for saved_database in saved],
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _is_empty(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return not inspect(connection).get_table_names()
    finally:
        engine.dispose()


def restore(settings: Settings, folder: Path) -> list[SavedDatabase]:
    """Restore the backup in ``folder`` into the (empty) databases ``settings`` names."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise BackupError(f"{folder} holds no {MANIFEST}: not a hitforge backup") from exc
    saved = [
        SavedDatabase(**{**entry, "revisions": tuple(entry["revisions"])}) for entry in manifest["databases"]
    ]
    targets = dict(database_sides(settings))
    if sorted(targets) != sorted(database.side for database in saved):
        raise BackupError(
            f"the backup holds {', '.join(d.side for d in saved)} and the settings name "
            f"{', '.join(targets)}: restore into the same layout of databases"
        )
    for database in saved:
        url = targets[database.side]
        if _kind(url) != database.kind:
            raise BackupError(f"the {database.side} backup is {database.kind}; {url!r} is not")
        target_exists = database.kind == "postgresql" or _sqlite_path(url).exists()
        if target_exists and not _is_empty(url):
            raise BackupError(
                f"the {database.side} database already has tables: restore into a new, empty database"
            )
    for database in saved:
        url = targets[database.side]
        if database.kind == "sqlite":
            path = _sqlite_path(url)
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / database.file, path)
        else:
            dump = str(folder / database.file)
            _run(["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={_pg_url(url)}", dump])
    return saved
