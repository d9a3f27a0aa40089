"""The marketplace's clocks: abandoned work, auto-approval and expiry applied as time passes.

Due work is applied lazily, at most every few seconds, when a request reaches
the marketplace: every state that matters lives in the database, so any
number of server processes can share the duty (the last-run time kept here
only spares the database repeated sweeps).

The request that finds a sweep due does not run it: it starts the sweep in a
thread of its own and goes on. A sweep writes (on SQLite it queues for the
database's one write lock, on PostgreSQL it may wait for a row another
transaction holds) and may approve many assignments; run inside the request,
that wait and that work landed on whichever worker's page happened to come
first, every few seconds per process (the worker path's p99 tail). One sweep
at a time per process: a request finding one still running starts no other.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from flask import Flask, current_app, request

from hits.db import session_scope
from hits.market.assignment_ops import run_clocks
from server.db import Runtime
from server.metrics import DECISIONS

SWEEP_EVERY_SECONDS = 5.0


def _sweep(app: Flask, state: dict[str, Any]) -> None:
    try:
        # Its own unit of work (and app context: delivery passes it schedules need the app).
        with app.app_context():
            rt: Runtime = app.extensions["hitforge"]
            with session_scope(rt.market_sessions) as session:
                done = run_clocks(session)
            # Counted once committed: a sweep that fails approved nothing.
            if done["auto_approved"]:
                DECISIONS.labels("approved", "auto").inc(done["auto_approved"])
    except Exception:
        # Nothing is lost: whatever was due stays due, and the next sweep applies it.
        app.logger.exception("the marketplace clocks' sweep failed; the next one will retry")
    finally:
        state["running"] = False


def sweep_if_due() -> threading.Thread | None:
    """Start a sweep of the clocks in the background if one is due and none is running here.

    Returns the sweep's thread (for callers that must wait for it), or None.
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    state: dict[str, Any] = app.extensions.setdefault("hitforge_clock", {"last": 0.0})
    now = time.monotonic()
    if now - state.get("last", 0.0) < SWEEP_EVERY_SECONDS:
        return None
    # A sweep still running in this process (a flag inherited through a fork is not this process's).
    if state.get("running") and state.get("pid") == os.getpid():
        return None
    # Not atomic across this process's threads: two requests may both start one, which only
    # costs a second sweep (sweeps are idempotent, as between processes).
    state.update(last=now, running=True, pid=os.getpid())
    thread = threading.Thread(target=_sweep, args=(app, state), name="hitforge-clocks", daemon=True)
    thread.start()
    return thread


def init_app(app: Flask, *blueprint_names: str) -> None:
    """Start a background sweep, when due, on requests to the named blueprints."""
    names = set(blueprint_names)

    @app.before_request
    def _sweep_when_due() -> None:
        if request.blueprint in names:
            sweep_if_due()
