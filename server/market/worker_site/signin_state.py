"""A worker's signed-in state on the worker site (``server/signin_session.py`` does the work).

The session cookie names the worker, the sign-in generation (signing out ends
every earlier cookie) and when the sign-in began and was last used (the
server ends it after ``HITFORGE_WORKER_SESSION_IDLE_MINUTES`` without a
request, and ``HITFORGE_WORKER_SESSION_LIFETIME_HOURS`` after signing in).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from hits.market.models import Worker
from server import signin_session
from server.db import runtime

KIND = "worker"


def begin(worker: Worker) -> None:
    """Sign ``worker`` in on this browser (a fresh session: nothing from before carries over)."""
    signin_session.begin(KIND, worker.id, worker.session_generation)


def signed_in_id() -> str | None:
    """The id of the worker this request's cookie signs in, while the sign-in has not expired."""
    worker_id = signin_session.signed_in_id(KIND, runtime().settings.worker_session)
    return worker_id if isinstance(worker_id, str) else None


def is_current(worker: Worker) -> bool:
    """Whether this request's cookie is from the worker's current sign-in generation."""
    return signin_session.is_current(KIND, worker.session_generation)


def end_everywhere(db: Session, worker: Worker | None) -> None:
    """Sign the worker out here and end every earlier sign-in's cookie."""
    signin_session.end_everywhere(db, worker)
