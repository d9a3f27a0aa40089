"""A marketplace server whose operator allows notification events to private addresses.

The tests' web hooks listen on loopback, which a marketplace refuses by
default (``HITFORGE_NOTIFICATION_ALLOW_PRIVATE``); tests that deliver events
to them talk to this server instead of the shared one, whose settings keep
the default.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from demo.runner import RunningServer, serve_in_thread
from hits.market.accounts import IssuedKey
from hits.settings import Settings
from hits.wire.destinations import allow_private_destinations, private_destinations_allowed
from server import create_app
from tests.conftest import boto3_client


@pytest.fixture(scope="session")
def hook_server(settings: Settings) -> Iterator[RunningServer]:
    """The same databases, served by an app with ``notification_allow_private`` on."""
    running = serve_in_thread(create_app(settings=settings.with_overrides(notification_allow_private=True)))
    yield running
    running.stop()


@pytest.fixture
def hook_mturk(hook_server: RunningServer, requester: IssuedKey):  # type: ignore[no-untyped-def]
    """A boto3 client of :func:`hook_server`."""
    return boto3_client(hook_server.url, requester)


@pytest.fixture
def private_hooks_for_direct_calls(market_sessions) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """Events committed through the tests' own session factory may go to loopback hooks too."""
    engine = market_sessions.kw["bind"]
    before = private_destinations_allowed(engine)
    allow_private_destinations(engine)
    yield
    allow_private_destinations(engine, before)
