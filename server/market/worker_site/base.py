"""What every worker-site module shares: the blueprint and who is signed in."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, wraps
from typing import Any

from flask import Blueprint, abort, g, redirect, request, url_for
from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from hits.market import assignment_ops
from hits.market.models import HIT, Worker
from hits.market.qualification_ops import unmet_requirements
from server.db import market_session, read_only_request
from server.market.worker_site.signin_state import is_current, signed_in_id

bp = Blueprint("worker_site", __name__)
NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE"

#: The pages a worker loads on every HIT (and their own dashboard): they only read,
#: so they run without the write lock. On SQLite that lock is the database's one
#: writer slot: held by every page view, it made a crowd's reads queue behind each
#: other and behind every accept and submit. A GET not named here (a qualification
#: test's first view starts its clock) keeps an ordinary unit of work.
READ_ONLY_PAGES = frozenset(
    {
        "worker_site.index",
        "worker_site.preview",
        "worker_site.work",
        "worker_site.dashboard",
        "worker_site.html_question",
    }
)


@cache
def _worker_by_id() -> Select[Worker]:
    # Built once and bound per call: every worker-site request reads its worker, and
    # ``Session.get`` builds and keys a new statement for each (about 1.5x the CPU).
    return select(Worker).where(Worker.id == bindparam("worker_id"))


def load_worker(db: Session, worker_id: str) -> Worker | None:
    """The worker with this id, or None (one statement; a worker already in ``db`` is not read again)."""
    known = db.identity_map.get(db.identity_key(Worker, worker_id))
    if known is not None:
        return known  # type: ignore[no-any-return]
    found: Worker | None = db.scalar(_worker_by_id(), {"worker_id": worker_id})
    return found


def current_worker() -> Worker | None:
    """The worker signed in on this request (from the session cookie), or None."""
    if "worker" not in g:
        worker_id = signed_in_id()  # None once the sign-in idled or aged out
        found = load_worker(market_session(), worker_id) if worker_id is not None else None
        # A cookie from before the worker last signed out is no sign-in (see signin_state.py).
        g.worker = found if found is not None and is_current(found) else None
    worker: Worker | None = g.worker
    return worker


def signed_in_worker() -> Worker:
    """The signed-in worker of a ``worker_required`` view."""
    worker = current_worker()
    assert worker is not None  # noqa: S101 - worker_required guarantees it
    return worker


def previewable_hit(worker: Worker, hit_id: str) -> HIT:
    """The HIT if ``worker`` may preview it, else abort: 404 if there is none, 403 if they may not.

    Not if its requester blocked them (the listing hides such HITs), nor if they lack a
    qualification guarding its preview.
    """
    found = assignment_ops.hit_for_worker(market_session(), hit_id, worker.id)
    if found is None:
        abort(404)
    hit, is_blocked = found
    if is_blocked or unmet_requirements(
        market_session(), worker, hit.hit_type.qualification_requirements, "Preview"
    ):
        abort(403)
    return hit


def worker_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Send anonymous visitors to the sign-in page, then back here."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_worker() is None:
            return redirect(url_for("worker_site.signin", next=request.path))
        return view(*args, **kwargs)

    return wrapped


@bp.before_request
def _reads_only() -> None:
    if request.method in ("GET", "HEAD") and request.endpoint in READ_ONLY_PAGES:
        read_only_request()


@bp.app_context_processor
def _inject_worker() -> dict[str, Any]:
    return {"worker": current_worker()}


@bp.app_template_filter("duration")
def duration(seconds: int) -> str:
    """Seconds as a worker reads them: ``45 min``, ``2 h 30 min``, ``3 days``."""
    if seconds >= 86_400 and seconds % 86_400 == 0:
        days = seconds // 86_400
        return f"{days} day{'s' if days != 1 else ''}"
    hours, minutes = divmod(seconds // 60, 60)
    if hours and minutes:
        return f"{hours} h {minutes} min"
    if hours:
        return f"{hours} h"
    return f"{max(minutes, 1) if seconds else 0} min"
