"""The life of an assignment: accept, submit, return, time out (approving and rejecting: :mod:`decisions`).

Marketplace side, product.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cache

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import decisions, events, review_policies
from hits.market.errors import RequestError, not_found
from hits.market.hit_ops import carry_out_policy_actions, refresh_status
from hits.market.ids import new_entity_id
from hits.market.models import HIT, Assignment, HITType, NotificationSetting, Worker
from hits.market.models.work import (
    ABANDONED,
    ACCEPTED,
    APPROVED,
    ASSIGNABLE,
    OPEN_ASSIGNMENT_STATUSES,
    REJECTED,
    RETURNED,
    SUBMITTED,
)
from hits.market.qualification_ops import check_requirements
from hits.market.worker_relations import blocked
from hits.signin_limits import in_minutes

#: HITs given back (returned, or left to expire) within RETURN_WINDOW after which a worker may
#: accept nothing until the oldest of them is RETURN_WINDOW old. A worker returns a HIT now and
#: then (a task they cannot do); a script accepting and returning to read page after page (and
#: compare them, to find gold) returns hundreds a minute, and each cycle writes rows; left to
#: expire instead, many HITs at once would do the same more slowly. Counted in the database, so
#: every server process enforces the same limit.
RETURN_LIMIT = 10
RETURN_WINDOW = timedelta(minutes=30)


def accept(session: Session, worker: Worker, hit_id: str) -> Assignment:
    """Give ``worker`` an assignment of the HIT if it is open to them."""
    _check_accepts_not_paused(worker)
    # Lock the HIT row (PostgreSQL) so two workers cannot take the last slot.
    row = session.execute(_hit_and_block(), {"hit_id": hit_id, "worker_id": worker.id}).first()
    if row is None:
        raise not_found("HIT", hit_id)
    hit, is_blocked = row
    refresh_status(session, hit)
    mine = session.scalar(
        select(Assignment).where(
            Assignment.hit_id == hit.id,
            Assignment.worker_id == worker.id,
            Assignment.status.in_((ACCEPTED, SUBMITTED, APPROVED, REJECTED)),
        )
    )
    if mine is not None:
        if mine.status == ACCEPTED:
            return mine
        raise RequestError("You have already worked on this HIT.", "AWS.MechanicalTurk.AlreadyWorked")
    if hit.status != ASSIGNABLE:
        raise RequestError("This HIT is no longer available.", "AWS.MechanicalTurk.HITNotAvailable")
    _check_may_work_for(session, worker, hit.hit_type, is_blocked=is_blocked)
    return _take_slot(session, worker, hit)


@cache
def _hit_with_block() -> Select[HIT, bool]:
    return select(HIT, blocked(HIT.requester_id, bindparam("worker_id"))).where(HIT.id == bindparam("hit_id"))


@cache
def _hit_and_block() -> Select[HIT, bool]:
    # The requester's block on the worker is asked in the statement that locks the HIT.
    return _hit_with_block().with_for_update(of=HIT)


def hit_for_worker(session: Session, hit_id: str, worker_id: str) -> tuple[HIT, bool] | None:
    """The HIT (unlocked) and whether its requester blocked the worker, in one query; None if no such HIT."""
    row = session.execute(_hit_with_block(), {"hit_id": hit_id, "worker_id": worker_id}).first()
    return None if row is None else (row[0], bool(row[1]))


def accept_from_group(session: Session, worker: Worker, hit_type_id: str) -> Assignment:
    """Give ``worker`` an assignment of any HIT of the group (HIT type) they may take, oldest first.

    The HIT is chosen and locked in one statement. On PostgreSQL it skips the
    rows other transactions hold (``FOR UPDATE SKIP LOCKED``), so workers
    accepting from one group at the same moment each get a different HIT
    instead of queueing on, and then losing, the same oldest one. On SQLite the
    unit of work already holds the database's write lock, which serialises the
    choice and the insert just as well. Only if every candidate was locked does
    it wait, for HITs whose other slots are being taken (several assignments).
    """
    _check_accepts_not_paused(worker)
    found = _hit_type_for(session, hit_type_id, worker) if isinstance(hit_type_id, str) else None
    if found is None:
        raise not_found("HITType", str(hit_type_id))
    hit_type, is_blocked = found
    _check_may_work_for(session, worker, hit_type, is_blocked=is_blocked)
    candidates = _group_candidates(hit_type.id, worker.id, utcnow())
    hit = session.scalar(candidates.with_for_update(of=HIT, skip_locked=True))
    if hit is None and session.get_bind().dialect.name != "sqlite":
        hit = session.scalar(candidates.with_for_update(of=HIT))
    if hit is None:
        raise RequestError(
            "There are no more HITs in this group that you can accept.", "AWS.MechanicalTurk.HITNotAvailable"
        )
    return _take_slot(session, worker, hit)


@cache
def _type_setting_and_block() -> Select[HITType, NotificationSetting, bool]:
    return (
        select(HITType, NotificationSetting, blocked(HITType.requester_id, bindparam("worker_id")))
        .outerjoin(NotificationSetting, NotificationSetting.hit_type_id == HITType.id)
        .where(HITType.id == bindparam("hit_type_id"))
    )


def _hit_type_for(session: Session, hit_type_id: str, worker: Worker) -> tuple[HITType, bool] | None:
    """The HIT type and whether its requester blocked the worker, in one query.

    The type's notification setting comes in the same query (the accept records an event).
    """
    row = session.execute(
        _type_setting_and_block(), {"hit_type_id": hit_type_id, "worker_id": worker.id}
    ).first()
    if row is None:
        return None
    hit_type, setting, is_blocked = row
    if setting is None:
        events.note_no_setting(session, hit_type.id)
    return hit_type, bool(is_blocked)


def _group_candidates(hit_type_id: str, worker_id: str, now: datetime) -> Select[HIT]:
    """The oldest open HIT of the type that the worker holds no slot of (one row)."""
    worked = select(Assignment.hit_id).where(
        Assignment.worker_id == worker_id, Assignment.status.in_(OPEN_ASSIGNMENT_STATUSES)
    )
    return (
        select(HIT)
        .where(
            HIT.hit_type_id == hit_type_id,
            HIT.status == ASSIGNABLE,
            HIT.expires_at > now,
            HIT.id.not_in(worked),
        )
        .order_by(HIT.created_at, HIT.id)
        .limit(1)
    )


def _check_accepts_not_paused(worker: Worker) -> None:
    """Refuse any accept while the worker is paused for returning too many HITs (no query: see Worker)."""
    paused_until, now = worker.accepts_paused_until, utcnow()
    if paused_until is not None and paused_until > now:
        raise RequestError(
            "You have returned or let expire too many HITs in a short time. "
            f"You can accept HITs again in {in_minutes(paused_until - now)}.",
            "AWS.MechanicalTurk.TooManyReturns",
        )


def _check_may_work_for(session: Session, worker: Worker, hit_type: HITType, *, is_blocked: bool) -> None:
    """Refuse a worker the requester blocked, or one short of the type's Accept requirements."""
    if is_blocked:
        raise RequestError(
            "The requester of this HIT has blocked you from working on their HITs.",
            "AWS.MechanicalTurk.WorkerBlocked",
        )
    check_requirements(session, worker, hit_type.qualification_requirements, action="Accept")


def _take_slot(session: Session, worker: Worker, hit: HIT) -> Assignment:
    """Add the worker's assignment to a HIT already checked (and locked) as open to them."""
    now = utcnow()
    assignment = Assignment(
        id=new_entity_id(),
        hit_id=hit.id,
        worker_id=worker.id,
        status=ACCEPTED,
        accept_time=now,
        deadline=now + timedelta(seconds=hit.hit_type.assignment_duration_seconds),
    )
    session.add(assignment)
    session.flush()
    refresh_status(session, hit)
    events.record(session, hit, "AssignmentAccepted", assignment)
    return assignment


def _own_active(session: Session, worker: Worker, assignment_id: str) -> Assignment:
    # With its HIT and what goes with it in the same query: submitting and returning change
    # the HIT's status and record events (a lazy load of the HIT also flushed the assignment's
    # changes early, in two UPDATEs). Both rows are locked and read fresh: the HIT's status is
    # worked out from all its assignments, so two of its workers submitting at the same moment
    # must count one after the other. Each counting alone saw the other's assignment still in
    # progress, and a HIT with every assignment submitted stayed Unassignable (PostgreSQL).
    assignment = decisions.load_with_hit(session, assignment_id, lock_hit=True)
    # Another worker's assignment is reported exactly like a missing one.
    if assignment is None or assignment.worker_id != worker.id:
        raise not_found("Assignment", assignment_id)
    return assignment


def submit(
    session: Session, worker: Worker, assignment_id: str, answer_xml: str, authenticity: str | None = None
) -> Assignment:
    """Store a worker's answer; submitting the same assignment again changes nothing.

    ``authenticity``: the page's typing record (``hits.wire.authenticity``), kept beside the answer.
    """
    assignment = _own_active(session, worker, assignment_id)
    if assignment.status != ACCEPTED:
        if assignment.status in (SUBMITTED, APPROVED, REJECTED):
            return assignment  # idempotent: the first submission stands
        raise RequestError("This assignment is no longer active.", "AWS.MechanicalTurk.AssignmentNotActive")
    now = utcnow()
    if now > assignment.deadline:
        assignment.status = ABANDONED
        refresh_status(session, assignment.hit)
        session.flush()
        raise RequestError(
            "The time allotted for this assignment has run out.", "AWS.MechanicalTurk.AssignmentExpired"
        )
    assignment.status = SUBMITTED
    assignment.answer = answer_xml
    assignment.authenticity = authenticity
    assignment.submit_time = now
    assignment.auto_approval_time = now + timedelta(
        seconds=assignment.hit.hit_type.auto_approval_delay_seconds
    )
    session.flush()
    events.record(session, assignment.hit, "AssignmentSubmitted", assignment)
    # The assignment-level policy runs at submission, before the HIT may turn reviewable.
    carry_out_policy_actions(session, assignment.hit, review_policies.on_submitted(session, assignment))
    refresh_status(session, assignment.hit, now)
    return assignment


def return_assignment(session: Session, worker: Worker, assignment_id: str) -> Assignment:
    """The worker gives the assignment back; the slot reopens."""
    assignment = _own_active(session, worker, assignment_id)
    if assignment.status != ACCEPTED:
        raise RequestError(
            "Only an assignment in progress can be returned.", "AWS.MechanicalTurk.AssignmentNotActive"
        )
    assignment.status = RETURNED
    assignment.return_time = now = utcnow()
    session.flush()
    refresh_status(session, assignment.hit)
    events.record(session, assignment.hit, "AssignmentReturned", assignment)
    _pause_after_many_returns(session, worker, now)
    return assignment


def _pause_after_many_returns(session: Session, worker: Worker, now: datetime) -> None:
    """Pause the worker's accepts while RETURN_LIMIT HITs they gave back are within RETURN_WINDOW.

    A sliding window, as the sign-in throttle's: the pause lasts until the
    RETURN_LIMIT-th most recent return (or abandonment) leaves the window. Worked
    out here, on the rare return or abandonment, so that the frequent accept only
    compares a time it already has.
    """
    oldest_counted = session.scalar(
        select(Assignment.return_time)
        .where(
            Assignment.worker_id == worker.id,
            Assignment.status.in_((RETURNED, ABANDONED)),
            Assignment.return_time > now - RETURN_WINDOW,
        )
        .order_by(Assignment.return_time.desc())
        .offset(RETURN_LIMIT - 1)
        .limit(1)
    )
    if oldest_counted is not None:
        worker.accepts_paused_until = oldest_counted + RETURN_WINDOW


def run_clocks(session: Session, now: datetime | None = None) -> dict[str, int]:
    """Apply what time has made due: abandon overdue work, expire HITs, auto-approve.

    Rows are locked in the order a submission takes them (assignment, then its
    HIT, then a balance), so the sweep and a worker's submission never wait on
    each other in a cycle.
    """
    now = now or utcnow()
    # Locked: one a worker is submitting right now is read again once that call commits, and
    # left out if it is Submitted by then (writing Abandoned over it would drop the submission).
    abandoned = session.scalars(
        select(Assignment)
        .where(Assignment.status == ACCEPTED, Assignment.deadline < now)
        .order_by(Assignment.id)
        .with_for_update(of=Assignment)
    ).all()
    for assignment in abandoned:
        assignment.status = ABANDONED
        assignment.return_time = assignment.deadline  # back to its HIT when its time ran out
        events.record(session, assignment.hit, "AssignmentAbandoned", assignment)
    if abandoned:
        session.flush()
        for worker_id in sorted({a.worker_id for a in abandoned}):
            worker = session.get(Worker, worker_id)
            if worker is not None:
                _pause_after_many_returns(session, worker, now)
    expired = set(session.scalars(select(HIT.id).where(HIT.status == ASSIGNABLE, HIT.expires_at <= now)))
    touched = sorted({a.hit_id for a in abandoned} | expired)
    # Each HIT's status is worked out from all its assignments: locked (in id order) and read
    # fresh, as a submission does, so a worker submitting at the same moment counts after it.
    hits = (
        session.scalars(
            select(HIT)
            .where(HIT.id.in_(touched))
            .order_by(HIT.id)
            .with_for_update(of=HIT)
            .execution_options(populate_existing=True)
        ).all()
        if touched
        else []
    )
    for hit in hits:
        if hit.id in expired and hit.status == ASSIGNABLE:
            events.record(session, hit, "HITExpired")
        refresh_status(session, hit, now)
    # Locked up front, before any payment locks a balance, and skipping those a
    # requester is deciding right now: a decision holds its assignment and then
    # waits for the balance, so taking them one by one could deadlock with it.
    # An approval changes no HIT's status (Approved holds its slot as Submitted did).
    due = session.scalars(
        select(Assignment)
        .where(Assignment.status == SUBMITTED, Assignment.auto_approval_time <= now)
        .with_for_update(of=Assignment, skip_locked=True)
    ).all()
    approved = 0
    for assignment in due:
        try:
            with session.begin_nested():
                decisions.approve(session, None, assignment.id)
            approved += 1
        except RequestError:
            continue  # e.g. insufficient funds: it stays Submitted until the requester pays in
    session.flush()
    events.retry_pending(session)
    return {"abandoned": len(abandoned), "auto_approved": approved, "hits_refreshed": len(touched)}
