"""The broker every hitforge Celery app uses, and which queue each task waits in.

Decisions (the outbox's approvals, rejections and the rest, applied through
the API) wait in a queue of their own. In one first-in-first-out queue, the
decisions a sync batch made waited behind every sync queued before them: with
a campaign's pages of syncs queued at once, no worker was paid until the last
page was synced. Every worker consumes both queues, taking from each in turn
(kombu's fair cycle), so decisions are applied while syncs go on.

Shared by the Celery app that consumes (``workers.app``) and the web's app that
only sends (``server.task_queue``): both reach the same broker, and a task is
routed the same whoever sends it.
"""

from __future__ import annotations

from typing import Any

from kombu import Queue

from hits.settings import Settings

#: Celery's default queue: syncs, sweeps, relays and every task not routed elsewhere.
DEFAULT_QUEUE = "celery"
#: Outbox entries waiting to be applied through the API.
DECISIONS_QUEUE = "hitforge-decisions"
#: Every queue a worker consumes, in the order it starts from.
QUEUES = (DEFAULT_QUEUE, DECISIONS_QUEUE)
#: The tasks that apply outbox entries (one entry, or a batch's).
DECISION_TASKS = ("hitforge.apply_decision", "hitforge.apply_decisions")


def configure(conf: Any, settings: Settings) -> None:
    """Point a Celery app's ``conf`` at ``settings``' broker, with the queues and routes (senders
    and workers alike)."""
    conf.broker_url = settings.broker_url
    if settings.embedded_broker:
        # Our subclass of kombu's SQLAlchemy transport polls every 0.05 s, not 1 s.
        conf.broker_url = settings.broker_url.removeprefix("sqla+")
        conf.broker_transport = "workers.broker:EmbeddedTransport"
    conf.task_default_queue = DEFAULT_QUEUE
    conf.task_queues = tuple(Queue(name, routing_key=name) for name in QUEUES)
    conf.task_routes = {
        name: {"queue": DECISIONS_QUEUE, "routing_key": DECISIONS_QUEUE} for name in DECISION_TASKS
    }
