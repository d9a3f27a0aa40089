"""The requester side's figures read at scrape time: the outbox, the task queue, open HITs.

Each is a state, read when Prometheus asks (``server.metrics.register_collector``),
so it is right however many server processes or Celery workers there are.
Every query is bounded: the outbox's pending entries through its status index,
open HITs only for campaigns that are running.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from flask import Flask, current_app
from prometheus_client.core import GaugeMetricFamily, Metric
from sqlalchemy import func, select

from hits import task_queues
from hits.db import utcnow
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT
from server.db import runtime
from server.metrics import register_collector

log = logging.getLogger(__name__)


def _outbox() -> Iterable[Metric]:
    with runtime().requester_read_sessions() as session:
        count, oldest = session.execute(
            select(func.count(), func.min(OutboxEntry.created_at)).where(OutboxEntry.status == "pending")
        ).one()
    backlog = GaugeMetricFamily(
        "hitforge_outbox_backlog", "Decisions and actions waiting to be applied through the API."
    )
    backlog.add_metric([], count)
    age = GaugeMetricFamily(
        "hitforge_outbox_oldest_age_seconds", "How long the oldest waiting outbox entry has waited (0: none)."
    )
    age.add_metric([], _seconds_since(oldest) if oldest is not None else 0.0)
    return [backlog, age]


def _seconds_since(moment: datetime) -> float:
    return max(0.0, (utcnow() - moment).total_seconds())


def _open_hits() -> Iterable[Metric]:
    with runtime().requester_read_sessions() as session:
        rows = session.execute(
            select(Campaign.name, func.count(PublishedHIT.id))
            .join(PublishedHIT, PublishedHIT.campaign_id == Campaign.id)
            .where(Campaign.status == "running", PublishedHIT.status == "open")
            .group_by(Campaign.name)
        ).all()
    family = GaugeMetricFamily(
        "hitforge_hits_open",
        "HITs published and not yet finished, per running campaign.",
        labels=["campaign"],
    )
    for name, count in rows:
        family.add_metric([name], count)
    return [family]


def _queue_depth() -> Iterable[Metric]:
    family = GaugeMetricFamily(
        "hitforge_task_queue_depth", "Celery tasks waiting in the broker, per queue.", labels=["queue"]
    )
    producer = current_app.extensions["hitforge_tasks"]
    try:
        with producer.connection_for_write() as connection:
            channel = connection.default_channel
            for queue in task_queues.QUEUES:
                family.add_metric([queue], _waiting(channel, queue))
    except Exception as exc:  # an unreachable broker is /readyz's to report; the scrape goes on
        log.warning("metrics: the task queue's depth could not be read: %s", exc)
    return [family]


def _waiting(channel: Any, queue: str) -> int:
    """Messages waiting in ``queue``; 0 for a queue no task was sent to yet (the broker has none)."""
    if not channel._has_queue(queue):  # noqa: SLF001 - kombu's virtual transports' own check
        return 0
    _, waiting, _ = channel.queue_declare(queue=queue, passive=True)
    return int(waiting)


def _read() -> Iterable[Metric]:
    yield from _outbox()
    yield from _open_hits()
    yield from _queue_depth()


def init_app(app: Flask) -> None:
    """Add the requester side's scrape-time figures to ``/metrics``."""
    register_collector(app, _read)
