"""A pooled PostgreSQL connection the server dropped is replaced at checkout, with no ping per checkout."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import Engine, text

from hits.db import make_engine
from hits.settings import Settings


@pytest.fixture
def postgres_engine(settings: Settings):  # type: ignore[no-untyped-def]
    if settings.market_database_url.startswith("sqlite"):
        pytest.skip("PostgreSQL only: a SQLite connection has no server to lose")
    engine = make_engine(settings.market_database_url, pool_size=1, max_overflow=0)
    yield engine
    engine.dispose()


def _backend_pid(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("select pg_backend_pid()")).scalar_one())


def _count_pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    real = engine.dialect.do_ping

    def counted(dbapi_conn: object) -> bool:
        pings.append(1)
        return real(dbapi_conn)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return pings


def test_a_healthy_connection_is_reused_without_a_ping(postgres_engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pid = _backend_pid(postgres_engine)
    pings = _count_pings(postgres_engine, monkeypatch)
    for _ in range(5):
        assert _backend_pid(postgres_engine) == pid
    assert pings == []


def test_a_connection_the_server_dropped_is_replaced(postgres_engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    pid = _backend_pid(postgres_engine)  # now idle in the pool
    killer = make_engine(postgres_engine.url.render_as_string(hide_password=False))
    alive = text("select count(*) from pg_stat_activity where pid = :pid")
    try:
        with killer.connect() as conn:
            assert conn.execute(text("select pg_terminate_backend(:pid)"), {"pid": pid}).scalar_one()
            deadline = time.monotonic() + 10
            while True:
                gone = not conn.execute(alive, {"pid": pid}).scalar_one()
                conn.commit()  # pg_stat_activity is read once a transaction
                if gone:
                    break
                assert time.monotonic() < deadline, "the backend did not go away"
                time.sleep(0.05)
    finally:
        killer.dispose()
    pings = _count_pings(postgres_engine, monkeypatch)
    # The request that gets the dropped connection works: it is replaced before use.
    assert _backend_pid(postgres_engine) != pid
    assert pings == [1]
