"""The marketplace's part in recruiting (``docs/recruiting.md``): what it lends the requester side.

The requester side knows the study and the participant's place; signing a
participant in on the worker account bound to their platform id, accepting
their next HIT and reading what became of their assignments is marketplace
work, done here and reached through ``server.capabilities``.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select

from hits.market import assignment_ops
from hits.market.errors import RequestError
from hits.market.models import Assignment
from hits.market.models.work import ACCEPTED
from hits.market.recruited import NotRecruitable, recruited_worker
from server.capabilities import NoHITToAccept
from server.db import market_session
from server.market.worker_site import signin_state
from server.market.worker_site.base import current_worker, load_worker
from server.metrics import ACCEPTS


def sign_in_recruited(platform: str, participant_id: str) -> str | None:
    """Sign the participant's bound account in on this browser (made on first arrival); its id."""
    db = market_session()
    try:
        worker = recruited_worker(db, platform, participant_id)
    except NotRecruitable:
        return None
    current = current_worker()
    if current is None or current.id != worker.id:
        signin_state.begin(worker)  # a fresh session: whoever was signed in here before is not
    return worker.id


def accept_next(hit_type_id: str) -> tuple[str, str]:
    """The signed-in worker takes an assignment of the group's next HIT; (assignment id, HIT id)."""
    worker = current_worker()
    if worker is None:
        raise NoHITToAccept("nobody is signed in")
    try:
        assignment = assignment_ops.accept_from_group(market_session(), worker, hit_type_id)
    except RequestError as exc:
        ACCEPTS.labels(exc.turk_error_code).inc()
        raise NoHITToAccept(exc.message) from exc
    ACCEPTS.labels("accepted").inc()
    return assignment.id, assignment.hit_id


def assignment_states(assignment_ids: Iterable[str]) -> dict[str, str]:
    """Assignment id -> status, for the ids that exist."""
    ids = list(assignment_ids)
    if not ids:
        return {}
    rows = market_session().execute(select(Assignment.id, Assignment.status).where(Assignment.id.in_(ids)))
    return {assignment_id: status for assignment_id, status in rows}


def release_assignments(worker_id: str, assignment_ids: Iterable[str]) -> int:
    """Return the worker's assignments still in progress among ``assignment_ids`` to their HITs."""
    db = market_session()
    worker = load_worker(db, worker_id)
    if worker is None:
        return 0
    ids = list(assignment_ids)
    held = db.scalars(
        select(Assignment.id)
        .where(Assignment.id.in_(ids), Assignment.worker_id == worker_id, Assignment.status == ACCEPTED)
        .order_by(Assignment.id)
    ).all()
    for assignment_id in held:
        assignment_ops.return_assignment(db, worker, assignment_id)
    return len(held)
