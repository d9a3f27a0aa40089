"""Engines: pooled connections that never cross a fork, and read-only units of work."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, text

from hits.db import NestedWriteTransaction, WriteInReadOnlyUnit, make_engine, read_only_engine
from hits.settings import Settings


def test_a_read_only_unit_cannot_write(settings: Settings) -> None:
    engine = read_only_engine(make_engine(settings.market_database_url))
    try:
        with engine.connect() as conn:
            assert conn.execute(text("select count(*) from market_requesters")).scalar() is not None
            with pytest.raises(WriteInReadOnlyUnit):
                conn.execute(text("update market_requesters set name = name"))
    finally:
        engine.dispose()


def test_a_reader_does_not_wait_for_a_writer(settings: Settings) -> None:
    engine = make_engine(settings.market_database_url)
    try:
        with engine.connect() as writer:
            writer.begin()
            # On SQLite this holds the database's write lock until the end of the block.
            writer.execute(text("update market_requesters set name = name"))
            counted: list[int] = []

            def read() -> None:
                with read_only_engine(engine).connect() as reader:
                    counted.append(reader.scalar(text("select count(*) from market_requesters")))

            thread = threading.Thread(target=read)
            thread.start()
            thread.join(timeout=10)  # a reader queued for the lock would wait the 60 s busy timeout
            assert not thread.is_alive(), "the reader waited for the writer"
            assert len(counted) == 1
            writer.rollback()
    finally:
        engine.dispose()


def test_eight_threads_at_once_keep_their_connections_pooled(settings: Settings) -> None:
    """A gunicorn worker's 8 threads must not open and close a connection a request."""
    engine = make_engine(settings.market_database_url)
    reading = read_only_engine(engine)  # shares the pool; readers need no turn at SQLite's write lock
    opened: list[object] = []
    failed: list[BaseException] = []
    event.listen(engine, "connect", lambda dbapi_conn, _record: opened.append(dbapi_conn))
    all_in = threading.Barrier(8)

    def use() -> None:
        try:
            with reading.connect() as conn:
                conn.execute(text("select 1"))
                all_in.wait(timeout=30)  # all eight hold a connection at the same time
        except BaseException as exc:
            failed.append(exc)

    try:
        for _ in range(3):
            threads = [threading.Thread(target=use) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
        assert not failed
        assert len(opened) == 8  # the first round opened them; the next two reused them
        assert engine.pool.checkedin() == 8  # type: ignore[attr-defined]
    finally:
        engine.dispose()


def test_a_pooled_connection_is_reused_but_never_across_a_fork(settings: Settings) -> None:
    engine = make_engine(settings.market_database_url)
    try:
        with engine.connect() as conn:
            parent_connection = conn.connection.dbapi_connection
        with engine.connect() as conn:
            assert conn.connection.dbapi_connection is parent_connection  # pooled, not reopened
        pid = os.fork()
        if pid == 0:  # the child: opens its own connection
            status = 1
            try:
                with engine.connect() as conn:
                    conn.execute(text("select 1")).scalar_one()
                    status = 0 if conn.connection.dbapi_connection is not parent_connection else 2
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        with engine.connect() as conn:
            assert conn.execute(text("select 1")).scalar_one() == 1
            # Idle connections were closed before the fork, so no child could inherit one.
            assert conn.connection.dbapi_connection is not parent_connection
    finally:
        engine.dispose()


def _sqlite_engine(tmp_path: Path) -> Engine:
    engine = make_engine(f"sqlite:///{tmp_path / 'queue.db'}")
    with engine.begin() as conn:
        conn.execute(text("create table counter (n integer not null)"))
        conn.execute(text("insert into counter values (0)"))
    return engine


def test_sqlite_writers_of_one_process_take_turns(tmp_path: Path) -> None:
    engine = _sqlite_engine(tmp_path)
    errors: list[BaseException] = []

    def add_many() -> None:
        try:
            for _ in range(25):
                with engine.begin() as conn:
                    n = conn.execute(text("select n from counter")).scalar_one()
                    conn.execute(text("update counter set n = :n"), {"n": n + 1})
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=add_many) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with engine.connect() as conn:  # read-modify-write in each: no increment was lost
        assert conn.execute(text("select n from counter")).scalar_one() == 8 * 25
    engine.dispose()


@pytest.mark.parametrize("ending", ["closed", "invalidated"])
def test_a_writer_that_never_commits_still_lets_the_next_one_in(tmp_path: Path, ending: str) -> None:
    engine = _sqlite_engine(tmp_path)
    conn = engine.connect()
    conn.begin()
    conn.execute(text("update counter set n = 1"))
    if ending == "closed":
        conn.close()
    else:
        conn.invalidate()
    done = threading.Event()

    def write() -> None:
        with engine.begin() as other:
            other.execute(text("update counter set n = 2"))
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert done.wait(timeout=10), "the next writer is still queued behind a finished one"
    engine.dispose()


def test_a_write_begun_inside_another_on_the_same_thread_fails_at_once(tmp_path: Path) -> None:
    engine = _sqlite_engine(tmp_path)
    with engine.begin() as outer:
        outer.execute(text("update counter set n = 1"))
        # It would wait for ``outer`` forever (before: a TimeoutError after 60 s).
        with pytest.raises(NestedWriteTransaction), engine.begin() as inner:
            inner.execute(text("update counter set n = 2"))
    # The outer write committed, and the queue is free again for this thread and others.
    with engine.begin() as conn:
        assert conn.execute(text("select n from counter")).scalar_one() == 1
    result: list[int] = []

    def read_after_write() -> None:
        with engine.begin() as conn:
            conn.execute(text("update counter set n = 3"))
            result.append(conn.execute(text("select n from counter")).scalar_one())

    worker = threading.Thread(target=read_after_write)
    worker.start()
    worker.join(10)
    assert result == [3]
    engine.dispose()


def test_sqlite_writers_of_two_processes_take_turns(tmp_path: Path) -> None:
    engine = _sqlite_engine(tmp_path)

    def add_many(rounds: int) -> None:
        for _ in range(rounds):
            with engine.begin() as conn:
                n = conn.execute(text("select n from counter")).scalar_one()
                conn.execute(text("update counter set n = :n"), {"n": n + 1})

    pid = os.fork()
    if pid == 0:  # the child writes through the same engine, as a forked server worker would
        status = 1
        try:
            add_many(100)
            status = 0
        finally:
            os._exit(status)
    threads = [threading.Thread(target=add_many, args=(50,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with engine.connect() as conn:
        assert conn.execute(text("select n from counter")).scalar_one() == 200
    assert (tmp_path / "queue.db-writers.lock").exists()  # the processes met on the file lock
    engine.dispose()
