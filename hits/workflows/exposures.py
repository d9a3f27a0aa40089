"""Who has been shown which of a workflow's pictures: recorded when an assignment's page is served.

A worker who accepts a HIT, looks at its picture and returns it has seen the
picture, but the API lists no returned (or abandoned) assignments to the
requester, and it tells the requester nothing when a worker accepts. The one
moment the requester side does learn it is when it serves the assignment's
page (its own HIT page, on any marketplace): that is when the picture is
shown, so that is where the exposure is recorded, before the page is sent.
Every later round of the picture (in any stage of the workflow) excludes the
worker through the chain's exclusion qualification (``engine.excluded_workers``).

Previews are not recorded: a preview frame names no worker (MTurk's doesn't
either).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.campaigns.models import Item, PublishedHIT
from hits.workflows.models import Chain, ChainRound, Exposure, WorkflowStage


@dataclass(frozen=True)
class Unrecorded:
    """Pictures of one workflow a worker is being shown and that are not recorded as seen yet."""

    workflow_id: int
    keys: list[str]


def unrecorded_exposures(session: Session, published: PublishedHIT, worker_id: str) -> Unrecorded | None:
    """What showing this HIT to ``worker_id`` would newly expose; None when nothing (or not a workflow's HIT).

    Reads only: an assignment's page opened again costs no write.
    """
    stage = session.execute(
        select(WorkflowStage.workflow_id, WorkflowStage.kind).where(
            WorkflowStage.campaign_id == published.campaign_id
        )
    ).first()
    if stage is None:
        return None
    if stage.kind == "rounds":
        keys = set(
            session.scalars(
                select(Chain.key)
                .join(ChainRound, ChainRound.chain_id == Chain.id)
                .where(ChainRound.published_hit_id == published.id)
            )
        )
    else:
        # A single stage's HIT may show several pictures (and gold, which is no picture of the workflow).
        item_ids = [slot.item_id for slot in published.slots if slot.item_id is not None]
        keys = (
            set(session.scalars(select(Item.external_id).where(Item.id.in_(item_ids)))) if item_ids else set()
        )
    if not keys:
        return None
    seen = set(
        session.scalars(
            select(Exposure.key).where(
                Exposure.workflow_id == stage.workflow_id,
                Exposure.worker_id == worker_id,
                Exposure.key.in_(sorted(keys)),
            )
        )
    )
    missing = sorted(keys - seen)
    return Unrecorded(stage.workflow_id, missing) if missing else None


def record_exposures(session: Session, unrecorded: Unrecorded, worker_id: str) -> None:
    """Record that ``worker_id`` has been shown these pictures (once each; a concurrent opening may win)."""
    for key in unrecorded.keys:
        try:
            with session.begin_nested():
                session.add(Exposure(workflow_id=unrecorded.workflow_id, key=key, worker_id=worker_id))
        except IntegrityError:
            pass  # the same page opened twice at once: recorded by the other
    session.flush()
