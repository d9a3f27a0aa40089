"""What a rounds stage reads of the stage feeding it: approved output, held work, pictures still at work."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import HITSlot, Item, OutboxEntry, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound, WorkflowStage


def upstream_output(
    session: Session, source: WorkflowStage, keys: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """Per picture key, the source stage's first approved output as ``{label, box, description}`` triples.

    A single stage's answer (Task 1: a list of triples; a sentence: one
    description) comes from its earliest approved assignment; a rounds
    stage's is its finished chain's last approved text.
    """
    out: dict[str, list[dict[str, Any]]] = {}
    if source.kind == "rounds":
        finished = session.execute(
            select(Chain.key, ChainRound.text)
            .join(ChainRound, ChainRound.chain_id == Chain.id)
            .where(
                Chain.stage_id == source.id,
                Chain.key.in_(keys),
                Chain.status == "done",
                ChainRound.status == "approved",
            )
            .order_by(Chain.key, ChainRound.round)
        ).all()
        for key, text in finished:
            out[key] = [{"description": text}]  # the last approved round wins
        return out
    rows = session.execute(
        _work_on(source, keys, Item.external_id, HITSlot.position, Submission.answers)
        .where(Submission.decision == "approve")
        .order_by(Submission.id)
    )
    for key, position, answers in rows.all():
        if key in out:
            continue
        answer = (answers or {}).get("answers", [])[position]
        out[key] = as_triples(answer)
    return out


def unfinished_keys(session: Session, source: WorkflowStage, keys: list[str]) -> set[str]:
    """Picture keys a single source stage may still give to a new worker: a HIT open, or a redo to come.

    A picture's rounds wait for these: a round's HIT keeps out everyone who
    worked on the picture so far, but the source stage's HITs were made
    before the rounds and cannot keep out a round's worker, who could then
    annotate the picture they described.
    """
    if source.kind == "rounds" or not keys:
        return set()
    on_hits = (
        select(Item.external_id)
        .join(HITSlot, HITSlot.item_id == Item.id)
        .join(PublishedHIT, PublishedHIT.id == HITSlot.published_hit_id)
        .where(Item.campaign_id == source.campaign_id, Item.external_id.in_(keys))
    )
    open_hits = set(session.scalars(on_hits.where(PublishedHIT.status != "complete")))
    redo = set(
        session.scalars(
            on_hits.join(Submission, Submission.published_hit_id == PublishedHIT.id).join(
                OutboxEntry,
                (OutboxEntry.target == Submission.assignment_id)
                & (OutboxEntry.campaign_id == source.campaign_id)
                & (OutboxEntry.action == "repost")
                & (OutboxEntry.status == "pending"),
            )
        )
    )
    # Rejected and not offered again yet: its redo may be waiting for a later stage's HIT to close.
    to_redo = {
        key
        for key, evidence in session.execute(
            on_hits.join(Submission, Submission.published_hit_id == PublishedHIT.id)
            .where(*not_yet_redone(source.campaign_id))
            .add_columns(Submission.evidence)
        ).all()
        if redo_allowed(evidence)
    }
    return open_hits | redo | to_redo


def not_yet_redone(campaign_id: int) -> tuple[ColumnElement[bool], ...]:
    """Conditions on a submission of the campaign: rejected, synced, and no redo of it queued yet."""
    offered = select(OutboxEntry.target).where(
        OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "repost"
    )
    return (
        Submission.decision == "reject",
        Submission.synced.is_(True),
        Submission.assignment_id.not_in(offered),
    )


def redo_allowed(evidence: dict[str, Any] | None) -> bool:
    """Whether a rejected submission's evidence leaves its redo to come (the budget refused none yet)."""
    return "not_reposted" not in (evidence or {})


def held_keys(session: Session, source: WorkflowStage, keys: list[str]) -> set[str]:
    """Picture keys whose work in a single source stage is held for a QA reviewer."""
    if source.kind == "rounds":
        return set()
    return set(session.scalars(_work_on(source, keys, Item.external_id).where(Submission.decision == "held")))


def _work_on(source: WorkflowStage, keys: list[str], *columns: Any) -> Select[Any]:
    """``columns`` of the submissions on the single source stage's pictures ``keys``."""
    return (
        select(*columns)
        .join(HITSlot, HITSlot.item_id == Item.id)
        .join(Submission, Submission.published_hit_id == HITSlot.published_hit_id)
        .where(Item.campaign_id == source.campaign_id, Item.external_id.in_(keys))
    )


def as_triples(answer: Any) -> list[dict[str, Any]]:
    """An upstream answer as object triples: Task 1's list as it is, a text as one description."""
    if isinstance(answer, list):
        return [dict(a) for a in answer if isinstance(a, dict)]
    if isinstance(answer, dict) and "objects" in answer:
        return [dict(a) for a in answer["objects"] if isinstance(a, dict)]
    return [{"description": str(answer)}]
