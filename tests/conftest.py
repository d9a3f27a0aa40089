"""Shared fixtures: real databases, a real running server, the real boto3 client.

``HITFORGE_TEST_BACKEND=postgres`` runs everything against the PostgreSQL and
Redis that ``scripts/test-services.sh`` starts; the default is the embedded
SQLite + SQLAlchemy-broker setup.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import boto3
import psycopg
import pytest
from botocore.config import Config
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from demo.runner import RunningServer, serve_in_thread
from hits.db import make_engine, make_session_factory, session_scope
from hits.market.accounts import IssuedKey, create_requester
from hits.requester.mturk import Marketplace
from hits.schema import upgrade
from hits.settings import Settings, load_settings
from server import create_app

BACKEND = os.environ.get("HITFORGE_TEST_BACKEND", "embedded")


def _postgres_database() -> str:
    """A fresh database for this test session on the test PostgreSQL."""
    base = os.environ.get("HITFORGE_TEST_POSTGRES_URL")
    if not base:
        pytest.exit(
            "HITFORGE_TEST_BACKEND=postgres needs HITFORGE_TEST_POSTGRES_URL (scripts/test-services.sh)"
        )
    url = make_url(base)
    name = f"hitforge_t_{uuid.uuid4().hex[:10]}"
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def server_socket() -> Iterator[socket.socket]:
    """The live server's listening socket, bound before the settings name its port.

    A port looked up free and bound only when the first test needs the server
    could be taken meanwhile (any outgoing connection may get it), and then
    every test that uses the server would error.
    """
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock


@pytest.fixture(scope="session")
def settings(tmp_path_factory: pytest.TempPathFactory, server_socket: socket.socket) -> Settings:
    var_dir = tmp_path_factory.mktemp("var")
    port = int(server_socket.getsockname()[1])
    env = {
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "HITFORGE_SECRET_KEY": secrets.token_urlsafe(32),
        "HITFORGE_SYNC_INTERVAL": "0.5",
    }
    if BACKEND == "postgres":
        env["HITFORGE_DATABASE_URL"] = _postgres_database()
        env["HITFORGE_BROKER_URL"] = os.environ["HITFORGE_TEST_REDIS_URL"]
    settings = load_settings(env)
    upgrade(settings)
    return settings


@pytest.fixture(scope="session")
def live_server(settings: Settings, server_socket: socket.socket) -> Iterator[RunningServer]:
    app = create_app(settings=settings)
    running = serve_in_thread(app, fd=server_socket.fileno())
    yield running
    running.stop()


@pytest.fixture(scope="session")
def market_sessions(settings: Settings):  # type: ignore[no-untyped-def]
    return make_session_factory(make_engine(settings.market_database_url))


@pytest.fixture(scope="session")
def requester_sessions(settings: Settings):  # type: ignore[no-untyped-def]
    return make_session_factory(make_engine(settings.database_url))


@pytest.fixture
def market_db(settings: Settings) -> Iterator[Session]:
    """A marketplace session inside a transaction that is rolled back after the test."""
    engine = make_engine(settings.market_database_url)
    connection = engine.connect()
    outer = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
    yield session
    session.close()
    outer.rollback()
    connection.close()
    engine.dispose()


def new_requester(market_sessions, deposit: str = "100.00") -> IssuedKey:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return create_requester(session, f"req-{uuid.uuid4().hex[:8]}", Decimal(deposit))


@pytest.fixture
def requester(market_sessions) -> IssuedKey:  # type: ignore[no-untyped-def]
    return new_requester(market_sessions)


def boto3_client(url: str, key: IssuedKey, config: Config | None = None):  # type: ignore[no-untyped-def]
    return boto3.client(
        "mturk",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=key.access_key_id,
        aws_secret_access_key=key.secret_access_key,
        config=config,
    )


@pytest.fixture
def mturk(live_server: RunningServer, requester: IssuedKey):  # type: ignore[no-untyped-def]
    """The official boto3 mturk client, pointed at the running marketplace."""
    return boto3_client(live_server.url, requester)


@pytest.fixture
def market(live_server: RunningServer, requester: IssuedKey) -> Marketplace:
    return Marketplace.connect(live_server.url, requester.access_key_id, requester.secret_access_key)


@pytest.fixture(scope="session")
def schemas_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "hits" / "wire" / "schemas"


#: How a test module names the test services itself, rather than through the ``settings`` fixture.
_NAMES_ITS_BACKEND = (
    "BACKEND",
    "HITFORGE_TEST_POSTGRES_URL",
    "HITFORGE_TEST_REDIS_URL",
    "_postgres_database",
)
_TESTS = Path(__file__).resolve().parent
_IMPORTED_TEST_MODULE = re.compile(r"^\s*(?:from|import)\s+tests\.([\w.]+)", re.M)


def _names_its_backend(path: Path, seen: dict[Path, bool]) -> bool:
    """Whether the module at ``path``, or a test module it imports (helpers), names the test services."""
    if path not in seen:
        seen[path] = False  # an import cycle adds nothing
        text = path.read_text()
        found = any(name in text for name in _NAMES_ITS_BACKEND)
        for dotted in _IMPORTED_TEST_MODULE.findall(text):
            module = _TESTS.joinpath(*dotted.split("."))
            for candidate in (module.with_suffix(".py"), module / "__init__.py"):
                if not found and candidate.is_file():
                    found = _names_its_backend(candidate, seen)
        seen[path] = found
    return seen[path]


def _runs_in_half(item: pytest.Item, half: str, seen: dict[Path, bool]) -> bool:
    """Whether ``item`` runs in ``half`` ("embedded" or "postgres") of ``make test``.

    A test that reaches the backend (its fixtures include ``settings``, or its module names the
    test services) runs in both halves, except the browser tests: they check pages, forms and
    scripts, and every page's queries are tested on both backends by tests/server. A test that
    does not (functions on their own data, ``hitforge demo`` run as a user runs it, on its own
    embedded files) would run the same in either, so it runs in one: the demos, which start
    processes, in the PostgreSQL half, the rest in the embedded half, which has the browser tests.
    """
    if item.path.is_relative_to(_TESTS / "browser"):
        return half == "embedded"
    if "settings" in getattr(item, "fixturenames", ()) or _names_its_backend(item.path, seen):
        return True
    starts_processes = item.get_closest_marker("celery") is not None
    return starts_processes == (half == "postgres")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``HITFORGE_TEST_HALF`` (set by scripts/test-both-backends.sh): only that half's tests."""
    half = os.environ.get("HITFORGE_TEST_HALF", "")
    if half not in ("embedded", "postgres"):
        return
    if (half == "postgres") != (BACKEND == "postgres"):
        pytest.exit(f"HITFORGE_TEST_HALF={half} with HITFORGE_TEST_BACKEND={BACKEND}", returncode=4)
    seen: dict[Path, bool] = {}
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        (kept if _runs_in_half(item, half, seen) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
