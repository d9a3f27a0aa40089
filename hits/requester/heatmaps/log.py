"""Every heatmap a worker's page asked for, per model, with what came of it.

One row per model per request: which assignment and slot, which round, the
report sentence or the worker's own prompt, the real model (never sent to
the worker), whether its heatmap was shown (``ok``) or why not (``failed``,
``timeout``, ``unavailable``), the detail for the requester and how long it
took. Rows are written ``pending`` before the providers are called, which is
what the per-assignment limits count, and completed afterwards. Each request
of a slot takes the next ``number``, unique per slot and model, so two
requests racing for the same turn cannot both have it (the loser looks
again and finds the turn taken): the limits hold on any database.

Each heatmap shown is kept (its overlay), so a reloaded page shows the
worker the very heatmaps they were rating, without asking the models again.

The log is also what results trust about what a worker saw: the first
report sentence revealed is the one the worker chose (no other can be
revealed after it), and a custom prompt counts only if its heatmaps were
made for this assignment.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, undefer

from hits.requester.tables.heatmaps import HeatmapRequest

ROUNDS = ("report", "custom")
STATUSES = ("pending", "ok", "failed", "timeout", "unavailable")


def revealed_sentence(session: Session, campaign_id: int, assignment_id: str, position: int) -> int | None:
    """The report sentence whose heatmaps this assignment's slot was first shown; None before that."""
    return session.scalar(
        select(HeatmapRequest.sentence)
        .where(
            HeatmapRequest.campaign_id == campaign_id,
            HeatmapRequest.assignment_id == assignment_id,
            HeatmapRequest.position == position,
            HeatmapRequest.round == "report",
        )
        .order_by(HeatmapRequest.id)
        .limit(1)
    )


def requests_made(session: Session, campaign_id: int, assignment_id: str, position: int) -> int:
    """How many requests (of any round) this assignment's slot has made."""
    return int(
        session.scalar(
            select(func.count(func.distinct(HeatmapRequest.call_id))).where(
                HeatmapRequest.campaign_id == campaign_id,
                HeatmapRequest.assignment_id == assignment_id,
                HeatmapRequest.position == position,
            )
        )
        or 0
    )


def last_request_at(session: Session, campaign_id: int, assignment_id: str, position: int) -> datetime | None:
    """When this assignment's slot last asked for heatmaps."""
    return session.scalar(
        select(func.max(HeatmapRequest.created_at)).where(
            HeatmapRequest.campaign_id == campaign_id,
            HeatmapRequest.assignment_id == assignment_id,
            HeatmapRequest.position == position,
        )
    )


def latest_shown(
    session: Session, campaign_id: int, assignment_id: str, position: int, round_: str
) -> list[HeatmapRequest]:
    """The rows, overlays loaded, of the slot's latest answered request of ``round_``; [] if none.

    A request still pending (in flight in another tab, or cut short by a
    crash) is passed over: its heatmaps were never shown.
    """
    slot = (
        HeatmapRequest.campaign_id == campaign_id,
        HeatmapRequest.assignment_id == assignment_id,
        HeatmapRequest.position == position,
    )
    pending = select(HeatmapRequest.call_id).where(*slot, HeatmapRequest.status == "pending")
    call_id = session.scalar(
        select(HeatmapRequest.call_id)
        .where(*slot, HeatmapRequest.round == round_, HeatmapRequest.call_id.not_in(pending))
        .order_by(HeatmapRequest.id.desc())
        .limit(1)
    )
    if call_id is None:
        return []
    return list(
        session.scalars(
            select(HeatmapRequest)
            .where(HeatmapRequest.call_id == call_id)
            .options(undefer(HeatmapRequest.overlay))
            .order_by(HeatmapRequest.id)
        )
    )


def campaign_requests(session: Session, campaign_id: int) -> list[HeatmapRequest]:
    """Every logged heatmap of a campaign, oldest first."""
    return list(
        session.scalars(
            select(HeatmapRequest)
            .where(HeatmapRequest.campaign_id == campaign_id)
            .order_by(HeatmapRequest.id)
        )
    )
