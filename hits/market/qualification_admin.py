"""Managing qualification types and grants after creation, and qualification requests."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select, delete, literal, or_, select, tuple_
from sqlalchemy.orm import Session

from hits.db import UTCDateTime, utcnow
from hits.market import validation as v
from hits.market.errors import RequestError, invalid, not_found
from hits.market.ids import new_entity_id
from hits.market.models import (
    QualificationRequest,
    QualificationType,
    Worker,
    WorkerMessage,
    WorkerQualification,
)
from hits.market.models.requests import DENIED, GRANTED, PENDING
from hits.market.qualification_ops import associate, get_type
from hits.wire.xml_schemas import SchemaViolation, check_test_documents

REVOKED = "Revoked"
QUALIFICATION_DOES_NOT_EXIST = "AWS.MechanicalTurk.QualificationDoesNotExist"
INVALID_REQUEST_STATE = "AWS.MechanicalTurk.InvalidQualificationRequestState"


def owned_type(session: Session, requester_id: str, qtype_id: Any) -> QualificationType:
    """A qualification type the requester created; others' are reported as missing."""
    qtype = get_type(session, qtype_id)
    if qtype.requester_id != requester_id:
        raise not_found("QualificationType", str(qtype_id))
    return qtype


def _grant(session: Session, qtype_id: str, worker_id: Any) -> WorkerQualification | None:
    if not isinstance(worker_id, str):
        return None
    return session.scalar(
        select(WorkerQualification).where(
            WorkerQualification.qualification_type_id == qtype_id, WorkerQualification.worker_id == worker_id
        )
    )


def disassociate(
    session: Session, requester_id: str, qtype_id: Any, worker_id: Any, reason: Any = None
) -> WorkerQualification:
    """Revoke a worker's qualification (the grant stays, with status Revoked); the reason goes to them."""
    qtype = owned_type(session, requester_id, qtype_id)
    reason = v.text(reason, "Reason", 4096) or None
    grant = _grant(session, qtype.id, worker_id)
    if grant is None or grant.status != GRANTED:
        raise RequestError(
            f"Worker {worker_id} does not hold qualification {qtype.id}.", QUALIFICATION_DOES_NOT_EXIST
        )
    grant.status = REVOKED
    if reason:
        session.add(
            WorkerMessage(
                requester_id=requester_id,
                worker_id=grant.worker_id,
                subject=f"Qualification revoked: {qtype.name}"[:200],
                message=reason,
                sent_at=utcnow(),
            )
        )
    session.flush()
    return grant


def score(session: Session, requester_id: str, qtype_id: Any, worker_id: Any) -> WorkerQualification:
    """GetQualificationScore: a worker's grant of one of the requester's types."""
    qtype = owned_type(session, requester_id, qtype_id)
    grant = _grant(session, qtype.id, worker_id)
    if grant is None:
        raise RequestError("You requested a Qualification that does not exist.", QUALIFICATION_DOES_NOT_EXIST)
    if grant.status != GRANTED:
        # MTurk does not show a revoked qualification; clients match this text to treat the worker
        # as unqualified, so it is MTurk's wording.
        raise RequestError(
            f"This operation can be called with a status of: Granted (the qualification is {grant.status})",
            "AWS.MechanicalTurk.InvalidQualificationState",
        )
    return grant


#: Where a page starts: after this (time, id) of the last row of the page before, or at the first row.
PageKey = tuple[datetime, str] | None


def _after(stmt: Select[Any], time: Any, row_id: Any, after: PageKey) -> Select[Any]:
    """``stmt`` ordered by (``time``, ``row_id``), which never change, from the row after ``after`` on.

    A key, unlike a position, does not shift when rows before it leave the
    list (a request accepted, a qualification revoked as it is read).
    """
    if after is not None:
        stmt = stmt.where(tuple_(time, row_id) > tuple_(literal(after[0], UTCDateTime()), after[1]))
    return stmt.order_by(time, row_id)


def grants(
    session: Session, requester_id: str, qtype_id: Any, status: Any, after: PageKey, limit: int
) -> list[WorkerQualification]:
    """ListWorkersWithQualificationType, optionally by status (Granted or Revoked).

    Ordered by (grant time, worker), unique for a type; ``after`` is the key of
    the page before's last grant.
    """
    qtype = owned_type(session, requester_id, qtype_id)
    if status is not None and status not in (GRANTED, REVOKED):
        raise invalid("Status must be Granted or Revoked.")
    stmt = select(WorkerQualification).where(WorkerQualification.qualification_type_id == qtype.id)
    if status is not None:
        stmt = stmt.where(WorkerQualification.status == status)
    stmt = _after(stmt, WorkerQualification.granted_at, WorkerQualification.worker_id, after)
    return list(session.scalars(stmt.limit(limit)))


def update_type(session: Session, requester_id: str, params: dict[str, Any]) -> QualificationType:
    """UpdateQualificationType: change what MTurk lets change (never the name)."""
    qtype = owned_type(session, requester_id, params.get("QualificationTypeId"))
    if "Description" in params:
        qtype.description = v.text(params["Description"], "Description", 2000, required=True)
    if "QualificationTypeStatus" in params:
        if params["QualificationTypeStatus"] not in ("Active", "Inactive"):
            raise invalid("QualificationTypeStatus must be Active or Inactive.")
        qtype.status = params["QualificationTypeStatus"]
    test = params.get("Test", qtype.test)
    answer_key = params.get("AnswerKey", qtype.answer_key if "Test" not in params else None)
    auto_granted = bool(params.get("AutoGranted", qtype.auto_granted))
    if answer_key is not None and test is None:
        raise invalid("AnswerKey requires a Test.")
    try:
        check_test_documents(params.get("Test"), params.get("AnswerKey"))
    except SchemaViolation as exc:
        raise invalid(f"There was an error parsing the XML question or answer data: {exc}.") from exc
    if test is not None and auto_granted:
        raise invalid("A qualification type with a Test cannot be AutoGranted.")
    duration = v.optional_seconds(params.get("TestDurationInSeconds"), "TestDurationInSeconds")
    if "Test" in params and duration is None and qtype.test_duration_seconds is None:
        raise invalid("TestDurationInSeconds is required with a Test.")
    qtype.test, qtype.answer_key, qtype.auto_granted = test, answer_key, auto_granted
    if duration is not None:
        qtype.test_duration_seconds = duration
    if "RetryDelayInSeconds" in params:
        qtype.retry_delay_seconds = v.optional_seconds(params["RetryDelayInSeconds"], "RetryDelayInSeconds")
    if "AutoGrantedValue" in params:
        qtype.auto_granted_value = v.integer(params["AutoGrantedValue"], "AutoGrantedValue")
    session.flush()
    return qtype


def delete_type(session: Session, requester_id: str, qtype_id: Any) -> None:
    """DeleteQualificationType: the type, its grants and its requests go; the name is free again."""
    qtype = owned_type(session, requester_id, qtype_id)
    session.execute(
        delete(QualificationRequest).where(QualificationRequest.qualification_type_id == qtype.id)
    )
    session.execute(delete(WorkerQualification).where(WorkerQualification.qualification_type_id == qtype.id))
    session.delete(qtype)
    session.flush()


def is_requestable(qtype: QualificationType) -> bool:
    """Whether workers may ask for it: every requester's type may be requested (taking its test,
    being granted automatically, or waiting for the requester); the system's own are assigned."""
    return qtype.requester_id is not None


def search_types(
    session: Session,
    requester_id: str,
    *,
    query: Any,
    must_be_requestable: Any,
    must_be_owned_by_caller: Any,
    offset: int,
    limit: int,
) -> list[QualificationType]:
    """ListQualificationTypes: Active types, optionally only the caller's, matching ``query``."""
    if not isinstance(must_be_requestable, bool):
        raise invalid("MustBeRequestable is required (true or false).")
    stmt = select(QualificationType).where(QualificationType.status == "Active")
    if must_be_owned_by_caller:
        stmt = stmt.where(QualificationType.requester_id == requester_id)
    if query is not None:
        needle = f"%{v.text(query, 'Query', 256)}%"
        stmt = stmt.where(
            or_(
                QualificationType.name.ilike(needle),
                QualificationType.description.ilike(needle),
                QualificationType.keywords.ilike(needle),
            )
        )
    if must_be_requestable:
        stmt = stmt.where(QualificationType.requester_id.is_not(None))  # as is_requestable()
    stmt = stmt.order_by(QualificationType.created_at, QualificationType.id).offset(offset).limit(limit)
    return list(session.scalars(stmt))


def create_request(
    session: Session, worker: Worker, qtype_id: str, answer: str | None = None
) -> QualificationRequest:
    """A worker asks for a qualification (worker side); auto-granted types are granted at once."""
    qtype = get_type(session, qtype_id)
    if qtype.status != "Active" or qtype.requester_id is None or not is_requestable(qtype):
        raise RequestError(
            f"Qualification {qtype.id} cannot be requested.", "AWS.MechanicalTurk.NotRequestable"
        )
    pending = session.scalar(
        select(QualificationRequest).where(
            QualificationRequest.qualification_type_id == qtype.id,
            QualificationRequest.worker_id == worker.id,
            QualificationRequest.status == PENDING,
        )
    )
    if pending is not None:
        return pending
    now = utcnow()
    last = session.scalar(
        select(QualificationRequest)
        .where(
            QualificationRequest.qualification_type_id == qtype.id,
            QualificationRequest.worker_id == worker.id,
        )
        .order_by(QualificationRequest.submitted_at.desc())
        .limit(1)
    )
    if last is not None and last.decided_at is not None:
        if qtype.retry_delay_seconds is None:
            raise RequestError(
                "This qualification cannot be requested again.", "AWS.MechanicalTurk.NotRequestable"
            )
        if (now - last.decided_at).total_seconds() < qtype.retry_delay_seconds:
            raise RequestError(
                "Wait before requesting this qualification again.", "AWS.MechanicalTurk.NotRequestable"
            )
    request = QualificationRequest(
        id=new_entity_id(),
        qualification_type_id=qtype.id,
        worker_id=worker.id,
        test=qtype.test,
        answer=answer,
        status=PENDING,
        submitted_at=now,
    )
    session.add(request)
    session.flush()
    if qtype.auto_granted and qtype.test is None:
        associate(session, qtype.requester_id, qtype.id, worker.id, qtype.auto_granted_value)
        request.status, request.decided_at = GRANTED, now
        session.flush()
    return request


def pending_requests(
    session: Session, requester_id: str, qtype_id: Any, after: PageKey, limit: int
) -> list[QualificationRequest]:
    """ListQualificationRequests: pending requests for the requester's types, oldest first.

    ``after`` is the (submit time, id) of the page before's last request.
    """
    stmt = (
        select(QualificationRequest)
        .join(QualificationType, QualificationType.id == QualificationRequest.qualification_type_id)
        .where(QualificationType.requester_id == requester_id, QualificationRequest.status == PENDING)
    )
    if qtype_id is not None:
        owned_type(session, requester_id, qtype_id)
        stmt = stmt.where(QualificationRequest.qualification_type_id == qtype_id)
    stmt = _after(stmt, QualificationRequest.submitted_at, QualificationRequest.id, after)
    return list(session.scalars(stmt.limit(limit)))


def _pending(session: Session, requester_id: str, request_id: Any) -> QualificationRequest:
    # Locked and read fresh: an accept and a reject sent at once take turns, the second sees the first.
    request = (
        session.scalar(
            select(QualificationRequest)
            .where(QualificationRequest.id == request_id)
            .with_for_update(of=QualificationRequest)
            .execution_options(populate_existing=True)
        )
        if isinstance(request_id, str)
        else None
    )
    qtype = None if request is None else session.get(QualificationType, request.qualification_type_id)
    if request is None or qtype is None or qtype.requester_id != requester_id:
        raise not_found("QualificationRequest", str(request_id))
    if request.status != PENDING:
        raise RequestError(
            f"Qualification request {request.id} was already {request.status.lower()}.", INVALID_REQUEST_STATE
        )
    return request


def accept_request(session: Session, requester_id: str, request_id: Any, value: Any) -> QualificationRequest:
    """AcceptQualificationRequest: grant the qualification (value 1 unless given)."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise invalid("IntegerValue must be an integer.")
    request = _pending(session, requester_id, request_id)
    associate(session, requester_id, request.qualification_type_id, request.worker_id, value)
    request.status, request.decided_at = GRANTED, utcnow()
    session.flush()
    return request


def reject_request(session: Session, requester_id: str, request_id: Any, reason: Any) -> QualificationRequest:
    """RejectQualificationRequest: refuse, with an optional reason for the worker."""
    request = _pending(session, requester_id, request_id)
    request.reason = v.text(reason, "Reason", 4096) or None
    request.status, request.decided_at = DENIED, utcnow()
    session.flush()
    return request
