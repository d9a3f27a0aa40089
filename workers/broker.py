"""The embedded broker: kombu's SQLAlchemy transport over a SQLite file.

Chosen for the embedded default because it needs no service and no compiled
extension, and it keeps acks_late semantics good enough for one machine (see
the README for the measured latency). The stock transport polls once a second
and hands every transport option to ``create_engine``, so the polling
interval is set on a subclass instead (``python -m bench.broker_latency``).
"""

from __future__ import annotations

import fcntl
from typing import Any

from kombu.transport.sqlalchemy import Channel, Transport
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError


class EmbeddedChannel(Channel):
    polling_interval = 0.05

    def _open(self) -> Any:
        # The stock transport creates its tables under a thread lock only: two
        # worker processes starting on a new broker file both ran CREATE TABLE
        # and one died. Processes take turns here (once per process).
        database = make_url(self.connection.client.hostname).database
        if not database or database == ":memory:":
            return super()._open()
        with open(f"{database}-setup.lock", "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                return super()._open()
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)

    def _get_or_create(self, queue: str) -> Any:
        # Likewise its look-then-insert of a queue's row: when another process
        # inserted it in between, the row exists, so read it.
        try:
            return super()._get_or_create(queue)
        except IntegrityError:
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()


class EmbeddedTransport(Transport):
    Channel = EmbeddedChannel
    # The transport's drain loop sleeps this long between empty polls.
    polling_interval = 0.05
