"""``/healthz`` and ``/readyz``: is the process up, and can it do its work.

``/healthz`` touches nothing but the process (a supervisor restarts a server
that stops answering it). ``/readyz`` checks what a request needs: both
databases answer and carry every migration this code has, and the broker
accepts a connection. A load balancer sends traffic only to a ready server;
a deployment waits for readiness before it moves on.

Each check is bounded in time and says only ``ok`` or a short reason: the
details (addresses, driver messages) go to the log, never to the caller.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify
from sqlalchemy import Engine, text

from hits.schema import missing_migrations
from server.db import runtime

log = logging.getLogger(__name__)
bp = Blueprint("health", __name__)

#: How long the broker may take to accept a connection before the server is called unready.
BROKER_TIMEOUT_SECONDS = 2.0


class NotReady(Exception):
    """A check's short reason for failing, fit to show to anyone."""


@bp.get("/healthz")
def healthz() -> Response:
    """The process is up and answering."""
    return jsonify(status="ok")


def _database(engine: Engine, side: str) -> None:
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
            missing = missing_migrations(connection, side)
    except Exception as exc:
        log.warning("readyz: the %s database is unreachable: %s", side, exc)
        raise NotReady("unreachable") from exc
    if missing:
        raise NotReady(f"migrations not applied (run hitforge db upgrade): {len(missing)} head(s) behind")


def _broker() -> None:
    producer = current_app.extensions["hitforge_tasks"]
    try:
        with producer.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as exc:
        log.warning("readyz: the broker is unreachable: %s", exc)
        raise NotReady("unreachable") from exc


def _checks() -> dict[str, Callable[[], None]]:
    rt = runtime()
    checks: dict[str, Callable[[], None]] = {}
    # Only the databases of the half (or halves) this server serves: HITFORGE_SERVE.
    if rt.settings.serves_market:
        checks["market_database"] = lambda: _database(rt.market_engine, "market")
    # One database for both halves still carries each half's migrations (two version tables).
    if rt.settings.serves_requester:
        checks["requester_database"] = lambda: _database(rt.requester_engine, "requester")
    checks["broker"] = _broker
    return checks


@bp.get("/readyz")
def readyz() -> tuple[Response, int]:
    """200 when every check passes, 503 with each check's result otherwise."""
    results: dict[str, Any] = {}
    ready = True
    for name, check in _checks().items():
        started = time.perf_counter()
        try:
            check()
            outcome = "ok"
        except NotReady as exc:
            outcome, ready = str(exc), False
        results[name] = {"status": outcome, "ms": round((time.perf_counter() - started) * 1000, 1)}
    return jsonify(status="ready" if ready else "unready", checks=results), 200 if ready else 503


def init_app(app: Flask) -> None:
    """Serve ``/healthz`` and ``/readyz`` (no sign-in, no session, no CSRF: probes only read)."""
    app.register_blueprint(bp)
