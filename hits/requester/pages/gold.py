"""Gold items in a HIT: placed once per HIT when the campaign is planned, recorded as shown.

Every assignment of a HIT shows the same items at the same positions, gold
among them. Were gold chosen per assignment while the other items stay fixed
per HIT, two workers (or one worker with two accounts, or anyone inventing
assignment ids) comparing their pages would find the gold exactly where the
pages differ. So the per-worker freshness that per-assignment choice gave is
kept by planning instead: the plan deals gold from a shuffled pool in turn, so
no two HITs share a gold item while the pool holds ``gold_per_hit`` items for
every HIT (a campaign is refused when it does not, ``pool_shortfall``,
unless its file sets ``allow_gold_reuse``), and then no worker meets a
gold item twice, whichever HITs they take.

Which worker was shown which gold item is still recorded per assignment (an
exposure), the first time the worker's page opens; grading scores what the
exposures say the worker saw. Workers never learn which positions are gold:
the page renders all slots alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import GoldExposure, GoldItem, PublishedHIT


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
    """Record that this assignment's worker is shown the HIT's planned gold; the gold per position.

    The first opening writes one exposure row per gold position (a reload finds
    them and writes nothing). An assignment that has rows from before gold was
    fixed per HIT keeps what it was shown, so its page and its grading agree.
    """
    planned = {slot.position: slot.gold_item for slot in published.slots if slot.gold_item is not None}
    if not planned:
        return {}
    chosen = _exposures(session, published, assignment_id)
    if len(chosen) == len(planned):
        return chosen
    try:
        with session.begin_nested():
            for position, gold in planned.items():
                if position in chosen:
                    continue
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
        # The same page opened twice at once: the other request recorded it first.
        chosen = _exposures(session, published, assignment_id)
    return chosen


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


def pool_shortfall(gold_count: int, gold_per_hit: int, hits: int) -> str | None:
    """Why this gold pool would show a busy worker some gold items twice, or ``None``.

    With fewer gold items than one busy worker meets (one per HIT they could
    take, ``hits`` at most), the plan deals some gold items to several HITs
    while ordinary items appear in one HIT only: a worker who takes several
    HITs and meets an item again knows it is gold. A campaign is refused for
    this unless its file sets ``allow_gold_reuse: true``.
    """
    if not gold_per_hit:
        return None
    per_worker = gold_per_hit * hits  # a worker can take every HIT once
    if gold_count >= per_worker:
        return None
    return (
        f"the gold pool has {gold_count} items but a worker who takes all {hits} HITs meets "
        f"{gold_per_hit} x {hits} = {per_worker} gold slots, so gold items would recur across HITs "
        "while ordinary items never do, telling such a worker which items are gold; add at least "
        f"{per_worker - gold_count} gold items or lower gold_per_hit"
    )


@dataclass(frozen=True)
class PagePlan:
    """One planned HIT's share of the work: how many items and gold items its page holds, and whom for.

    ``for_trusted``: a HIT with less gold, published under a requirement only
    the campaign's trusted workers meet (adaptive gold, ``docs/quality.md``).
    """

    items: int
    gold: int
    for_trusted: bool = False


def page_plans(
    item_count: int, items_per_hit: int, gold_per_hit: int, adaptive: tuple[int, int] | None = None
) -> list[PagePlan]:
    """The HITs ``item_count`` items make, in plan order.

    Without ``adaptive`` every page holds ``items_per_hit`` items and
    ``gold_per_hit`` gold (the last one fewer items). With ``adaptive =
    (newcomers, trusted)`` every page still holds ``items_per_hit +
    gold_per_hit`` slots, so all pages look alike, but a HIT for newcomers
    carries ``newcomers`` gold and one for trusted workers ``trusted``. A HIT
    is a newcomers' one whenever that keeps the gold placed so far within
    ``gold_per_hit`` per HIT, so the campaign's gold (and its gold per
    assignment) is never above what the plain plan would place: it is moved
    from trusted workers' pages to newcomers' ones, not added.
    """
    if adaptive is None:
        return [
            PagePlan(min(items_per_hit, item_count - start), gold_per_hit)
            for start in range(0, item_count, items_per_hit)
        ]
    newcomers, trusted = adaptive
    page = items_per_hit + gold_per_hit
    plans: list[PagePlan] = []
    placed, remaining = 0, item_count
    while remaining > 0:
        for_trusted = placed + newcomers > gold_per_hit * (len(plans) + 1)
        gold = trusted if for_trusted else newcomers
        items = min(page - gold, remaining)
        plans.append(PagePlan(items, gold, for_trusted))
        placed += gold
        remaining -= items
    return plans
