"""Qualification types, grants, and checking a worker against requirements."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, inspect, select
from sqlalchemy.orm import Session

from hits.market import validation as v
from hits.market.errors import RequestError, bad_parameter, not_found
from hits.market.ids import new_entity_id
from hits.market.models import Assignment, QualificationType, Worker, WorkerQualification
from hits.market.models.work import APPROVED, REJECTED
from hits.wire.xml_schemas import SchemaViolation, check_test_documents

# System qualification type ids, as MTurk publishes them.
LOCALE = "00000000000000000071"
PERCENT_APPROVED = "000000000000000000L0"
NUMBER_APPROVED = "00000000000000000040"
ADULT = "00000000000000000060"
MASTERS = {"2F1QJWKUDD8XADTFD2Q0G6UTO95ALH", "2ARFPLSP75KLA8M8DH1HTEQVJT3SY6"}
SYSTEM_QUALIFICATIONS = {LOCALE, PERCENT_APPROVED, NUMBER_APPROVED, ADULT, *MASTERS}
SYSTEM_TYPES_CREATED = datetime(2026, 1, 1, tzinfo=UTC)
#: Names and descriptions GetQualificationType reports for the system types (hitforge's wording).
SYSTEM_TYPE_TEXT = {
    LOCALE: ("Worker_Locale", "The country (and subdivision) in the worker's profile."),
    PERCENT_APPROVED: ("Worker_PercentAssignmentsApproved", "Share of the worker's decided work approved."),
    NUMBER_APPROVED: ("Worker_NumberHITsApproved", "How many of the worker's assignments were approved."),
    ADULT: ("Worker_Adult", "Whether the worker has said they are an adult."),
    **{m: ("Masters", "Workers with a record of consistently accepted work.") for m in MASTERS},
}


def create_type(session: Session, requester_id: str, params: dict[str, Any]) -> QualificationType:
    """Create a qualification type; names are unique per requester."""
    name = v.text(params.get("Name"), "Name", 256, required=True)
    description = v.text(params.get("Description"), "Description", 2000, required=True)
    status = params.get("QualificationTypeStatus")
    if status not in ("Active", "Inactive"):
        raise v.invalid("QualificationTypeStatus must be Active or Inactive.")
    test, answer_key = params.get("Test"), params.get("AnswerKey")
    if answer_key is not None and test is None:
        raise v.invalid("AnswerKey requires a Test.")
    try:
        check_test_documents(params.get("Test"), params.get("AnswerKey"))
    except SchemaViolation as exc:
        raise v.invalid(f"There was an error parsing the XML question or answer data: {exc}.") from exc
    if test is not None and params.get("AutoGranted"):
        raise v.invalid("A qualification type with a Test cannot be AutoGranted.")
    duration = v.optional_seconds(params.get("TestDurationInSeconds"), "TestDurationInSeconds")
    if test is not None and duration is None:
        raise v.invalid("TestDurationInSeconds is required with a Test.")
    auto_granted_value = params.get("AutoGrantedValue")
    if auto_granted_value is not None:
        v.integer(auto_granted_value, "AutoGrantedValue")
    retry_delay = v.optional_seconds(params.get("RetryDelayInSeconds"), "RetryDelayInSeconds")
    keywords = v.text(params.get("Keywords"), "Keywords", 1000)
    if session.scalar(
        select(QualificationType).where(
            QualificationType.requester_id == requester_id, QualificationType.name == name
        )
    ):
        raise RequestError(
            "You have already created a QualificationType with this name.",
            "AWS.MechanicalTurk.QualificationTypeAlreadyExists",
        )
    qtype = QualificationType(
        id=new_entity_id(),
        requester_id=requester_id,
        name=name,
        description=description,
        keywords=keywords,
        status=status,
        test=test,
        answer_key=answer_key,
        test_duration_seconds=duration,
        retry_delay_seconds=retry_delay,
        auto_granted=bool(params.get("AutoGranted", False)),
        auto_granted_value=auto_granted_value,
    )
    session.add(qtype)
    session.flush()
    return qtype


def check_requirement_types(session: Session, requirements: list[dict[str, Any]]) -> None:
    """Refuse requirements on a qualification type that is neither a system one nor an existing Active one.

    Any requester's type may guard a HIT, as on MTurk. One query, and only
    when a requirement names a type that is not a system one.
    """
    wanted = {req["QualificationTypeId"] for req in requirements} - SYSTEM_QUALIFICATIONS
    if not wanted:
        return
    found = set(
        session.scalars(
            select(QualificationType.id).where(
                QualificationType.id.in_(wanted), QualificationType.status == "Active"
            )
        )
    )
    missing = sorted(wanted - found)
    if missing:
        raise not_found("QualificationType", missing[0])


def _system_type(qtype_id: str) -> QualificationType:
    name, description = SYSTEM_TYPE_TEXT[qtype_id]
    return QualificationType(
        id=qtype_id,
        requester_id=None,
        name=name,
        description=description,
        keywords="",
        status="Active",
        auto_granted=False,
        created_at=SYSTEM_TYPES_CREATED,
    )


def get_type(session: Session, qtype_id: Any) -> QualificationType:
    """A qualification type by id; the system types are described though they are not stored."""
    if qtype_id in SYSTEM_TYPE_TEXT:
        return _system_type(qtype_id)
    qtype = session.get(QualificationType, qtype_id) if isinstance(qtype_id, str) else None
    if qtype is None:
        raise not_found("QualificationType", str(qtype_id))
    return qtype


def as_seen_by(qtype: QualificationType, requester_id: str) -> QualificationType:
    """``qtype`` as ``requester_id`` may see it: only its owner sees its AnswerKey.

    Another requester gets a copy outside the session without it (the stored
    type is left as it is); the Test itself is public, as workers take it.
    """
    if qtype.answer_key is None or qtype.requester_id == requester_id:
        return qtype
    values = {column.key: getattr(qtype, column.key) for column in inspect(QualificationType).column_attrs}
    return QualificationType(**{**values, "answer_key": None})


def associate(
    session: Session, requester_id: str, qtype_id: str, worker_id: str, value: int | None
) -> WorkerQualification:
    """Grant (or update) a worker's qualification with an integer score."""
    qtype = get_type(session, qtype_id)
    if qtype.requester_id != requester_id:
        raise not_found("QualificationType", qtype_id)
    if session.get(Worker, worker_id) is None:
        # MTurk's answer to a well-formed worker id it does not know, as for SendBonus and
        # CreateWorkerBlock (aws/aws-sdk-ruby#2051: this operation, a validation error).
        raise bad_parameter("WorkerId", worker_id)
    return _set_grant(session, qtype_id, worker_id, 1 if value is None else value)


def _check_worker(session: Session, worker_id: str) -> None:
    if session.get(Worker, worker_id) is None:
        raise RequestError(f"Worker {worker_id} does not exist.", "AWS.MechanicalTurk.WorkerDoesNotExist")


def _set_grant(session: Session, qtype_id: str, worker_id: str, value: int) -> WorkerQualification:
    """Grant ``qtype_id`` to ``worker_id`` with ``value``, or update their grant (even a revoked one)."""
    grant = session.scalar(
        select(WorkerQualification).where(
            WorkerQualification.qualification_type_id == qtype_id,
            WorkerQualification.worker_id == worker_id,
        )
    )
    if grant is None:
        grant = WorkerQualification(qualification_type_id=qtype_id, worker_id=worker_id)
        session.add(grant)
    grant.integer_value = value
    grant.status = "Granted"
    session.flush()
    return grant


def _system_type_row(session: Session, qtype_id: str) -> None:
    """Store system type ``qtype_id`` (as :func:`get_type` describes it) so that grants can refer to it."""
    if session.get(QualificationType, qtype_id) is None:
        session.add(_system_type(qtype_id))
        session.flush()


def grant_masters(session: Session, worker_id: str) -> list[WorkerQualification]:
    """Grant ``worker_id`` Masters, under both its production and its sandbox id (the operator's call).

    Nobody else may grant it: to a requester the type is not theirs.
    """
    _check_worker(session, worker_id)
    granted = []
    for qtype_id in sorted(MASTERS):
        _system_type_row(session, qtype_id)
        granted.append(_set_grant(session, qtype_id, worker_id, 1))
    return granted


def revoke_masters(session: Session, worker_id: str) -> int:
    """Take Masters back from ``worker_id`` (the grants stay, Revoked); how many grants were revoked."""
    grants = session.scalars(
        select(WorkerQualification).where(
            WorkerQualification.qualification_type_id.in_(MASTERS),
            WorkerQualification.worker_id == worker_id,
            WorkerQualification.status == "Granted",
        )
    ).all()
    for grant in grants:
        grant.status = "Revoked"
    session.flush()
    return len(grants)


def approval_stats(session: Session, worker_id: str) -> tuple[int, int]:
    """(approved, approved + rejected) for a worker, across all requesters."""
    rows = dict(
        session.execute(
            select(Assignment.status, func.count())
            .where(Assignment.worker_id == worker_id, Assignment.status.in_((APPROVED, REJECTED)))
            .group_by(Assignment.status)
        ).all()
    )
    approved = rows.get(APPROVED, 0)
    return approved, approved + rows.get(REJECTED, 0)


def worker_value(session: Session, worker: Worker, qtype_id: str) -> int | dict[str, str] | None:
    """The worker's value for a qualification, system ones computed; None if not held.

    Locale and Adult come from the worker's profile, the approval figures from
    their work; Masters is granted by the marketplace's operator
    (:func:`grant_masters`) and read like any other grant.
    """
    if qtype_id == LOCALE:
        locale = {"Country": worker.country}
        if worker.subdivision:
            locale["Subdivision"] = worker.subdivision
        return locale
    if qtype_id == ADULT:
        return 1 if worker.is_adult else 0
    if qtype_id in (PERCENT_APPROVED, NUMBER_APPROVED):
        approved, decided = approval_stats(session, worker.id)
        if qtype_id == NUMBER_APPROVED:
            return approved
        # MTurk reports 100% until a worker has a track record.
        return 100 if decided == 0 else (100 * approved) // decided
    grant = session.scalar(
        select(WorkerQualification).where(
            WorkerQualification.qualification_type_id == qtype_id,
            WorkerQualification.worker_id == worker.id,
            WorkerQualification.status == "Granted",
        )
    )
    return None if grant is None else grant.integer_value


def _compare(value: Any, comparator: str, ints: list[int], locales: list[dict[str, str]]) -> bool:
    if comparator == "Exists":
        return value is not None
    if comparator == "DoesNotExist":
        return value is None
    if value is None:
        return False
    if isinstance(value, dict):

        def match(loc: dict[str, str]) -> bool:
            return loc.get("Country") == value.get("Country") and (
                "Subdivision" not in loc or loc["Subdivision"] == value.get("Subdivision")
            )

        hit = any(match(loc) for loc in locales)
        return {"EqualTo": hit, "In": hit, "NotEqualTo": not hit, "NotIn": not hit}.get(comparator, False)
    target = ints[0] if ints else 0
    checks = {
        "LessThan": value < target,
        "LessThanOrEqualTo": value <= target,
        "GreaterThan": value > target,
        "GreaterThanOrEqualTo": value >= target,
        "EqualTo": value == target,
        "NotEqualTo": value != target,
        "In": value in ints,
        "NotIn": value not in ints,
    }
    return checks[comparator]


def unmet_requirements(
    session: Session, worker: Worker, requirements: list[dict[str, Any]], action: str
) -> list[dict[str, Any]]:
    """The requirements guarding ``action`` that the worker does not meet."""
    guarded_by = {
        "Accept": {"Accept", "PreviewAndAccept", "DiscoverPreviewAndAccept"},
        "Preview": {"PreviewAndAccept", "DiscoverPreviewAndAccept"},
        "Discover": {"DiscoverPreviewAndAccept"},
    }[action]
    failed = []
    for req in requirements:
        if req.get("ActionsGuarded", "Accept") not in guarded_by:
            continue
        value = worker_value(session, worker, req["QualificationTypeId"])
        if not _compare(
            value, req["Comparator"], req.get("IntegerValues") or [], req.get("LocaleValues") or []
        ):
            failed.append(req)
    return failed


def check_requirements(
    session: Session, worker: Worker, requirements: list[dict[str, Any]], action: str
) -> None:
    """Refuse with ``AWS.MechanicalTurk.QualificationRequirementNotMet`` if any is unmet."""
    if unmet_requirements(session, worker, requirements, action):
        raise RequestError(
            "You do not meet the qualification requirements of this HIT.",
            "AWS.MechanicalTurk.QualificationRequirementNotMet",
        )
