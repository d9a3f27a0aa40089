"""Engines, sessions and schema for both halves of hitforge.

No engine exists at import time: factories build them from settings. SQLite
(the embedded default) is tuned so that the server, the Celery worker and the
simulated crowd can share one file: WAL, a generous busy timeout, and
``BEGIN IMMEDIATE`` so that writers queue instead of failing on lock upgrade.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Engine, create_engine, event
from sqlalchemy.orm import DeclarativeBase, Session, SessionTransaction, sessionmaker
from sqlalchemy.pool import NullPool
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored naive-UTC and always returned timezone-aware.

    SQLite forgets time zones; normalising here keeps comparisons and the
    wire format identical on SQLite and PostgreSQL.
    """

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


class MarketBase(DeclarativeBase):
    """Declarative base of the marketplace's tables (prefix ``market_``)."""


class RequesterBase(DeclarativeBase):
    """Declarative base of the requester side's tables (prefix ``rq_``)."""


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``, with SQLite tuned for several processes."""
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"timeout": 60, "check_same_thread": False},
            poolclass=NullPool,
            **kwargs,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Let SQLAlchemy, not pysqlite, decide when transactions begin.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(url, pool_pre_ping=True, **kwargs)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory bound to ``engine``; objects stay usable after commit."""
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


@contextmanager
def session_scope(factory: Callable[[], Session]) -> Iterator[Session]:
    """One unit of work: commit on success, roll back on error, always close."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def call_after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the session's current transaction commits.

    This is how Celery tasks are sent: never before the rows they name exist
    for other processes. On rollback the callback is dropped; a savepoint
    (``begin_nested``) released does not run it, and one rolled back drops
    only the callbacks registered inside it.
    """
    callbacks: list[tuple[Callable[[], None], SessionTransaction | None]] = session.info.setdefault(
        "after_commit", []
    )
    callbacks.append((callback, session.get_nested_transaction()))
    if not session.info.get("_after_commit_hooked"):
        session.info["_after_commit_hooked"] = True

        @event.listens_for(session, "after_commit")
        def _run(sess: Session) -> None:
            # SQLAlchemy fires after_commit for a released savepoint too: the transaction goes on.
            if sess.in_nested_transaction():
                return
            pending = sess.info.pop("after_commit", [])
            for fn, _ in pending:
                fn()

        @event.listens_for(session, "after_soft_rollback")
        def _drop(sess: Session, previous: SessionTransaction) -> None:
            if not previous.nested:
                sess.info.pop("after_commit", None)
                return
            sess.info["after_commit"] = [
                (fn, tx) for fn, tx in sess.info.get("after_commit", []) if not _inside(tx, previous)
            ]


def _inside(transaction: SessionTransaction | None, savepoint: SessionTransaction) -> bool:
    while transaction is not None:
        if transaction is savepoint:
            return True
        transaction = transaction.parent
    return False
