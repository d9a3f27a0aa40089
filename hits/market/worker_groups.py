"""HIT groups as a worker finds them: grouped by HIT type, searched, sorted, paginated.

MTurk's ``ActionsGuarded`` decides what a worker who lacks a qualification
sees: ``Accept`` lets them discover and preview the group, ``PreviewAndAccept``
lets them discover it only, and ``DiscoverPreviewAndAccept`` hides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import Select, Subquery, bindparam, func, or_, select
from sqlalchemy.orm import Session, aliased, joinedload

from hits.db import utcnow
from hits.market.models import HIT, Assignment, HITType, Requester, Worker, WorkerBlock
from hits.market.models.work import ACCEPTED, ASSIGNABLE, OPEN_ASSIGNMENT_STATUSES
from hits.market.qualification_ops import unmet_requirements

SORTS = ("newest", "reward", "time", "requester")
PER_PAGE = 20
#: A group's HITs are counted up to one more than this; the list shows "1000+" beyond
#: (counting a million open HITs on every view would cost more than the whole page).
COUNT_CAP = 1000


@dataclass(frozen=True)
class HITGroup:
    """One HIT type with HITs the worker could still take."""

    hit_type: HITType
    requester_name: str
    available: int  # HITs of the group this worker has not worked on (up to COUNT_CAP + 1)
    first_hit_id: str  # the oldest of them: the one its Preview link shows
    newest: datetime
    can_preview: bool
    can_accept: bool
    missing: list[dict[str, Any]] = field(default_factory=list)  # unmet requirements guarding Accept


@dataclass(frozen=True)
class GroupPage:
    """One page of groups, with what the pager needs."""

    groups: list[HITGroup]
    page: int
    pages: int
    total: int


def _search(stmt: Any, query: str, hit_type: Any) -> Any:
    for word in query.split():
        needle = f"%{word}%"
        stmt = stmt.where(
            or_(
                hit_type.title.ilike(needle),
                hit_type.description.ilike(needle),
                hit_type.keywords.ilike(needle),
            )
        )
    return stmt


def _sort_key(sort: str) -> Any:
    if sort == "reward":
        return lambda g: (g.hit_type.reward, g.newest)
    if sort == "time":
        return lambda g: (g.hit_type.assignment_duration_seconds, g.newest)
    if sort == "requester":
        return lambda g: (g.requester_name.casefold(), g.hit_type.title.casefold())
    return lambda g: g.newest


def list_groups(
    session: Session,
    worker: Worker,
    *,
    query: str = "",
    sort: str = "newest",
    descending: bool | None = None,
    page: int = 1,
    per_page: int = PER_PAGE,
) -> GroupPage:
    """The HIT groups ``worker`` may discover, filtered by ``query`` and sorted.

    ``descending`` defaults to what a worker usually wants: newest and best paid
    first, shortest time and requesters A to Z first.

    Two queries, whose cost follows the number of HIT types, not of HITs: for
    each type, whether the worker may take one of its HITs (the oldest); then,
    for the types that have one, the newest and how many are open, up to
    :data:`COUNT_CAP`. Each is a short read of the group's open HITs in
    ``ix_market_hits_group_queue``.
    """
    params = {"worker_id": worker.id, "now": utcnow()}
    stmt = _groups_statement()
    if query.strip():
        stmt = _search(stmt, query.strip()[:200], _listed_type())
    rows = session.execute(stmt, params).all()
    dated = _dates_and_counts(session, [t.id for t, _, _ in rows])
    groups: list[HITGroup] = []
    for found, requester_name, first_hit_id in rows:
        requirements = found.qualification_requirements or []
        if unmet_requirements(session, worker, requirements, "Discover"):
            continue  # DiscoverPreviewAndAccept: invisible to the unqualified
        can_preview = not unmet_requirements(session, worker, requirements, "Preview")
        missing = unmet_requirements(session, worker, requirements, "Accept")
        if found.id not in dated:
            continue
        when, available = dated[found.id]
        groups.append(
            HITGroup(found, requester_name, available, first_hit_id, when, can_preview, not missing, missing)
        )
    sort = sort if sort in SORTS else "newest"
    if descending is None:
        descending = sort in ("newest", "reward")
    total = len(groups)
    pages = max(1, -(-total // per_page))
    page = min(max(1, page), pages)
    groups.sort(key=_sort_key(sort), reverse=descending)
    return GroupPage(groups[(page - 1) * per_page : page * per_page], page, pages, total)


def _open_hits(*columns: Any) -> Select[Any]:
    """The columns of the HITs of the enclosing query's type that the worker may take now."""
    worked = select(Assignment.hit_id).where(
        Assignment.worker_id == bindparam("worker_id"), Assignment.status.in_(OPEN_ASSIGNMENT_STATUSES)
    )
    return select(*columns).where(
        HIT.hit_type_id == HITType.id,
        HIT.status == ASSIGNABLE,
        HIT.expires_at > bindparam("now"),
        HIT.id.not_in(worked),
    )


@cache
def _listed() -> Subquery:
    # Built once and bound per call (composing it cost more than running it).
    blocked_by = select(WorkerBlock.requester_id).where(WorkerBlock.worker_id == bindparam("worker_id"))
    first = _open_hits(HIT.id).order_by(HIT.created_at, HIT.id).limit(1).scalar_subquery()
    return (
        select(HITType, Requester.name, first.label("first"))
        .join(Requester, Requester.id == HITType.requester_id)
        .where(HITType.requester_id.not_in(blocked_by))
        .subquery()
    )


@cache
def _listed_type() -> Any:
    return aliased(HITType, _listed())


@cache
def _groups_statement() -> Select[Any]:
    """Each HIT type with its oldest HIT the worker may take, only those that have one."""
    listed = _listed()
    return select(_listed_type(), listed.c.name, listed.c.first).where(listed.c.first.is_not(None))


@cache
def _dates_and_counts_statement() -> Select[Any]:
    # The group's newest open HIT and its count of them (up to COUNT_CAP + 1), as MTurk
    # showed them: the group's, not this worker's. Both read only the group's
    # (type, status) range of ix_market_hits_group_queue, from its newer end or
    # until the cap; HITs past their expiry leave that range at the clocks' next sweep.
    open_of_type = (HIT.hit_type_id == HITType.id, HIT.status == ASSIGNABLE)
    newest = (
        select(HIT.created_at)
        .where(*open_of_type)
        .order_by(HIT.created_at.desc(), HIT.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    capped = select(HIT.id).where(*open_of_type).limit(COUNT_CAP + 1).correlate(HITType).subquery()
    count = select(func.count()).select_from(capped).scalar_subquery()
    return select(HITType.id, newest, count).where(HITType.id.in_(bindparam("type_ids", expanding=True)))


def _dates_and_counts(session: Session, type_ids: list[str]) -> dict[str, tuple[datetime, int]]:
    """Each group's newest open HIT's creation time and its count of open HITs (capped)."""
    if not type_ids:
        return {}
    rows = session.execute(_dates_and_counts_statement(), {"type_ids": type_ids}).all()
    # A group whose last HIT was taken since the first query has no newest: it is left out.
    return {type_id: (when, int(n)) for type_id, when, n in rows if when is not None}


@cache
def _in_progress_statement() -> Select[Assignment]:
    # Built once and bound per call: the list runs it on every view, and building and
    # keying a statement with a loader option cost about as much as running it.
    return (
        select(Assignment)
        .options(joinedload(Assignment.hit))  # the list shows each one's title: no query per row
        .where(
            Assignment.worker_id == bindparam("worker_id"),
            Assignment.status == ACCEPTED,
            Assignment.deadline > bindparam("now"),
        )
        .order_by(Assignment.deadline)
    )


def in_progress(session: Session, worker: Worker) -> list[Assignment]:
    """The worker's accepted, not yet submitted assignments that are still within time."""
    return list(session.scalars(_in_progress_statement(), {"worker_id": worker.id, "now": utcnow()}))


def reward_text(amount: Decimal) -> str:
    """A reward as workers read it: ``$0.05``."""
    return f"${amount.quantize(Decimal('0.01'))}"
