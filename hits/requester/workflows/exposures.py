"""Who has been shown which of a workflow's pictures: recorded when an assignment's page is served.

A worker who accepts a HIT, looks at its picture and returns it has seen the
picture, but the API lists no returned (or abandoned) assignments to the
requester, and it tells the requester nothing when a worker accepts. The one
moment the requester side does learn it is when it serves the assignment's
page (its own HIT page, on any marketplace): that is when the picture is
shown, so that is where the exposure is recorded, before the page is sent.
Every later round of the picture (in any stage of the workflow) excludes the
worker through the chain's exclusion qualification (``excluded_workers``), and so
does a redo of earlier-stage work on it (``redo_exclusions``).

Previews are not recorded: a preview frame names no worker (MTurk's doesn't
either).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound, Exposure, Workflow, WorkflowStage


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


def excluded_workers(session: Session, chain: Chain) -> list[str]:
    """Everyone who has been shown this chain's picture or worked on it, in any stage of the workflow."""
    workers = set(
        w for w in session.scalars(select(ChainRound.worker_id).where(ChainRound.chain_id == chain.id)) if w
    )
    stage = session.get(WorkflowStage, chain.stage_id)
    assert stage is not None
    # Shown the picture in any stage, work submitted or not (a returned HIT is listed nowhere else).
    workers.update(
        session.scalars(
            select(Exposure.worker_id).where(
                Exposure.workflow_id == stage.workflow_id, Exposure.key == chain.key
            )
        )
    )
    # Work submitted but not yet read by the advance (a round's HIT synced just now).
    workers.update(
        session.scalars(
            select(Submission.worker_id)
            .join(ChainRound, ChainRound.published_hit_id == Submission.published_hit_id)
            .where(ChainRound.chain_id == chain.id)
        )
    )
    if stage.source != "items":
        source = session.scalar(
            select(WorkflowStage).where(
                WorkflowStage.workflow_id == stage.workflow_id, WorkflowStage.name == stage.source
            )
        )
        if source is not None:
            workers.update(
                session.scalars(
                    select(Submission.worker_id)
                    .join(HITSlot, HITSlot.published_hit_id == Submission.published_hit_id)
                    .join(Item, Item.id == HITSlot.item_id)
                    .where(Item.campaign_id == source.campaign_id, Item.external_id == chain.key)
                )
            )
    return sorted(workers)


def redo_exclusions(
    session: Session, workflow: Workflow, submission: Submission
) -> list[dict[str, object]] | None:
    """Who a redo of ``submission``'s HIT must keep out, per picture's exclusion qualification; None: wait.

    The HIT's pictures may have rounds in later stages already (they did not
    wait for work held for QA): everyone who has seen one of them, in any
    stage, is kept out of the redo through the rounds' own exclusion
    qualification. While a later stage's HIT of a picture is still open (or
    not created yet) its worker is not known, so the redo waits for it; and
    no new round is made while a redo is to come (``unfinished_keys``), so
    nobody sees the picture between the two.
    """
    keys = list(
        session.scalars(
            select(Item.external_id)
            .join(HITSlot, HITSlot.item_id == Item.id)
            .where(HITSlot.published_hit_id == submission.published_hit_id)
        )
    )
    chains = list(
        session.scalars(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(
                WorkflowStage.workflow_id == workflow.id,
                WorkflowStage.kind == "rounds",
                Chain.key.in_(keys),
            )
            .order_by(Chain.id)
        )
    )
    if not chains:
        return []
    still_open = session.scalar(
        select(ChainRound.id)
        .join(PublishedHIT, PublishedHIT.id == ChainRound.published_hit_id)
        .where(
            ChainRound.chain_id.in_([c.id for c in chains]),
            ChainRound.status == "open",
            PublishedHIT.status != "complete",
        )
        .limit(1)
    )
    if still_open is not None:
        return None
    # A chain with no qualification has had no round on the marketplace: only this stage showed it.
    return [
        {"qualification_type_id": c.exclusion_qualification_id, "workers": excluded_workers(session, c)}
        for c in chains
        if c.exclusion_qualification_id
    ]
