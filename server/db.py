"""Per-request database sessions: the request is the unit of work.

A view asks for ``market_session()`` or ``requester_session()``; the session
commits after the view returns a non-error response (before the response is
sent, so a failed commit becomes a 500, never a false success) and rolls back
otherwise. A view that only reads says so with ``read_only_request()`` before
its first query: its sessions (marketplace and requester side) then take no
write lock. Such a view that must still write a little (a HIT page's first
opening records its gold) does it in a short unit of work of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, Response, current_app, g
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from hits.db import make_engine, make_session_factory, read_only_engine
from hits.settings import Settings
from hits.wire.destinations import allow_private_destinations

_NAMES = ("market_session", "requester_session")


@dataclass
class Runtime:
    """What the app factory builds once and every request shares."""

    settings: Settings
    market_engine: Engine
    #: Where an API call looks up who signed it, if not in its own unit of work (see build_runtime).
    caller_lookups: Engine | None
    requester_engine: Engine
    market_sessions: sessionmaker[Session]
    market_read_sessions: sessionmaker[Session]
    requester_sessions: sessionmaker[Session]
    requester_read_sessions: sessionmaker[Session]


def build_runtime(settings: Settings) -> Runtime:
    market_engine = make_engine(settings.market_database_url)
    if settings.notification_allow_private:
        allow_private_destinations(market_engine)  # events delivered after this app's commits
    requester_engine = (
        market_engine if settings.requester_database_url_is_market else make_engine(settings.database_url)
    )
    market_reads = read_only_engine(market_engine)
    same_database = requester_engine is market_engine
    requester_reads = market_reads if same_database else read_only_engine(requester_engine)
    return Runtime(
        settings=settings,
        market_engine=market_engine,
        # SQLite's writers take turns: looked up inside a call's unit of work,
        # the write lock would be held through the signature check and the
        # request's parsing too. PostgreSQL has no such lock, and a separate
        # lookup would cost a second connection checkout a call.
        caller_lookups=market_reads if market_engine.dialect.name == "sqlite" else None,
        requester_engine=requester_engine,
        market_sessions=make_session_factory(market_engine),
        market_read_sessions=make_session_factory(market_reads),
        requester_sessions=make_session_factory(requester_engine),
        requester_read_sessions=make_session_factory(requester_reads),
    )


def runtime() -> Runtime:
    rt: Runtime = current_app.extensions["hitforge"]
    return rt


def read_only_request() -> None:
    """Declare that this request only reads (call before its first query): neither session writes."""
    if "market_session" in g or "requester_session" in g:
        raise RuntimeError("read_only_request() after a session was opened")
    g.market_read_only = True


def is_read_only_request() -> bool:
    """Whether this request declared that it only reads (``read_only_request``)."""
    return bool(g.get("market_read_only"))


def market_session() -> Session:
    """The marketplace session of the current request."""
    if "market_session" not in g:
        rt = runtime()
        g.market_session = rt.market_read_sessions() if g.get("market_read_only") else rt.market_sessions()
    session: Session = g.market_session
    return session


def requester_session() -> Session:
    """The requester side's session of the current request."""
    if "requester_session" not in g:
        rt = runtime()
        read_only = g.get("market_read_only")
        g.requester_session = rt.requester_read_sessions() if read_only else rt.requester_sessions()
    session: Session = g.requester_session
    return session


def _commit(response: Response) -> Response:
    for name in _NAMES:
        session: Session | None = g.get(name)
        if session is None:
            continue
        if response.status_code < 400 and not g.get("rollback_only"):
            session.commit()
        else:
            session.rollback()
    return response


def _close(_exc: BaseException | None) -> None:
    for name in _NAMES:
        session: Session | None = g.pop(name, None)
        if session is not None:
            session.rollback()  # a no-op after commit; undoes an unhandled error's work
            session.close()


def init_app(app: Flask, settings: Settings) -> None:
    app.extensions["hitforge"] = build_runtime(settings)
    app.after_request(_commit)
    app.teardown_request(_close)
