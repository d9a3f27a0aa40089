"""A worker's signed-in state: the session cookie names the worker and the sign-in generation.

Flask's session is a signed cookie, which the server cannot take back: a copy
of it would stay a valid sign-in after the worker signs out. So each sign-in
stamps the worker's ``session_generation`` into the cookie, the cookie counts
only while it matches, and signing out counts the generation up, ending every
sign-in of that worker issued before (on any device).
"""

from __future__ import annotations

from flask import session
from sqlalchemy import update
from sqlalchemy.orm import Session

from hits.market.models import Worker

GENERATION_KEY = "worker_generation"


def begin(worker: Worker) -> None:
    """Sign ``worker`` in on this browser (a fresh session: nothing from before carries over)."""
    session.clear()
    session["worker_id"] = worker.id
    session[GENERATION_KEY] = worker.session_generation or 0


def is_current(worker: Worker) -> bool:
    """Whether this request's cookie is from the worker's current sign-in generation."""
    return bool(session.get(GENERATION_KEY) == (worker.session_generation or 0))


def end_everywhere(db: Session, worker: Worker | None) -> None:
    """Sign the worker out here and end every earlier sign-in's cookie."""
    if worker is not None:
        db.execute(
            update(Worker)
            .where(Worker.id == worker.id)
            .values(session_generation=Worker.session_generation + 1)
        )
    session.clear()
