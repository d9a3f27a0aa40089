"""A requester's dealings with individual workers: bonuses, blocks and messages."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnExpressionArgument, Exists, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import ledger
from hits.market import validation as v
from hits.market.errors import RequestError, bad_parameter, invalid, not_found
from hits.market.models import HIT, Assignment, BonusPayment, Worker, WorkerBlock, WorkerMessage
from hits.market.models.work import APPROVED, REJECTED, SUBMITTED
from hits.market.request_tokens import UNIQUE_TOKEN_WINDOW, already_processed

MAX_NOTIFY_WORKERS = 100
MAX_SUBJECT, MAX_MESSAGE = 200, 4096
BONUSABLE = (SUBMITTED, APPROVED, REJECTED)


def has_worked_for(session: Session, requester_id: str, worker_id: str) -> bool:
    """Whether the worker ever accepted one of the requester's HITs."""
    return (
        session.scalar(
            select(Assignment.id)
            .join(HIT, HIT.id == Assignment.hit_id)
            .where(HIT.requester_id == requester_id, Assignment.worker_id == worker_id)
            .limit(1)
        )
        is not None
    )


def send_bonus(
    session: Session,
    requester_id: str,
    *,
    worker_id: Any,
    assignment_id: Any,
    amount: Any,
    reason: Any,
    token: Any = None,
) -> BonusPayment:
    """Pay a worker a bonus (plus MTurk's 20% fee) for an assignment of this requester.

    A ``UniqueRequestToken`` seen in the last 24 hours is refused as MTurk does, so a
    retried call never pays twice.
    """
    value = v.money(amount, "BonusAmount")
    if value <= 0:
        raise invalid("BonusAmount must be greater than 0.")
    reason = v.text(reason, "Reason", 4096, required=True)
    if token is not None:
        v.text(token, "UniqueRequestToken", 64, required=True)
        previous = session.scalar(
            select(BonusPayment).where(
                BonusPayment.requester_id == requester_id, BonusPayment.unique_request_token == token
            )
        )
        if previous is not None:
            if utcnow() - previous.granted_at < UNIQUE_TOKEN_WINDOW:
                raise already_processed(token)
            previous.unique_request_token = None
            session.flush()
    if not isinstance(worker_id, str) or session.get(Worker, worker_id) is None:
        raise bad_parameter("WorkerId", worker_id)  # MTurk's answer for a worker it does not know
    if not has_worked_for(session, requester_id, worker_id):
        raise RequestError(
            f"Worker {worker_id} has not worked for you; bonuses can only be sent to your workers.",
            "AWS.MechanicalTurk.WorkerDoesNotExist",
        )
    assignment = session.get(Assignment, assignment_id) if isinstance(assignment_id, str) else None
    if assignment is None or assignment.hit.requester_id != requester_id:
        raise not_found("Assignment", str(assignment_id))
    if assignment.worker_id != worker_id:
        raise invalid(f"Assignment {assignment.id} was not worked on by worker {worker_id}.")
    if assignment.status not in BONUSABLE:
        raise RequestError(
            f"Assignment {assignment.id} has not been submitted (it is {assignment.status}).",
            "AWS.MechanicalTurk.InvalidAssignmentState",
        )
    bonus = BonusPayment(
        requester_id=requester_id,
        worker_id=worker_id,
        assignment_id=assignment.id,
        hit_id=assignment.hit_id,
        amount=value,
        reason=reason,
        unique_request_token=token,
        granted_at=utcnow(),
    )
    session.add(bonus)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent call with the same token won the race
        raise already_processed(str(token)) from exc
    ledger.pay(
        session,
        txn=f"bonus:{bonus.id}",
        kind="bonus",
        requester_id=requester_id,
        worker_id=worker_id,
        amount=value,
        max_assignments=1,  # bonuses carry the plain 20% fee
        reference=assignment.id,
    )
    session.add(
        WorkerMessage(
            requester_id=requester_id,
            worker_id=worker_id,
            subject=f"You received a bonus of ${value}",
            message=reason,
            sent_at=bonus.granted_at,
        )
    )
    session.flush()
    return bonus


def bonus_payments(
    session: Session,
    requester_id: str,
    *,
    hit_id: Any = None,
    assignment_id: Any = None,
    offset: int = 0,
    limit: int = 100,
) -> list[BonusPayment]:
    """Bonuses paid on a HIT or an assignment (exactly one of them must be given)."""
    if (hit_id is None) == (assignment_id is None):
        raise invalid("Give exactly one of HITId and AssignmentId.")
    stmt = select(BonusPayment).where(BonusPayment.requester_id == requester_id)
    if hit_id is not None:
        hit = session.get(HIT, hit_id) if isinstance(hit_id, str) else None
        if hit is None or hit.requester_id != requester_id:
            raise not_found("HIT", str(hit_id))
        stmt = stmt.where(BonusPayment.hit_id == hit_id)
    else:
        assignment = session.get(Assignment, assignment_id) if isinstance(assignment_id, str) else None
        if assignment is None or assignment.hit.requester_id != requester_id:
            raise not_found("Assignment", str(assignment_id))
        stmt = stmt.where(BonusPayment.assignment_id == assignment_id)
    stmt = stmt.order_by(BonusPayment.granted_at, BonusPayment.id).offset(offset).limit(limit)
    return list(session.scalars(stmt))


def block(session: Session, requester_id: str, worker_id: Any, reason: Any) -> WorkerBlock:
    """Block a worker from this requester's HITs; blocking again updates the reason."""
    worker_id = v.text(worker_id, "WorkerId", 64, required=True)
    reason = v.text(reason, "Reason", 4096, required=True)
    existing = session.scalar(
        select(WorkerBlock).where(
            WorkerBlock.requester_id == requester_id, WorkerBlock.worker_id == worker_id
        )
    )
    if existing is not None:
        existing.reason = reason
        session.flush()
        return existing
    if session.get(Worker, worker_id) is None:
        raise bad_parameter("WorkerId", worker_id)  # MTurk's answer for a worker it does not know
    row = WorkerBlock(requester_id=requester_id, worker_id=worker_id, reason=reason, created_at=utcnow())
    session.add(row)
    session.flush()
    return row


def unblock(session: Session, requester_id: str, worker_id: Any) -> None:
    """Lift a block; lifting a block that does not exist is not an error (as on MTurk)."""
    worker_id = v.text(worker_id, "WorkerId", 64, required=True)
    existing = session.scalar(
        select(WorkerBlock).where(
            WorkerBlock.requester_id == requester_id, WorkerBlock.worker_id == worker_id
        )
    )
    if existing is not None:
        session.delete(existing)
        session.flush()


def blocks(session: Session, requester_id: str, offset: int, limit: int) -> list[WorkerBlock]:
    stmt = (
        select(WorkerBlock)
        .where(WorkerBlock.requester_id == requester_id)
        .order_by(WorkerBlock.created_at, WorkerBlock.id)
        .offset(offset)
        .limit(limit)
    )
    return list(session.scalars(stmt))


def blocked(requester_id: ColumnExpressionArgument[str], worker_id: ColumnExpressionArgument[str]) -> Exists:
    """Whether the requester has blocked the worker, as an SQL ``EXISTS``.

    Built from the enclosing query's columns so an accept asks it in the query that
    reads the HIT or its type, instead of in a statement of its own.
    """
    return (
        select(WorkerBlock.id)
        .where(WorkerBlock.requester_id == requester_id, WorkerBlock.worker_id == worker_id)
        .exists()
    )


@dataclass(frozen=True)
class NotifyFailure:
    worker_id: str
    code: str  # SoftFailure or HardFailure
    message: str


def notify_workers(
    session: Session, requester_id: str, subject: Any, message: Any, worker_ids: Any
) -> list[NotifyFailure]:
    """Put a message in each worker's inbox; report the workers it could not reach."""
    subject = v.text(subject, "Subject", MAX_SUBJECT, required=True)
    message = v.text(message, "MessageText", MAX_MESSAGE, required=True)
    if not isinstance(worker_ids, list) or not worker_ids:
        raise invalid("WorkerIds must list at least one worker.")
    if len(worker_ids) > MAX_NOTIFY_WORKERS:
        raise invalid(f"WorkerIds may list at most {MAX_NOTIFY_WORKERS} workers; got {len(worker_ids)}.")
    failures: list[NotifyFailure] = []
    now = utcnow()
    for worker_id in dict.fromkeys(worker_ids):  # each worker once, in order
        if not isinstance(worker_id, str) or session.get(Worker, worker_id) is None:
            failures.append(
                NotifyFailure(str(worker_id), "HardFailure", f"Worker {worker_id} does not exist.")
            )
            continue
        if not has_worked_for(session, requester_id, worker_id):
            failures.append(
                NotifyFailure(
                    worker_id,
                    "HardFailure",
                    "Cannot send notification because the worker has not worked for you.",
                )
            )
            continue
        session.add(
            WorkerMessage(
                requester_id=requester_id, worker_id=worker_id, subject=subject, message=message, sent_at=now
            )
        )
    session.flush()
    return failures


def inbox(session: Session, worker_id: str, limit: int = 50) -> list[WorkerMessage]:
    """A worker's messages, newest first (for the worker site)."""
    stmt = (
        select(WorkerMessage)
        .where(WorkerMessage.worker_id == worker_id)
        .order_by(WorkerMessage.sent_at.desc(), WorkerMessage.id.desc())
        .limit(limit)
    )
    return list(session.scalars(stmt))


def total_bonuses(session: Session, requester_id: str, worker_id: str) -> Decimal:
    """What a requester paid a worker in bonuses (fees excluded)."""
    rows = session.scalars(
        select(BonusPayment.amount).where(
            BonusPayment.requester_id == requester_id, BonusPayment.worker_id == worker_id
        )
    )
    return sum(rows, Decimal("0.00"))
