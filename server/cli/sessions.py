"""The one place the CLI opens database sessions: a command asks for a half, not an engine.

A command owns its transactions (``session_scope`` around what it does, or a
process given the factory). The settings are read at each call, as each
command reads the environment it runs in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from hits.settings import Settings

#: The two databases: the requester side's (campaigns, QA, workflows) and the marketplace's.
Half = Literal["requester", "market"]


def open_sessions(half: Half = "requester", settings: Settings | None = None) -> sessionmaker[Session]:
    """A session factory on ``half``'s database (settings from the environment unless given)."""
    # Imported here: every command module imports this one, and ``--help`` needs no database.
    from hits.db import make_engine, make_session_factory
    from hits.settings import load_settings

    settings = settings or load_settings()
    url = settings.market_database_url if half == "market" else settings.database_url
    return make_session_factory(make_engine(url))
