"""HIT groups as a worker finds them: grouped by HIT type, searched, sorted, paginated.

MTurk's ``ActionsGuarded`` decides what a worker who lacks a qualification
sees: ``Accept`` lets them discover and preview the group, ``PreviewAndAccept``
lets them discover it only, and ``DiscoverPreviewAndAccept`` hides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market.models import HIT, Assignment, HITType, Requester, Worker, WorkerBlock
from hits.market.models.work import ACCEPTED, ASSIGNABLE, OPEN_ASSIGNMENT_STATUSES
from hits.market.qualification_ops import unmet_requirements

SORTS = ("newest", "reward", "time", "requester")
PER_PAGE = 20


@dataclass(frozen=True)
class HITGroup:
    """One HIT type with HITs the worker could still take."""

    hit_type: HITType
    requester_name: str
    available: int  # HITs of the group this worker has not worked on
    first_hit_id: str  # the oldest of them: the one "Accept" takes
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


def _search(stmt: Any, query: str) -> Any:
    for word in query.split():
        needle = f"%{word}%"
        stmt = stmt.where(
            or_(
                HITType.title.ilike(needle), HITType.description.ilike(needle), HITType.keywords.ilike(needle)
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
    """
    now = utcnow()
    worked = select(Assignment.hit_id).where(
        Assignment.worker_id == worker.id, Assignment.status.in_(OPEN_ASSIGNMENT_STATUSES)
    )
    blocked_by = select(WorkerBlock.requester_id).where(WorkerBlock.worker_id == worker.id)
    counts = (
        select(HIT.hit_type_id, func.count(HIT.id).label("n"), func.max(HIT.created_at).label("newest"))
        .where(
            HIT.status == ASSIGNABLE,
            HIT.expires_at > now,
            HIT.id.not_in(worked),
            HIT.requester_id.not_in(blocked_by),
        )
        .group_by(HIT.hit_type_id)
        .subquery()
    )
    # Aggregating in a subquery keeps the JSON requirements column out of GROUP BY (PostgreSQL).
    stmt = (
        select(HITType, Requester.name, counts.c.n, counts.c.newest)
        .join(counts, counts.c.hit_type_id == HITType.id)
        .join(Requester, Requester.id == HITType.requester_id)
    )
    stmt = _search(stmt, query.strip()[:200])
    groups: list[tuple[HITType, str, int, datetime, bool, list[dict[str, Any]]]] = []
    for hit_type, requester_name, count, newest in session.execute(stmt).all():
        requirements = hit_type.qualification_requirements or []
        if unmet_requirements(session, worker, requirements, "Discover"):
            continue  # DiscoverPreviewAndAccept: invisible to the unqualified
        can_preview = not unmet_requirements(session, worker, requirements, "Preview")
        missing = unmet_requirements(session, worker, requirements, "Accept")
        groups.append((hit_type, requester_name, count, newest, can_preview, missing))
    sort = sort if sort in SORTS else "newest"
    if descending is None:
        descending = sort in ("newest", "reward")
    total = len(groups)
    pages = max(1, -(-total // per_page))
    page = min(max(1, page), pages)
    built = [
        HITGroup(t, name, count, "", newest, preview, not missing, missing)
        for t, name, count, newest, preview, missing in groups
    ]
    built.sort(key=_sort_key(sort), reverse=descending)
    shown = built[(page - 1) * per_page : page * per_page]
    firsts = _first_hits(session, [g.hit_type.id for g in shown], worked, now)
    return GroupPage(
        [replace(g, first_hit_id=firsts[g.hit_type.id]) for g in shown if g.hit_type.id in firsts],
        page,
        pages,
        total,
    )


def _first_hits(session: Session, type_ids: list[str], worked: Any, now: datetime) -> dict[str, str]:
    """The oldest HIT per group the worker could take: what the group's Accept button takes."""
    if not type_ids:
        return {}
    rows = session.execute(
        select(HIT.hit_type_id, HIT.id)
        .where(
            HIT.hit_type_id.in_(type_ids),
            HIT.status == ASSIGNABLE,
            HIT.expires_at > now,
            HIT.id.not_in(worked),
        )
        .order_by(HIT.created_at.desc(), HIT.id.desc())
    ).all()
    # Iterating newest first and overwriting leaves the oldest HIT of each group.
    return {type_id: hit_id for type_id, hit_id in rows}


def in_progress(session: Session, worker: Worker) -> list[Assignment]:
    """The worker's accepted, not yet submitted assignments that are still within time."""
    return list(
        session.scalars(
            select(Assignment)
            .where(
                Assignment.worker_id == worker.id,
                Assignment.status == ACCEPTED,
                Assignment.deadline > utcnow(),
            )
            .order_by(Assignment.deadline)
        )
    )


def reward_text(amount: Decimal) -> str:
    """A reward as workers read it: ``$0.05``."""
    return f"${amount.quantize(Decimal('0.01'))}"
