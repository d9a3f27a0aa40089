"""Qualifications from a worker's side: names, what they hold, and taking tests.

A test is the qualification type's ``Test`` QuestionForm; when the type has an
``AnswerKey`` the answers are scored at once and the score granted as the
qualification's value, as MTurk does; without one the answers wait in a
QualificationRequest for the requester to accept or reject.

The test's clock is a ``QualificationTestAttempt`` row: starting writes it,
starting again while it runs continues the same clock, and answers are taken
only while it runs (TestDurationInSeconds plus a short grace for the submit's
round trip). A start never submitted counts, once its time is up, as a failed
attempt: RetryDelayInSeconds runs from its deadline, and a type without a retry
delay cannot be taken again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from lxml import etree
from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market.errors import RequestError
from hits.market.ids import new_entity_id
from hits.market.models import QualificationRequest, QualificationType, Worker, WorkerQualification
from hits.market.models.qualifications import QualificationTestAttempt
from hits.market.models.requests import GRANTED, PENDING
from hits.market.qualification_admin import create_request
from hits.market.qualification_ops import (
    ADULT,
    LOCALE,
    MASTERS,
    NUMBER_APPROVED,
    PERCENT_APPROVED,
    associate,
)

# No entities, no network: QuestionForms and AnswerKeys come from requesters.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
DEFAULT_TEST_SECONDS = 3600
GRACE_SECONDS = 30

SYSTEM_NAMES = {
    LOCALE: "Worker location",
    PERCENT_APPROVED: "HIT approval rate (%)",
    NUMBER_APPROVED: "Number of HITs approved",
    ADULT: "Adult content allowed",
    **{masters: "Masters" for masters in MASTERS},
}


def qualification_names(session: Session, type_ids: Iterable[str]) -> dict[str, str]:
    """Display names for qualification type ids, system types included."""
    ids = set(type_ids)
    names = {i: SYSTEM_NAMES[i] for i in ids if i in SYSTEM_NAMES}
    rest = ids - names.keys()
    if rest:
        names.update(
            session.execute(
                select(QualificationType.id, QualificationType.name).where(QualificationType.id.in_(rest))
            ).all()
        )
    return names


@dataclass(frozen=True)
class Offer:
    """A requestable qualification type and where this worker stands with it."""

    qtype: QualificationType
    held: WorkerQualification | None
    pending: QualificationRequest | None
    last: QualificationRequest | None  # the latest decided request
    retry_at: datetime | None  # when it may be asked for again (None: now, if allowed at all)
    blocked_reason: str | None  # why it cannot be requested now, in the worker's words
    attempt: QualificationTestAttempt | None = None  # the test this worker is taking now, if any
    abandoned: QualificationTestAttempt | None = None  # the latest start left unsubmitted past its time

    @property
    def has_test(self) -> bool:
        return self.qtype.test is not None

    @property
    def test_seconds(self) -> int:
        return test_seconds(self.qtype)


def test_seconds(qtype: QualificationType) -> int:
    """How long a worker has for ``qtype``'s test once started."""
    return qtype.test_duration_seconds or DEFAULT_TEST_SECONDS


def submit_grace(qtype: QualificationType) -> timedelta:
    """A little grace for the round trip of the final submit, never more than a tenth of the test."""
    return timedelta(seconds=min(GRACE_SECONDS, test_seconds(qtype) // 10))


def _latest_attempt(
    session: Session, worker: Worker, qtype: QualificationType
) -> QualificationTestAttempt | None:
    return session.scalar(
        select(QualificationTestAttempt).where(
            QualificationTestAttempt.qualification_type_id == qtype.id,
            QualificationTestAttempt.worker_id == worker.id,
        )
    )


def requestable_types(session: Session, query: str = "", limit: int = 200) -> list[QualificationType]:
    """Active, requester-defined types: on the worker site every one of them can be asked for.

    A type with a Test is taken; an AutoGranted one is granted on request; any
    other waits for the requester to accept or reject the request.
    """
    stmt = select(QualificationType).where(
        QualificationType.status == "Active",
        QualificationType.requester_id.is_not(None),
    )
    for word in query.split():
        needle = f"%{word}%"
        stmt = stmt.where(
            or_(
                QualificationType.name.ilike(needle),
                QualificationType.description.ilike(needle),
                QualificationType.keywords.ilike(needle),
            )
        )
    return list(session.scalars(stmt.order_by(QualificationType.name, QualificationType.id).limit(limit)))


def offer(session: Session, worker: Worker, qtype: QualificationType) -> Offer:
    """Where ``worker`` stands with ``qtype``: held, pending, or when they may (re)request it."""
    held = session.scalar(
        select(WorkerQualification).where(
            WorkerQualification.qualification_type_id == qtype.id, WorkerQualification.worker_id == worker.id
        )
    )
    requests = session.scalars(
        select(QualificationRequest)
        .where(
            QualificationRequest.qualification_type_id == qtype.id,
            QualificationRequest.worker_id == worker.id,
        )
        .order_by(QualificationRequest.submitted_at.desc())
    ).all()
    pending = next((r for r in requests if r.status == PENDING), None)
    last = next((r for r in requests if r.decided_at is not None), None)
    now = utcnow()
    latest = _latest_attempt(session, worker, qtype) if qtype.test is not None else None
    running = abandoned = None
    if latest is not None and latest.submitted_at is None:
        if now <= latest.deadline + submit_grace(qtype):
            running = latest
        else:
            abandoned = latest
    # The last failed try: a decided request, or a start whose time ran out unsubmitted.
    tried_at = last.decided_at if last is not None else None
    if abandoned is not None and (tried_at is None or abandoned.deadline > tried_at):
        tried_at = abandoned.deadline
    retry_at: datetime | None = None
    reason: str | None = None
    if qtype.status != "Active" or qtype.requester_id is None:
        reason = "This qualification is not open to requests."
    elif pending is not None:
        reason = "Your request is waiting for the requester's decision."
    elif running is not None:
        pass  # the test is under way: the worker may go on with it (same clock)
    elif tried_at is not None:
        if qtype.retry_delay_seconds is None:
            reason = "This qualification cannot be requested again."
        else:
            retry_at = tried_at + timedelta(seconds=qtype.retry_delay_seconds)
            if now < retry_at:
                reason = f"You may try again after {retry_at.strftime('%Y-%m-%d %H:%M:%S UTC')}."
    return Offer(qtype, held, pending, last, retry_at, reason, running, abandoned)


def start_test(session: Session, worker: Worker, qtype: QualificationType) -> QualificationTestAttempt:
    """Start the clock of ``qtype``'s test, or return the attempt already running (the same clock).

    Raises ``RequestError`` (NotRequestable) if the worker may not take the test now.
    """
    if qtype.test is None:
        raise RequestError("This qualification has no test.", "AWS.MechanicalTurk.NotRequestable")
    current = offer(session, worker, qtype)
    if current.attempt is not None:
        return current.attempt
    if current.blocked_reason is not None:
        raise RequestError(current.blocked_reason, "AWS.MechanicalTurk.NotRequestable")
    now = utcnow()
    deadline = now + timedelta(seconds=test_seconds(qtype))
    attempt = _latest_attempt(session, worker, qtype)
    if attempt is not None:
        attempt.started_at, attempt.deadline, attempt.submitted_at = now, deadline, None
        session.flush()
        return attempt
    attempt = QualificationTestAttempt(
        qualification_type_id=qtype.id, worker_id=worker.id, started_at=now, deadline=deadline
    )
    try:
        with session.begin_nested():
            session.add(attempt)
    except IntegrityError:
        # The same worker started it at the same moment elsewhere: that clock is the one.
        raced = _latest_attempt(session, worker, qtype)
        assert raced is not None  # noqa: S101 - the unique row that won
        return raced
    return attempt


def _close_attempt(session: Session, attempt: QualificationTestAttempt | None) -> None:
    """Mark the running test submitted, once; refuse answers without a running test."""
    if attempt is None:
        raise RequestError(
            "The time for this test ran out, or it was not started.", "AWS.MechanicalTurk.NotRequestable"
        )
    closed = session.execute(
        update(QualificationTestAttempt)
        .where(
            QualificationTestAttempt.id == attempt.id,
            QualificationTestAttempt.started_at == attempt.started_at,
            QualificationTestAttempt.submitted_at.is_(None),
        )
        .values(submitted_at=utcnow())
        .execution_options(synchronize_session="fetch")
    )
    if closed.rowcount != 1:  # type: ignore[attr-defined]
        raise RequestError("This test was already submitted.", "AWS.MechanicalTurk.NotRequestable")


def grade(answer_key_xml: str, answers_xml: str) -> int:
    """The qualification value an AnswerKey gives QuestionFormAnswers, computed as MTurk does.

    Per question the first AnswerOption whose SelectionIdentifiers equal the
    worker's selections scores its AnswerScore, else DefaultScore (0). The sum
    goes through the QualificationValueMapping (Percentage, Scale or Range).
    """
    answers = etree.fromstring(answers_xml.encode("utf-8"), _PARSER)
    chosen: dict[str, set[str]] = {}
    for answer in answers:
        if not isinstance(answer.tag, str):
            continue
        qid, values = "", set()
        for part in answer:
            name = _local(part.tag)
            if name == "QuestionIdentifier":
                qid = (part.text or "").strip()
            elif name in ("SelectionIdentifier", "FreeText") and (part.text or "").strip():
                values.add((part.text or "").strip())
        chosen.setdefault(qid, set()).update(values)
    key = etree.fromstring(answer_key_xml.encode("utf-8"), _PARSER)
    total = 0
    mapping: etree._Element | None = None
    for question in key:
        if _local(question.tag) == "QualificationValueMapping":
            mapping = question
            continue
        if _local(question.tag) != "Question":
            continue
        qid = _text(question, "QuestionIdentifier")
        score = int(_text(question, "DefaultScore") or 0)
        for option in _kids(question, "AnswerOption"):
            wanted = {(n.text or "").strip() for n in _kids(option, "SelectionIdentifier")}
            if wanted == chosen.get(qid, set()):
                score = int(_text(option, "AnswerScore") or 0)
                break
        total += score
    return _map(total, mapping)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _kids(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if _local(c.tag) == name]


def _text(el: etree._Element, name: str) -> str:
    found = _kids(el, name)
    return (found[0].text or "").strip() if found else ""


def _map(total: int, mapping: etree._Element | None) -> int:
    if mapping is None:
        return total
    for kind in mapping:
        name = _local(kind.tag)
        if name == "PercentageMapping":
            maximum = int(_text(kind, "MaximumSummedScore") or 0)
            return 100 * total // maximum if maximum else 0
        if name == "ScaleMapping":
            return int(total * float(_text(kind, "SummedScoreMultiplier") or "1"))
        if name == "RangeMapping":
            for bucket in _kids(kind, "SummedScoreRange"):
                if (
                    int(_text(bucket, "InclusiveLowerBound"))
                    <= total
                    <= int(_text(bucket, "InclusiveUpperBound"))
                ):
                    return int(_text(bucket, "QualificationValue"))
            return int(_text(kind, "OutOfRangeQualificationValue") or 0)
    return total


def request_qualification(
    session: Session, worker: Worker, qtype: QualificationType, answer_xml: str | None = None
) -> QualificationRequest:
    """Ask for ``qtype`` (with test answers if it has a test); graded at once if it has an AnswerKey.

    Auto-granted types are granted by ``create_request``; types without an
    AnswerKey leave a pending request for the requester.
    """
    current = offer(session, worker, qtype)
    if current.blocked_reason is not None:
        raise RequestError(current.blocked_reason, "AWS.MechanicalTurk.NotRequestable")
    if qtype.test is not None and answer_xml is None:
        raise RequestError("This qualification needs its test taken.", "AWS.MechanicalTurk.NotRequestable")
    if qtype.test is not None:
        _close_attempt(session, current.attempt)
    if qtype.auto_granted and qtype.test is None and qtype.requester_id is not None:
        # Granted on request, as MTurk does (create_request refuses AutoGranted types).
        now = utcnow()
        granted = QualificationRequest(
            id=new_entity_id(),
            qualification_type_id=qtype.id,
            worker_id=worker.id,
            status=GRANTED,
            submitted_at=now,
            decided_at=now,
        )
        session.add(granted)
        associate(session, qtype.requester_id, qtype.id, worker.id, qtype.auto_granted_value)
        return granted
    request = create_request(session, worker, qtype.id, answer=answer_xml)
    if qtype.answer_key is not None and answer_xml is not None and qtype.requester_id is not None:
        value = grade(qtype.answer_key, answer_xml)
        associate(session, qtype.requester_id, qtype.id, worker.id, value)
        request.status, request.decided_at = GRANTED, utcnow()
        session.flush()
    return request
