"""A requester's decisions on submitted work (approve, reject), and the read of an assignment with its HIT.

Marketplace side, product. Below both :mod:`hits.market.hit_ops` and
:mod:`hits.market.assignment_ops`: a review policy's actions (carried out by
``hit_ops`` when a HIT turns reviewable) and the worker's own steps (in
``assignment_ops``) decide and read through this module, which imports neither.
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.orm.util import identity_key

from hits.db import utcnow
from hits.market import events, ledger, review_policies
from hits.market.errors import RequestError, not_found
from hits.market.models import HIT, Assignment, HITReviewPolicies, NotificationSetting
from hits.market.models.work import APPROVED, REJECTED, SUBMITTED


def get_assignment(session: Session, assignment_id: object, requester_id: str | None = None) -> Assignment:
    """The assignment ``assignment_id``; a requester sees only those on its HITs."""
    assignment = session.get(Assignment, assignment_id) if isinstance(assignment_id, str) else None
    if assignment is None or (requester_id is not None and assignment.hit.requester_id != requester_id):
        raise not_found("Assignment", str(assignment_id))
    return assignment


@cache
def _with_hit_and_setting(
    lock_hit: bool = False,
) -> Select[Assignment, HIT, NotificationSetting, HITReviewPolicies]:
    # Built once (per lock) and bound per call. The HIT's type comes along (joined eagerly).
    # Rows are locked in FROM order, the assignment before its HIT: the order the clock's
    # sweep takes them in too.
    return (
        select(Assignment, HIT, NotificationSetting, HITReviewPolicies)
        .join(HIT, HIT.id == Assignment.hit_id)
        .outerjoin(NotificationSetting, NotificationSetting.hit_type_id == HIT.hit_type_id)
        .outerjoin(HITReviewPolicies, HITReviewPolicies.hit_id == HIT.id)
        .where(Assignment.id == bindparam("assignment_id"))
        .with_for_update(of=[Assignment, HIT] if lock_hit else Assignment)
    )


@cache
def _with_hit() -> Select[Assignment]:
    # Built once: ``Session.get`` with a loader option builds and keys a new statement each call,
    # about twice the CPU of executing this one (the work page and the task frame, every cycle).
    return (
        select(Assignment)
        .options(joinedload(Assignment.hit))
        .where(Assignment.id == bindparam("assignment_id"))
    )


def assignment_with_hit(session: Session, assignment_id: str) -> Assignment | None:
    """The assignment with its HIT (and the HIT's type) in one query, unlocked; None if there is none."""
    found: Assignment | None = session.scalar(_with_hit(), {"assignment_id": assignment_id})
    return found


def load_with_hit(
    session: Session, assignment_id: str, *, fresh: bool = False, lock_hit: bool = False
) -> Assignment | None:
    """The assignment, with its HIT, HIT type, notification setting and review policies, in one query.

    Submitting, returning, approving and rejecting need them all; each read on
    its own cost a query. The caller keeps the assignment referenced: the
    session holds what it loaded only weakly, and would read it again.

    A row read from the database is locked until commit. ``fresh`` reads it
    (and locks it) even when the session already holds it: a decision must see the
    status another decision committed while this one waited for the lock, not
    the copy this session read before. ``lock_hit`` locks the HIT's row too (and
    implies ``fresh``): see ``assignment_ops._own_active``.
    """
    fresh = fresh or lock_hit
    if not fresh:
        known = session.identity_map.get(identity_key(Assignment, assignment_id))
        if known is not None:
            return known  # type: ignore[no-any-return]
    row = session.execute(
        _with_hit_and_setting(lock_hit),
        {"assignment_id": assignment_id},
        execution_options={"populate_existing": True} if fresh else {},
    ).first()
    if row is None:
        return None
    assignment, hit, setting, policies = row
    if setting is None:
        events.note_no_setting(session, hit.hit_type_id)
    if policies is None:
        review_policies.note_no_policies(session, hit.id)
    # The session holds what it loaded only weakly: tie the HIT to its assignment
    # while the row still holds it, or it is gone (and read again) by first use.
    set_committed_value(assignment, "hit", hit)
    return assignment


def _get_for_review(session: Session, assignment_id: object, requester_id: str | None) -> Assignment:
    """:func:`get_assignment`, with what approving or rejecting needs read in one query.

    The assignment's row is locked until commit (PostgreSQL; SQLite has one
    writer at a time) and read again even if the session holds it: two
    decisions on one assignment at once (an approve and a reject, or two
    rejects) run one after the other, and the second sees the first's status
    instead of overwriting it.
    """
    loaded = load_with_hit(session, assignment_id, fresh=True) if isinstance(assignment_id, str) else None
    assignment = get_assignment(session, assignment_id, requester_id)
    assert loaded in (None, assignment)  # noqa: S101 - kept referenced until here: one identity map
    return assignment


def _pay_reward(session: Session, assignment: Assignment) -> None:
    hit = assignment.hit
    ledger.pay(
        session,
        txn=f"reward:{assignment.id}",
        kind="reward",
        requester_id=hit.requester_id,
        worker_id=assignment.worker_id,
        amount=hit.hit_type.reward,
        max_assignments=hit.max_assignments,
        reference=assignment.id,
    )


def approve(
    session: Session,
    requester_id: str | None,
    assignment_id: str,
    feedback: str | None = None,
    *,
    override_rejection: bool = False,
) -> Assignment:
    """Approve a submitted assignment and pay its reward (plus fee) from the requester."""
    assignment = _get_for_review(session, assignment_id, requester_id)
    if assignment.status == REJECTED and override_rejection:
        pass
    elif assignment.status != SUBMITTED:
        raise RequestError(
            f"This operation can be called with a status of: Submitted (assignment is {assignment.status})",
            "AWS.MechanicalTurk.InvalidAssignmentState",
        )
    _pay_reward(session, assignment)
    assignment.status = APPROVED
    assignment.approval_time = utcnow()
    assignment.rejection_time = None
    if feedback is not None:
        assignment.requester_feedback = feedback
    session.flush()
    # No refresh_status: Submitted and Approved both hold a slot and neither is
    # in progress, so a decision cannot change the HIT's status (only the clock can).
    events.record(session, assignment.hit, "AssignmentApproved", assignment)
    return assignment


def reject(session: Session, requester_id: str, assignment_id: str, feedback: str) -> Assignment:
    """Reject a submitted assignment; nothing is paid."""
    assignment = _get_for_review(session, assignment_id, requester_id)
    if assignment.status != SUBMITTED:
        raise RequestError(
            f"This operation can be called with a status of: Submitted (assignment is {assignment.status})",
            "AWS.MechanicalTurk.InvalidAssignmentState",
        )
    assignment.status = REJECTED
    assignment.rejection_time = utcnow()
    assignment.requester_feedback = feedback
    session.flush()
    # No refresh_status, as in approve: a rejected assignment keeps its slot.
    events.record(session, assignment.hit, "AssignmentRejected", assignment)
    return assignment
