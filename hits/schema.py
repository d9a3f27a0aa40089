"""Bringing a database up to date with Alembic, for one half or both."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, make_url

from hits.db import make_engine
from hits.settings import Settings

MIGRATIONS = Path(__file__).parent / "migrations"
SIDES = ("market", "requester")


def alembic_config(side: str, url: str) -> Config:
    """An Alembic config for ``side`` ("market" or "requester") at ``url``."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", os.pathsep.join(str(MIGRATIONS / "versions" / s) for s in SIDES))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["side"] = side
    cfg.attributes["url"] = url
    return cfg


@dataclass(frozen=True)
class SideUpgrade:
    """What ``upgrade`` did to one half's database."""

    side: str
    url: str
    created: bool
    applied: tuple[str, ...]
    heads: tuple[str, ...]

    def describe(self) -> str:
        """One line for people: created or not, which migrations ran, where it stands."""
        where = f"{self.side} database {self.url}"
        now = ", ".join(self.heads) or "no revision"
        if not self.applied:
            return f"{where}: already up to date ({now})"
        created = "created; " if self.created else ""
        return f"{where}: {created}applied {len(self.applied)} migration(s), now at {now}"


def _sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def current_heads(side: str, url: str) -> tuple[str, ...]:
    """The revisions ``side``'s version table records (none for a new database)."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            version_table = f"alembic_version_{side}"
            context = MigrationContext.configure(connection, opts={"version_table": version_table})
            return tuple(sorted(context.get_current_heads()))
    finally:
        engine.dispose()


def _ancestry(script: ScriptDirectory, heads: tuple[str, ...]) -> set[str]:
    """Every revision at or below ``heads``: the migrations a database at ``heads`` has had."""
    seen: set[str] = set()
    todo = list(heads)
    while todo:
        revision = script.get_revision(todo.pop())
        if revision is None or revision.revision in seen:
            continue
        seen.add(revision.revision)
        down = revision.down_revision
        todo.extend((down,) if isinstance(down, str) else (down or ()))
    return seen


def upgrade_side(side: str, url: str) -> SideUpgrade:
    """Apply every migration of ``side`` to the database at ``url`` and say what changed."""
    file = _sqlite_file(url)
    created = file is not None and not file.exists()
    config = alembic_config(side, url)
    script = ScriptDirectory.from_config(config)
    before = () if created else current_heads(side, url)
    command.upgrade(config, f"{side}@heads")
    after = current_heads(side, url)
    done_before = _ancestry(script, before)
    applied = [r for r in _ancestry(script, after) if r not in done_before]
    return SideUpgrade(
        side=side,
        url=make_url(url).render_as_string(hide_password=True),
        created=created,
        applied=tuple(sorted(applied)),
        heads=after,
    )


def upgrade(settings: Settings) -> list[SideUpgrade]:
    """Apply every migration of both halves (each may live in its own database)."""
    return [
        upgrade_side("market", settings.market_database_url),
        upgrade_side("requester", settings.database_url),
    ]


@cache
def head_revisions(side: str) -> frozenset[str]:
    """The revisions ``side``'s database is at once every migration this code has is applied."""
    script = ScriptDirectory.from_config(alembic_config(side, "sqlite://"))
    return frozenset(revision.revision for revision in script.get_revisions(f"{side}@heads") if revision)


def missing_migrations(connection: Connection, side: str) -> frozenset[str]:
    """The heads of ``side`` the database on ``connection`` has not reached (empty: up to date)."""
    context = MigrationContext.configure(connection, opts={"version_table": f"alembic_version_{side}"})
    current = set(context.get_current_heads())
    return frozenset(head for head in head_revisions(side) if head not in current)
