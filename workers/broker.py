"""The embedded broker: kombu's SQLAlchemy transport over a SQLite file.

Chosen for the embedded default because it needs no service and no compiled
extension, and it keeps acks_late semantics good enough for one machine (see
the README for the measured latency). The stock transport polls once a second
and hands every transport option to ``create_engine``, so the polling
interval is set on a subclass instead (``python -m bench.broker_latency``).
"""

from __future__ import annotations

from kombu.transport.sqlalchemy import Channel, Transport


class EmbeddedChannel(Channel):
    polling_interval = 0.05


class EmbeddedTransport(Transport):
    Channel = EmbeddedChannel
    # The transport's drain loop sleeps this long between empty polls.
    polling_interval = 0.05
