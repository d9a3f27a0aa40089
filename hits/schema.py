"""Bringing a database up to date with Alembic, for one half or both."""

from __future__ import annotations

import os
from pathlib import Path

from alembic import command
from alembic.config import Config

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


def upgrade(settings: Settings) -> None:
    """Apply every migration of both halves (each may live in its own database)."""
    command.upgrade(alembic_config("market", settings.market_database_url), "market@heads")
    command.upgrade(alembic_config("requester", settings.database_url), "requester@heads")
