"""Which gold item a worker sees in each gold slot, chosen when they open the page.

A HIT's plan marks its gold positions; the actual gold item for a position is
chosen per assignment, the first time the worker opens it: one this worker
has not seen yet while unseen ones remain (then the least seen), at random
among equals. The choice is stored, so a reload shows the same page and
grading scores exactly what the worker saw. Workers never learn which
positions are gold: the page renders all slots alike.

Choosing reads what the worker has seen, then adds to it: two pages the same
worker opens at once (two tabs) must take turns, or both read the same
"unseen" items and show them twice. On PostgreSQL a transaction-scoped
advisory lock per (campaign, worker) queues them; SQLite's writers are
serialised already (``BEGIN IMMEDIATE``). Only a first opening takes it: a
reload finds its choice and returns without waiting.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint, func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from hits.campaigns.models import GoldItem, PublishedHIT
from hits.db import RequesterBase


class GoldExposure(RequesterBase):
    """The gold item shown at one position of one assignment."""

    __tablename__ = "rq_gold_exposures"
    __table_args__ = (
        UniqueConstraint("campaign_id", "assignment_id", "position"),
        Index("ix_rq_gold_exposures_campaign_worker", "campaign_id", "worker_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    worker_id: Mapped[str] = mapped_column(String(20))
    assignment_id: Mapped[str] = mapped_column(String(32), index=True)
    position: Mapped[int] = mapped_column(Integer)
    gold_item_id: Mapped[int] = mapped_column(ForeignKey("rq_gold_items.id"))
    gold_item: Mapped[GoldItem] = relationship(lazy="joined")


@dataclass(frozen=True)
class PageSlot:
    """A position on an assignment's page: the payload shown, and the gold item if it is one."""

    position: int
    payload: dict[str, Any]
    gold: GoldItem | None


def _exposures(session: Session, published: PublishedHIT, assignment_id: str) -> dict[int, GoldItem]:
    # The campaign is part of the key: an assignment id is only unique on its own marketplace.
    return exposures_for(session, published.campaign_id, [assignment_id]).get(assignment_id, {})


def choose_gold(
    session: Session, published: PublishedHIT, assignment_id: str, worker_id: str
) -> dict[int, GoldItem]:
    """The gold item for each gold position of this assignment (chosen once, then stable)."""
    positions = [slot.position for slot in published.slots if slot.gold_item_id is not None]
    if not positions:
        return {}
    chosen = _exposures(session, published, assignment_id)
    if len(chosen) == len(positions):
        return chosen
    if _lock_worker_choices(session, published.campaign_id, worker_id):
        # Another page of this worker's may have chosen while we waited, this one too.
        chosen = _exposures(session, published, assignment_id)
        if len(chosen) == len(positions):
            return chosen
    seen = dict(
        session.execute(
            select(GoldExposure.gold_item_id, func.count())
            .where(GoldExposure.campaign_id == published.campaign_id, GoldExposure.worker_id == worker_id)
            .group_by(GoldExposure.gold_item_id)
        ).all()
    )
    pool = list(session.scalars(select(GoldItem).where(GoldItem.campaign_id == published.campaign_id)))
    rng = random.Random(assignment_id)  # reproducible per assignment, different across them
    rng.shuffle(pool)
    pool.sort(key=lambda g: seen.get(g.id, 0))  # stable: unseen first, random among equals
    picks = iter(g for g in pool if g.id not in {c.id for c in chosen.values()})
    try:
        with session.begin_nested():
            for position in positions:
                if position in chosen:
                    continue
                gold = next(picks, None) or pool[0]
                session.add(
                    GoldExposure(
                        campaign_id=published.campaign_id,
                        worker_id=worker_id,
                        assignment_id=assignment_id,
                        position=position,
                        gold_item_id=gold.id,
                    )
                )
                chosen[position] = gold
    except IntegrityError:
        # The same page opened twice at once: the other request's choice stands.
        chosen = _exposures(session, published, assignment_id)
    return chosen


#: Namespaces this module's advisory locks from any other use of PostgreSQL's 64-bit key space.
_LOCK_PREFIX = "hitforge-gold-choice"


def _lock_worker_choices(session: Session, campaign_id: int, worker_id: str) -> bool:
    """Queue behind any other transaction choosing gold for this worker in this campaign.

    PostgreSQL only (a transaction-scoped advisory lock, released at commit or
    rollback); returns whether a lock was taken. SQLite needs none.
    """
    if session.get_bind().dialect.name != "postgresql":
        return False
    session.execute(
        text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
        {"key": f"{_LOCK_PREFIX}:{campaign_id}:{worker_id}"},
    )
    return True


def page_slots(session: Session, published: PublishedHIT, assignment_id: str | None) -> list[PageSlot]:
    """The assignment's page: planned items, with its chosen gold items where it has them.

    Without a choice on record (a preview, or a submission the page never saw)
    the HIT's planned gold item stands.
    """
    chosen = _exposures(session, published, assignment_id) if assignment_id else {}
    return slots_with_gold(published, chosen)


def exposures_for(
    session: Session, campaign_id: int, assignment_ids: list[str]
) -> dict[str, dict[int, GoldItem]]:
    """The gold chosen for many assignments of one campaign, in one query: assignment -> position -> item."""
    found: dict[str, dict[int, GoldItem]] = {}
    if not assignment_ids:
        return found
    rows = session.scalars(
        select(GoldExposure).where(
            GoldExposure.campaign_id == campaign_id, GoldExposure.assignment_id.in_(assignment_ids)
        )
    )
    for row in rows:
        found.setdefault(row.assignment_id, {})[row.position] = row.gold_item
    return found


def slots_with_gold(published: PublishedHIT, chosen: dict[int, GoldItem]) -> list[PageSlot]:
    """The HIT's page given the gold ``chosen`` per position (the plan's gold where none is)."""
    out = []
    for slot in published.slots:
        gold = chosen.get(slot.position, slot.gold_item) if slot.gold_item_id is not None else None
        out.append(PageSlot(slot.position, gold.payload if gold else slot.payload, gold))
    return out


def pool_warning(gold_count: int, gold_per_hit: int, hits: int) -> str | None:
    """A warning when workers will have to see gold items again, or ``None``.

    With fewer gold items than one busy worker meets (one per HIT they could
    take, ``hits`` at most), repeats are unavoidable and known answers leak.
    """
    if not gold_per_hit:
        return None
    per_worker = gold_per_hit * hits  # a worker can take every HIT once
    if gold_count >= per_worker:
        return None
    return (
        f"the gold pool has {gold_count} items but a worker who takes all {hits} HITs meets "
        f"{per_worker} gold slots: they will see some gold items again; add at least "
        f"{per_worker - gold_count} gold items or lower gold_per_hit"
    )
