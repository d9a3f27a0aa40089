"""The workflow's tables: a workflow, its stages, and per image a chain of refinement rounds.

A stage is an ordinary campaign (its own template, HITs, review and outbox);
these rows say how stages feed one another and where each image stands. The
unique keys are what make the pipeline create each round's HIT exactly once:
``(stage, key)`` for a chain and ``(chain, round, attempt)`` for a round, whose
``published_hit_id`` is the HIT row the UniqueRequestToken derives from.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, Numeric, String, Text, UniqueConstraint, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class Workflow(RequesterBase):
    """A multi-stage campaign: one budget over every stage's HITs."""

    __tablename__ = "rq_workflows"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    budget: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    status: Mapped[str] = mapped_column(String(16), default="running")
    #: The requester's access key it was launched with: only a worker holding it advances it.
    access_key_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkflowStage(RequesterBase):
    """One stage: the campaign doing its work and where its items come from."""

    __tablename__ = "rq_workflow_stages"
    __table_args__ = (UniqueConstraint("workflow_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workflow_id: Mapped[int] = mapped_column(ForeignKey("rq_workflows.id"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), unique=True)
    #: "items" (the campaign's items file) or the name of an earlier stage.
    source: Mapped[str] = mapped_column(String(64))
    #: "single" (one HIT plan, items known up front) or "rounds" (sequential refinement).
    kind: Mapped[str] = mapped_column(String(16))


class Chain(RequesterBase):
    """One image's way through a rounds stage: its seed, its state and why it stopped."""

    __tablename__ = "rq_workflow_chains"
    __table_args__ = (UniqueConstraint("stage_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    stage_id: Mapped[int] = mapped_column(ForeignKey("rq_workflow_stages.id"), index=True)
    #: The item's id in the items file: the same image across stages.
    key: Mapped[str] = mapped_column(String(128))
    #: The image item's payload (image, alt) the rounds show.
    image: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: waiting (on an upstream stage), running, done, stopped.
    status: Mapped[str] = mapped_column(String(16), default="waiting")
    stop_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: The text round 1 starts from, and where it came from (never shown to a worker).
    seed_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    seed_source: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: The qualification that hides this chain's later rounds from everyone who worked on it.
    exclusion_qualification_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ChainRound(RequesterBase):
    """One attempt at one round of a chain: its HIT, its worker's text and its record.

    A rejected attempt is followed by attempt + 1 of the same round (another
    worker); only an approved attempt advances the chain.
    """

    __tablename__ = "rq_workflow_rounds"
    __table_args__ = (UniqueConstraint("chain_id", "round", "attempt"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chain_id: Mapped[int] = mapped_column(ForeignKey("rq_workflow_chains.id"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    item_id: Mapped[int] = mapped_column(ForeignKey("rq_items.id"))
    published_hit_id: Mapped[int] = mapped_column(ForeignKey("rq_published_hits.id"), unique=True)
    #: open, approved, rejected, held, expired (closed with no work: offered again).
    status: Mapped[str] = mapped_column(String(16), default="open")
    previous_text: Mapped[str] = mapped_column(Text)
    text: Mapped[str | None] = mapped_column(Text, nullable=True)
    worker_id: Mapped[str | None] = mapped_column(String(20), nullable=True, index=True)
    assignment_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    work_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: tokens, pos, jaccard, edit_distance (see ``hits.requester.text_metrics``).
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Exposure(RequesterBase):
    """A worker was shown one of the workflow's pictures (their assignment's page was served).

    Recorded for returned and abandoned assignments too, which the API never
    lists: every later HIT of the picture keeps the worker out (``exposures``).
    """

    __tablename__ = "rq_workflow_exposures"
    __table_args__ = (UniqueConstraint("workflow_id", "key", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    workflow_id: Mapped[int] = mapped_column(ForeignKey("rq_workflows.id"))
    #: The picture: its item id in the items file, as a chain's ``key``.
    key: Mapped[str] = mapped_column(String(128))
    worker_id: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


#: Chain states in which more work may come.
ACTIVE_CHAIN_STATUSES = ("waiting", "running")


def stage_waits(session: Session, campaign_id: int) -> bool:
    """Whether a campaign is a rounds stage with pictures still to work on (it must not finish yet).

    Here, beside the tables, because both the workflow engine and the review
    pipeline (which the engine reads) ask it.
    """
    return (
        session.scalar(
            select(Chain.id)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.campaign_id == campaign_id, Chain.status.in_(ACTIVE_CHAIN_STATUSES))
            .limit(1)
        )
        is not None
    )
