"""Creating, finding and listing HITs, keeping their status current, and carrying out review policies.

Marketplace side, product.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import cache, partial
from typing import Any

from sqlalchemy import Insert, Select, bindparam, func, insert, literal, select, tuple_
from sqlalchemy.orm import Session

from hits.db import UTCDateTime, as_loaded, utcnow
from hits.market import decisions, events, ledger, qualification_ops, review_policies
from hits.market import validation as v
from hits.market.errors import RequestError, not_found
from hits.market.ids import new_entity_id
from hits.market.models import HIT, AccountBalance, Assignment, HITType, NotificationSetting
from hits.market.models.work import (
    ACCEPTED,
    APPROVED,
    ASSIGNABLE,
    DISPOSED,
    OPEN_ASSIGNMENT_STATUSES,
    REJECTED,
    REVIEWABLE,
    REVIEWING,
    UNASSIGNABLE,
)
from hits.market.questions import parse_question
from hits.money import mturk_fee

UNIQUE_TOKEN_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class HITTypeSpec:
    """The validated properties that define a HIT type."""

    title: str
    description: str
    keywords: str
    reward: Decimal
    assignment_duration_seconds: int
    auto_approval_delay_seconds: int
    qualification_requirements: list[dict[str, Any]]


def hit_type_spec(params: dict[str, Any]) -> HITTypeSpec:
    """Validate the HIT-type members of a CreateHIT / CreateHITType request."""
    return HITTypeSpec(
        title=v.text(params.get("Title"), "Title", 128, required=True),
        description=v.text(params.get("Description"), "Description", 2000, required=True),
        keywords=v.text(params.get("Keywords"), "Keywords", 1000),
        reward=v.money(params.get("Reward"), "Reward"),
        assignment_duration_seconds=v.seconds(
            params.get("AssignmentDurationInSeconds"),
            "AssignmentDurationInSeconds",
            v.MIN_DURATION,
            v.MAX_DURATION,
        ),
        auto_approval_delay_seconds=v.seconds(
            params.get("AutoApprovalDelayInSeconds", v.MAX_AUTO_APPROVAL_DELAY),
            "AutoApprovalDelayInSeconds",
            0,
            v.MAX_AUTO_APPROVAL_DELAY,
        ),
        qualification_requirements=v.qualification_requirements(params.get("QualificationRequirements")),
    )


@cache
def _same_hit_type() -> Select[HITType, NotificationSetting, Decimal | None]:
    # Built once: composing this seven-column comparison took longer than
    # running it, on every CreateHIT. Each type comes with its notification
    # setting, if any, and the requester's balance: recording the HITCreated
    # event and checking the funds then need no query of their own.
    return (
        select(HITType, NotificationSetting, _balance_row().scalar_subquery())
        .outerjoin(NotificationSetting, NotificationSetting.hit_type_id == HITType.id)
        .where(
            HITType.requester_id == bindparam("requester_id"),
            HITType.title == bindparam("title"),
            HITType.description == bindparam("description"),
            HITType.keywords == bindparam("keywords"),
            HITType.reward == bindparam("reward"),
            HITType.assignment_duration_seconds == bindparam("assignment_duration_seconds"),
            HITType.auto_approval_delay_seconds == bindparam("auto_approval_delay_seconds"),
        )
    )


def find_or_create_hit_type(session: Session, requester_id: str, spec: HITTypeSpec) -> HITType:
    """HITs with identical properties share a HIT type, as on MTurk.

    The requirements' qualification types must exist (and be Active) whether
    the type is new or not: one may have been disposed of since.
    """
    qualification_ops.check_requirement_types(session, spec.qualification_requirements)
    existing = session.execute(
        _same_hit_type(),
        {
            "requester_id": requester_id,
            "title": spec.title,
            "description": spec.description,
            "keywords": spec.keywords,
            "reward": spec.reward,
            "assignment_duration_seconds": spec.assignment_duration_seconds,
            "auto_approval_delay_seconds": spec.auto_approval_delay_seconds,
            "account": ledger.requester_account(requester_id),
        },
    ).all()
    for hit_type, setting, balance in existing:
        if hit_type.qualification_requirements == spec.qualification_requirements:
            if setting is None:
                events.note_no_setting(session, hit_type.id)
            _note_balance(session, requester_id, balance)
            return hit_type
    hit_type = HITType(
        id=new_entity_id(),
        requester_id=requester_id,
        title=spec.title,
        description=spec.description,
        keywords=spec.keywords,
        reward=spec.reward,
        assignment_duration_seconds=spec.assignment_duration_seconds,
        auto_approval_delay_seconds=spec.auto_approval_delay_seconds,
        qualification_requirements=spec.qualification_requirements,
    )
    session.add(hit_type)
    session.flush()
    events.note_no_setting(session, hit_type.id)  # a type nobody else knows yet has none
    return hit_type


@dataclass(frozen=True)
class HITSpec:
    """The validated members of a CreateHIT request that belong to the HIT itself."""

    question: str
    lifetime_seconds: int
    max_assignments: int
    annotation: str | None
    unique_request_token: str | None
    assignment_policy: dict[str, Any] | None
    hit_policy: dict[str, Any] | None
    #: The HITLayoutId the question was made from (see :mod:`hits.market.layouts`), if any.
    hit_layout_id: str | None = None


@cache
def _insert_hit() -> Insert:
    return insert(HIT.__table__)  # type: ignore[arg-type]


def hit_spec(params: dict[str, Any]) -> HITSpec:
    """Validate the HIT members of a CreateHIT / CreateHITWithHITType request (no database needed).

    Done before the call's first query: on SQLite, whose writers take turns,
    parsing the question inside the unit of work would hold the others up.
    """
    question = params.get("Question")
    if not isinstance(question, str) or not question.strip():
        raise RequestError("Question is required.", "AWS.MechanicalTurk.InvalidParameterValue")
    parse_question(question)
    lifetime = v.seconds(params.get("LifetimeInSeconds"), "LifetimeInSeconds", v.MIN_DURATION, v.MAX_DURATION)
    max_assignments = params.get("MaxAssignments", 1)
    if not isinstance(max_assignments, int) or not 1 <= max_assignments <= 1_000_000_000:
        raise RequestError("MaxAssignments must be a positive integer.")
    annotation = v.text(params.get("RequesterAnnotation"), "RequesterAnnotation", 255) or None
    token = params.get("UniqueRequestToken")
    if token is not None:
        v.text(token, "UniqueRequestToken", 64, required=True)
    assignment_policy, hit_policy = review_policies.validate_policies(params)
    return HITSpec(question, lifetime, max_assignments, annotation, token, assignment_policy, hit_policy)


def hit_cost(reward: Decimal, max_assignments: int) -> Decimal:
    """What a HIT costs when all its assignments are approved: rewards plus MTurk's fee on each."""
    return max_assignments * (reward + mturk_fee(reward, max_assignments=max_assignments))


@cache
def _balance_row() -> Select[Decimal]:
    # Built once: CreateHIT is a hot path, and composing a query costs about what running it does.
    return select(AccountBalance.balance).where(AccountBalance.account == bindparam("account"))


#: ``session.info`` key: (transaction, {requester id: balance read in it}).
_BALANCES = "hitforge_balances_read"


def _note_balance(session: Session, requester_id: str, balance: Decimal | None) -> None:
    """Remember for this transaction the balance a query read along with something else."""
    transaction = session.get_transaction()
    if transaction is None:
        return
    known = session.info.get(_BALANCES)
    if known is None or known[0] is not transaction:
        known = session.info[_BALANCES] = (transaction, dict[str, Decimal | None]())
    known[1][requester_id] = balance


def _balance_of(session: Session, requester_id: str) -> Decimal | None:
    """The requester's kept balance: as read earlier in this transaction, else one query."""
    known = session.info.get(_BALANCES)
    if known is not None and known[0] is session.get_transaction() and requester_id in known[1]:
        balance: Decimal | None = known[1][requester_id]
        return balance
    return session.connection().scalar(_balance_row(), {"account": ledger.requester_account(requester_id)})


def check_funds(
    session: Session, requester_id: str, reward: Decimal, max_assignments: int, *, adding: int | None = None
) -> None:
    """Refuse with ``AWS.MechanicalTurk.InsufficientFunds`` a HIT the balance does not cover, as MTurk does.

    ``adding``: only that many assignments are new (CreateAdditionalAssignmentsForHIT),
    of a HIT that will then have ``max_assignments`` (which sets the fee's rate).
    The requester's kept balance row (see :mod:`hits.market.ledger`), read
    with the HIT type when CreateHIT found an existing one (no round trip of
    its own), not locked: nothing is set aside, and each payment checks the
    funds again when it is made.
    """
    count = max_assignments if adding is None else adding
    cost = count * (reward + mturk_fee(reward, max_assignments=max_assignments))  # hit_cost() when not adding
    if cost <= 0:
        return
    row = _balance_of(session, requester_id)
    available = Decimal(row or 0).quantize(Decimal("0.01"))  # no row: never paid in
    if cost > available:
        what = "the HIT costs" if adding is None else "the additional assignments cost"
        raise RequestError(
            f"This Requester has insufficient funds in their account to complete this transaction: "
            f"{what} {cost} ({count} x {reward} plus fees), the balance is {available}.",
            "AWS.MechanicalTurk.InsufficientFunds",
        )


def create_hit(session: Session, requester_id: str, hit_type: HITType, spec: HITSpec) -> HIT:
    """Create a HIT of ``hit_type`` from a validated :class:`HITSpec`, if the balance covers its cost."""
    token = spec.unique_request_token
    if token is not None:
        previous = session.scalar(
            select(HIT).where(HIT.requester_id == requester_id, HIT.unique_request_token == token)
        )
        if previous is not None:
            # Within 24 h MTurk refuses; later, a token may be reused, so free it.
            if utcnow() - previous.created_at < UNIQUE_TOKEN_WINDOW:
                raise RequestError(
                    f"The HIT with ID {previous.id} already exists. (UniqueRequestToken {token})",
                    "AWS.MechanicalTurk.HitAlreadyExists",
                )
            previous.unique_request_token = None
            session.flush()
    check_funds(session, requester_id, hit_type.reward, spec.max_assignments)
    now = utcnow()
    row = {
        "id": new_entity_id(),
        "hit_type_id": hit_type.id,
        "requester_id": requester_id,
        "question": spec.question,
        "max_assignments": spec.max_assignments,
        "status": ASSIGNABLE,
        "review_status": "NotReviewed",
        "requester_annotation": spec.annotation,
        "unique_request_token": token,
        "hit_layout_id": spec.hit_layout_id,
        "created_at": now,
        "expires_at": now + timedelta(seconds=spec.lifetime_seconds),
    }
    # A plain INSERT, then the object joins the session as if loaded: the
    # unit of work's flush of one new object cost more than the statement.
    session.connection().execute(_insert_hit(), row)
    hit = as_loaded(session, HIT, {**row, "hit_type": hit_type})
    review_policies.attach(session, hit, spec.assignment_policy, spec.hit_policy)
    events.record(session, hit, "HITCreated")
    return hit


def get_hit(
    session: Session, hit_id: Any, requester_id: str | None = None, *, for_update: bool = False
) -> HIT:
    """The HIT ``hit_id``; a requester sees only its own.

    ``for_update``: lock its row until commit (PostgreSQL; SQLite has one
    writer at a time) and read it fresh, for a change that depends on what
    it holds: two at once (two extensions, a delete and an extension) then
    take turns instead of one overwriting the other.
    """
    if not isinstance(hit_id, str):
        hit = None
    elif for_update:
        hit = session.scalar(
            select(HIT)
            .where(HIT.id == hit_id)
            .with_for_update(of=HIT)
            .execution_options(populate_existing=True)
        )
    else:
        hit = session.get(HIT, hit_id)
    if hit is None or (requester_id is not None and hit.requester_id != requester_id):
        raise not_found("HIT", str(hit_id))
    return hit


@cache
def _hit_owner() -> Select[str]:
    return select(HIT.requester_id).where(HIT.id == bindparam("hit_id"))


def check_own_hit(session: Session, hit_id: Any, requester_id: str) -> str:
    """``hit_id`` if it names one of ``requester_id``'s HITs, else HITDoesNotExist.

    For calls that need only the id: one indexed column, where loading the
    HIT would bring its question and HIT type along. Read through Core, so
    changes still pending in the session are not flushed first (the HIT's
    owner never changes).
    """
    owner = session.connection().scalar(_hit_owner(), {"hit_id": hit_id}) if isinstance(hit_id, str) else None
    if owner is None or owner != requester_id:
        raise not_found("HIT", str(hit_id))
    return str(hit_id)


@cache
def _slot_counts() -> Select[str, int]:
    # Built once and bound per call: approving, rejecting and GetHIT all count.
    return (
        select(Assignment.status, func.count())
        .where(Assignment.hit_id == bindparam("hit_id"))
        .group_by(Assignment.status)
    )


def slot_counts(session: Session, hit_id: str) -> dict[str, int]:
    """How many of a HIT's assignments are in each status."""
    rows = session.execute(_slot_counts(), {"hit_id": hit_id}).all()
    return {status: count for status, count in rows}


def slot_counts_of(session: Session, hit_ids: list[str]) -> dict[str, dict[str, int]]:
    """:func:`slot_counts` of several HITs in one query (a HIT without assignments maps to ``{}``)."""
    counts: dict[str, dict[str, int]] = {hit_id: {} for hit_id in hit_ids}
    if hit_ids:
        rows = session.execute(
            select(Assignment.hit_id, Assignment.status, func.count())
            .where(Assignment.hit_id.in_(hit_ids))
            .group_by(Assignment.hit_id, Assignment.status)
        )
        for hit_id, status, count in rows:
            counts[hit_id][status] = count
    return counts


def refresh_status(
    session: Session, hit: HIT, now: datetime | None = None, counts: dict[str, int] | None = None
) -> HIT:
    """Recompute a HIT's status from its assignments and clock (Reviewing/Disposed stick).

    ``counts``: the HIT's :func:`slot_counts`, when the caller has them already.
    """
    if hit.status in (REVIEWING, DISPOSED):
        return hit
    before = hit.status
    now = now or utcnow()
    counts = slot_counts(session, hit.id) if counts is None else counts
    taken = sum(counts.get(s, 0) for s in OPEN_ASSIGNMENT_STATUSES)
    in_progress = counts.get(ACCEPTED, 0)
    if now < hit.expires_at and taken < hit.max_assignments:
        hit.status = ASSIGNABLE
    elif in_progress:
        hit.status = UNASSIGNABLE
    else:
        hit.status = REVIEWABLE
    if hit.status == REVIEWABLE and before != REVIEWABLE:
        events.record(session, hit, "HITReviewable")
        carry_out_policy_actions(session, hit, review_policies.on_reviewable(session, hit))
    return hit


def carry_out_policy_actions(session: Session, hit: HIT, actions: list[review_policies.PolicyAction]) -> None:
    """Carry out what a review policy decided about ``hit`` and its work, each step recorded.

    An approval pays as ApproveAssignment does; a step that fails (e.g. the
    requester's balance is short) is recorded as failed and changes nothing.
    """
    for action in actions:
        review_policies.record_action(session, hit, action, partial(_carry_out, session, hit, action))


def _carry_out(session: Session, hit: HIT, action: review_policies.PolicyAction) -> str:
    if action.name == "extend":
        hit.max_assignments, hit.expires_at = review_policies.extension(hit, action.params, utcnow())
        session.flush()
        refresh_status(session, hit)  # open again: Assignable, so no policy runs from here
        events.record(session, hit, "HITExtended")  # as CreateAdditionalAssignmentsForHIT does
        return f"extended to {hit.max_assignments} assignments"
    if action.target is None:
        raise ValueError(f"a policy's {action.name} needs an assignment")
    if action.name == "approve":
        decisions.approve(session, hit.requester_id, action.target.id, action.reason)
        return "approved"
    decisions.reject(session, hit.requester_id, action.target.id, action.reason or "")
    return "rejected"


def counts_for_wire(session: Session, hit: HIT, counts: dict[str, int] | None = None) -> dict[str, int]:
    """NumberOfAssignmentsPending / Available / Completed, as GetHIT reports them."""
    counts = slot_counts(session, hit.id) if counts is None else counts
    # MTurk counts only accepted, not yet submitted, work as pending.
    pending = counts.get(ACCEPTED, 0)
    completed = counts.get(APPROVED, 0) + counts.get(REJECTED, 0)
    taken = sum(counts.get(s, 0) for s in OPEN_ASSIGNMENT_STATUSES)
    expired = utcnow() >= hit.expires_at
    available = 0 if expired else max(0, hit.max_assignments - taken)
    return {
        "NumberOfAssignmentsPending": pending,
        "NumberOfAssignmentsAvailable": available,
        "NumberOfAssignmentsCompleted": completed,
    }


def page_of_hits(
    session: Session,
    requester_id: str,
    after: tuple[datetime, str] | None,
    limit: int,
    status: str | None = None,
    hit_type_id: str | None = None,
) -> list[HIT]:
    """One page of a requester's HITs (not disposed), oldest first, starting after the key ``after``.

    ``after`` is the (creation time, id) of the last HIT of the page before.
    """
    stmt = select(HIT).where(HIT.requester_id == requester_id)
    stmt = stmt.where(HIT.status == status) if status is not None else stmt.where(HIT.status != DISPOSED)
    if hit_type_id is not None:
        stmt = stmt.where(HIT.hit_type_id == hit_type_id)
    if after is not None:
        stmt = stmt.where(tuple_(HIT.created_at, HIT.id) > tuple_(literal(after[0], UTCDateTime()), after[1]))
    return list(session.scalars(stmt.order_by(HIT.created_at, HIT.id).limit(limit)))
