"""The session's live server keeps its port from the moment the settings name it."""

from __future__ import annotations

import errno
import socket

import pytest

from hits.settings import Settings


def test_no_one_else_can_take_the_live_servers_port_before_it_starts(settings: Settings) -> None:
    # The settings exist, the server may not have started yet (this test does not ask for it):
    # a port that was merely free when chosen could be bound by anyone in the meantime.
    port = int(settings.public_url.rsplit(":", 1)[-1])
    with socket.socket() as intruder, pytest.raises(OSError) as taken:
        intruder.bind(("127.0.0.1", port))
    assert taken.value.errno == errno.EADDRINUSE
