"""Engines, sessions and schema for both halves of hitforge.

No engine exists at import time: factories build them from settings. SQLite
(the embedded default) is tuned so that the server, the Celery worker and the
simulated crowd can share one file: WAL, a generous busy timeout, and
``BEGIN IMMEDIATE`` so that writers queue instead of failing on lock upgrade.
Units of work that only read (see :func:`read_only_engine`) begin without
taking the write lock, so they never queue behind writers.

Connections are pooled (opening a SQLite file and setting its pragmas costs
about a millisecond a request); a connection never crosses a ``fork``, and a
PostgreSQL connection that its server dropped is replaced at checkout.
"""

from __future__ import annotations

import fcntl
import os
import select
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import DateTime, Engine, create_engine, event, exc
from sqlalchemy import select as select_rows
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import (
    DeclarativeBase,
    Session,
    SessionTransaction,
    make_transient_to_detached,
    sessionmaker,
)
from sqlalchemy.orm.util import identity_key
from sqlalchemy.types import TypeDecorator

_Model = TypeVar("_Model")


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


SQLITE_BUSY_TIMEOUT_SECONDS = 60
#: Execution option marking a unit of work that only reads.
READ_ONLY = "hitforge_read_only"
_READING = ("SELECT", "PRAGMA", "BEGIN", "SAVEPOINT", "RELEASE", "ROLLBACK")


class WriteInReadOnlyUnit(RuntimeError):
    """A statement that writes, sent from a unit of work declared read-only (a bug)."""


#: Connections a process keeps open for reuse. At least as many as the threads
#: that use them at once (a gunicorn worker's threads, a Celery worker's calls
#: in flight): SQLAlchemy's default of 5 closes every connection beyond that on
#: its return, so 8 threads would open and close a connection a request.
POOL_SIZE = 10


def make_engine(url: str, **kwargs: Any) -> Engine:
    """An engine for ``url``, with SQLite tuned for several processes."""
    kwargs.setdefault("pool_size", POOL_SIZE)
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False}, **kwargs
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            # Let SQLAlchemy, not pysqlite, decide when transactions begin.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_SECONDS * 1000}")
            cur.close()

        _queue_sqlite_writers(engine)
    else:
        engine = create_engine(url, **kwargs)
    _never_across_fork(engine)
    if not url.startswith("sqlite"):
        _ping_when_in_doubt(engine)
    return engine


def _server_may_have_left(dbapi_conn: Any) -> bool:
    """Whether a pooled, idle connection's socket has something to read (or cannot be asked).

    An idle connection has nothing to read unless its server spoke first, and a
    server that drops a connection (restart, ``pg_terminate_backend``, an idle
    timeout) says so or closes the socket, either of which makes it readable.
    """
    try:
        fd = dbapi_conn.fileno()
    except Exception:  # closed already, or a driver that does not tell
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


def _ping_when_in_doubt(engine: Engine) -> None:
    """A pre-ping at checkout, sent only when the connection's socket says the server may have left.

    ``pool_pre_ping`` costs a round trip to the server on every checkout, that
    is on every request; asking the socket costs a system call. A connection
    found dead is replaced before the request uses it, as with ``pool_pre_ping``.
    """
    dialect = engine.dialect

    @event.listens_for(engine, "checkout")
    def _ping(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_conn is None or not _server_may_have_left(dbapi_conn):
            return
        try:
            alive = dialect.do_ping(dbapi_conn)
        except Exception as err:
            raise exc.DisconnectionError("the server closed the connection") from err
        if not alive:
            raise exc.DisconnectionError("the server closed the connection")


class NestedWriteTransaction(RuntimeError):
    """A thread began a second write transaction on a SQLite database while its first is open."""


class _WriterQueue:
    """SQLite writers to one database file, one at a time, queued on locks.

    SQLite lets one writer in and makes the others poll with growing sleeps
    (up to 100 ms each), so under concurrent writes a few unlucky ones wait
    for hundreds of milliseconds. Here threads of a process queue on a lock,
    and one thread per process on a ``flock`` of a file beside the database,
    both woken as soon as the writer before them ends.
    """

    def __init__(self, lock_path: str | None) -> None:
        self._lock_path = lock_path
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._owner_thread: int | None = None
        self._file: Any = None

    def enter(self, dbapi_conn: Any) -> None:
        if self._pid != os.getpid():  # forked while another thread held it: start afresh
            self._reset()
        if self._owner_thread == threading.get_ident():
            # Only this thread sets its own id here, and only while holding the lock:
            # the write it is starting would wait for the one it has not finished.
            raise NestedWriteTransaction(
                "this thread already has a write transaction open on this SQLite database; a second "
                "one would wait for it forever (a session_scope opened inside another?)"
            )
        if not self._lock.acquire(timeout=SQLITE_BUSY_TIMEOUT_SECONDS):
            raise exc.TimeoutError("waited too long for the database's write lock")
        try:
            if self._lock_path is not None:
                if self._file is None:
                    self._file = open(self._lock_path, "a+b")  # noqa: SIM115 - held for the process's life
                # Blocks until the other process's writer is done (a dead process's lock is freed).
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
        except BaseException:
            self._lock.release()
            raise
        self._owner = id(dbapi_conn)
        self._owner_thread = threading.get_ident()

    def leave(self, dbapi_conn: Any) -> None:
        if self._owner is not None and self._owner == id(dbapi_conn) and self._pid == os.getpid():
            self._owner = None
            self._owner_thread = None
            if self._file is not None:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._lock.release()


#: One queue per database file in this process, whichever engines open it.
_writer_queues: dict[str, _WriterQueue] = {}
_writer_queues_lock = threading.Lock()


def _writer_queue(database: str | None) -> _WriterQueue:
    if not database or database == ":memory:" or database.startswith("file:"):
        return _WriterQueue(None)
    path = os.path.abspath(database)
    with _writer_queues_lock:
        if path not in _writer_queues:
            _writer_queues[path] = _WriterQueue(path + "-writers.lock")
        return _writer_queues[path]


def _queue_sqlite_writers(engine: Engine) -> None:
    queue = _writer_queue(engine.url.database)

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        # Under WAL a reader sees a consistent snapshot without any lock;
        # only a unit that may write queues for the write lock up front.
        if conn.get_execution_options().get(READ_ONLY, False):
            conn.exec_driver_sql("BEGIN")
            return
        dbapi_conn = conn.connection.dbapi_connection
        queue.enter(dbapi_conn)
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            queue.leave(dbapi_conn)
            raise

    def _end(conn: Any) -> None:
        queue.leave(conn.connection.dbapi_connection)

    # Released when the transaction ends (the next writer's BEGIN IMMEDIATE
    # then waits at most for this COMMIT itself) and, whatever happened to
    # the transaction, when its connection goes back to the pool or is dropped.
    event.listen(engine, "commit", _end)
    event.listen(engine, "rollback", _end)
    for name in ("checkin", "invalidate", "close"):
        event.listen(engine.pool, name, lambda dbapi_conn, *_: queue.leave(dbapi_conn))


def read_only_engine(engine: Engine) -> Engine:
    """``engine`` for units of work that only read: no write lock, writes refused."""
    reading = engine.execution_options(**{READ_ONLY: True})
    # Listeners on this derived engine are its own: other units pay nothing for the check.
    _refuse_writes(reading)
    return reading


#: Engines whose idle connections are closed before this process forks.
_engines_closed_at_fork: weakref.WeakSet[Engine] = weakref.WeakSet()
_fork_hook_registered = False


def _close_idle_connections_before_fork() -> None:
    for engine in list(_engines_closed_at_fork):
        engine.dispose()


def _never_across_fork(engine: Engine) -> None:
    """Keep pooled connections out of forked processes.

    Celery's prefork pool (and gunicorn with ``--preload``) fork after an
    engine may have connections. A child must neither use a parent's
    connection nor close one: closing a SQLite file's descriptor in the child
    drops every POSIX lock the child holds on that file, through its own
    connections too, and writes from two processes then interleave (this lost
    work in the embedded review pipeline). So idle connections are closed in
    the parent just before a fork, and one still checked out by another
    thread at that moment is refused in the child and kept referenced there,
    never closed.
    """
    global _fork_hook_registered
    _engines_closed_at_fork.add(engine)
    if not _fork_hook_registered:
        os.register_at_fork(before=_close_idle_connections_before_fork)
        _fork_hook_registered = True

    @event.listens_for(engine, "connect")
    def _remember_pid(_dbapi_conn: Any, record: Any) -> None:
        record.info["pid"] = os.getpid()

    @event.listens_for(engine, "checkout")
    def _check_pid(_dbapi_conn: Any, record: Any, proxy: Any) -> None:
        if record.info.get("pid") != os.getpid():
            _inherited_connections.append(record.dbapi_connection)
            record.dbapi_connection = proxy.dbapi_connection = None
            raise exc.DisconnectionError("connection opened in another process")


#: Connections inherited through a fork: referenced so that they are never closed here.
_inherited_connections: list[Any] = []


def _refuse_writes(engine: Engine) -> None:
    @event.listens_for(engine, "before_cursor_execute")
    def _check(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if not statement.lstrip()[:9].upper().startswith(_READING):  # "SAVEPOINT" is the longest
            raise WriteInReadOnlyUnit(f"a read-only unit of work tried to write: {statement[:80]!r}")


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


def insert_missing(session: Session, model: type[Any], rows: list[dict[str, Any]]) -> None:
    """INSERT ``rows`` of ``model`` in one statement, skipping any whose key exists already.

    For rows several transactions may create at once (a worker's record, a
    pair's): the one that loses the race waits for the winner and skips its
    row, as a savepoint per row caught the IntegrityError, at one statement
    instead of a savepoint, an INSERT and a flush of the session per row.
    """
    if not rows:
        return
    dialect = session.connection().dialect.name
    insert_for = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(insert_for(model).on_conflict_do_nothing(), rows)


def locked_by_id(session: Session, model: type[_Model], ids: Iterable[int]) -> dict[int, _Model]:
    """The rows of ``model`` with these ids, by id: locked in one statement, in id order, read fresh.

    For rows several processes lock at once (an outbox's entries): each locking them in the
    same order is what keeps two from holding one row each while waiting for the other's.
    """
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    key = model.id  # type: ignore[attr-defined]
    rows = session.scalars(
        select_rows(model)
        .where(key.in_(wanted))
        .order_by(key)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return {row.id: row for row in rows}  # type: ignore[attr-defined]


def as_loaded(session: Session, cls: type[_Model], values: Mapping[str, Any]) -> _Model:
    """The ``cls`` object for a row read or written through Core, in ``session`` as if the ORM had loaded it.

    For the hottest API paths, where building ORM statements and instances
    cost more than the statement itself. ``values`` must hold every column
    (one left out would be loaded by a query of its own when first read), and
    may hold related objects too. An object already in the session for that
    row is returned unchanged. Unlike an object the ORM inserted, it is not
    removed from the session if the transaction rolls back: only for units of
    work that end with theirs (an API call, a task).
    """
    existing = session.identity_map.get(identity_key(cls, values["id"]))
    if existing is not None:
        return existing  # type: ignore[no-any-return]
    obj = cls(**values)
    make_transient_to_detached(obj)  # marks every attribute set above as loaded, nothing pending
    session.add(obj)
    return obj


def call_after_commit(session: Session, callback: Callable[[], object]) -> None:
    """Run ``callback`` once the session's current transaction commits.

    This is how Celery tasks are sent: never before the rows they name exist
    for other processes. On rollback the callback is dropped; a savepoint
    (``begin_nested``) released does not run it, and one rolled back drops
    only the callbacks registered inside it.
    """
    callbacks: list[tuple[Callable[[], object], SessionTransaction | None]] = session.info.setdefault(
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
