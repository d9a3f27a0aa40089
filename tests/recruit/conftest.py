"""A Prolific stand-in served on a local port, and a client of it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin, serve_standin


@pytest.fixture
def standin() -> Iterator[RunningStandin]:
    running = serve_standin(f"tok-{secrets.token_hex(8)}")
    yield running
    running.stop()


@pytest.fixture
def prolific(standin: RunningStandin) -> ProlificClient:
    # No waiting between retries: the tests count attempts, not seconds.
    return ProlificClient(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
