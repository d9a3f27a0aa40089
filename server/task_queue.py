"""Sending Celery tasks from web requests, only after the request's transaction commits."""

from __future__ import annotations

from functools import partial
from typing import Any

from celery import Celery
from flask import Flask, current_app
from sqlalchemy.orm import Session

from hits import task_queues
from hits.db import call_after_commit
from hits.settings import Settings


def _producer(settings: Settings) -> Celery:
    """A Celery app used only to send; it connects lazily, on the first send."""
    app = Celery("hitforge-web", set_as_current=False)
    # The workers' broker, and their routes: a decision sent from a page waits in the decisions' queue.
    task_queues.configure(app.conf, settings)
    return app


def send_after_commit(session: Session, task_name: str, *args: Any) -> None:
    """Queue ``task_name(*args)`` once ``session`` commits; dropped on rollback."""
    producer: Celery = current_app.extensions["hitforge_tasks"]
    call_after_commit(session, partial(producer.send_task, task_name, args=list(args)))


def init_app(app: Flask, settings: Settings) -> None:
    app.extensions["hitforge_tasks"] = _producer(settings)
