"""The marketplace's clocks: abandoned work, auto-approval and expiry applied as time passes.

Due work is applied lazily, at most every few seconds, by whichever request
reaches the marketplace first: every state that matters lives in the
database, so any number of server processes can share the duty (the last-run
time kept here only spares the database repeated sweeps).
"""

from __future__ import annotations

import time

from flask import Flask, current_app, request

from hits.db import session_scope
from hits.market.assignment_ops import run_clocks
from server.db import runtime

SWEEP_EVERY_SECONDS = 5.0


def sweep_if_due() -> None:
    state = current_app.extensions.setdefault("hitforge_clock", {"last": 0.0})
    now = time.monotonic()
    if now - state["last"] < SWEEP_EVERY_SECONDS:
        return
    state["last"] = now
    # Its own unit of work: due work is committed whatever the request does,
    # and the request itself may be one that only reads.
    with session_scope(runtime().market_sessions) as session:
        run_clocks(session)


def init_app(app: Flask, *blueprint_names: str) -> None:
    names = set(blueprint_names)

    @app.before_request
    def _sweep() -> None:
        if request.blueprint in names:
            sweep_if_due()
