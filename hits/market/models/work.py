"""HIT types, HITs and assignments."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from hits.db import MarketBase, UTCDateTime, utcnow

# HIT statuses as MTurk names them.
ASSIGNABLE = "Assignable"
UNASSIGNABLE = "Unassignable"
REVIEWABLE = "Reviewable"
REVIEWING = "Reviewing"
DISPOSED = "Disposed"

# Assignment statuses. "Accepted" is internal (MTurk does not list in-progress
# assignments); "Returned" and "Abandoned" free the slot for another worker.
ACCEPTED = "Accepted"
SUBMITTED = "Submitted"
APPROVED = "Approved"
REJECTED = "Rejected"
RETURNED = "Returned"
ABANDONED = "Abandoned"
OPEN_ASSIGNMENT_STATUSES = (ACCEPTED, SUBMITTED, APPROVED, REJECTED)


class HITType(MarketBase):
    """The shared properties of a group of HITs (MTurk's HIT type / HIT group)."""

    __tablename__ = "market_hit_types"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    title: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(String(2000))
    keywords: Mapped[str] = mapped_column(String(1000), default="")
    reward: Mapped[Decimal] = mapped_column(Numeric(12, 2))
    assignment_duration_seconds: Mapped[int] = mapped_column(Integer)
    auto_approval_delay_seconds: Mapped[int] = mapped_column(Integer, default=2_592_000)
    qualification_requirements: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class HIT(MarketBase):
    """One HIT: a question that up to ``max_assignments`` workers may answer."""

    __tablename__ = "market_hits"
    __table_args__ = (
        UniqueConstraint("requester_id", "unique_request_token"),
        # Keyset pages of one status, oldest first (migration mar0007).
        Index("ix_market_hits_listing", "requester_id", "status", "created_at", "id"),
        # A group's open HITs oldest first (Accept, the worker's HIT list), and the clocks' expiry sweep
        # (migration mar0009).
        Index("ix_market_hits_group_queue", "hit_type_id", "status", "created_at", "id"),
        Index("ix_market_hits_expiry", "expires_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    hit_type_id: Mapped[str] = mapped_column(ForeignKey("market_hit_types.id"), index=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    question: Mapped[str] = mapped_column(Text)
    max_assignments: Mapped[int] = mapped_column(Integer, default=1)
    status: Mapped[str] = mapped_column(String(16), default=ASSIGNABLE, index=True)
    review_status: Mapped[str] = mapped_column(String(32), default="NotReviewed")
    requester_annotation: Mapped[str | None] = mapped_column(String(255), nullable=True)
    unique_request_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    hit_layout_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    hit_type: Mapped[HITType] = relationship(lazy="joined")
    assignments: Mapped[list[Assignment]] = relationship(back_populates="hit")


class Assignment(MarketBase):
    """A worker's acceptance of a HIT, then their submitted answer."""

    __tablename__ = "market_assignments"
    __table_args__ = (
        UniqueConstraint("hit_id", "worker_id", "accept_time"),
        # The clocks' sweeps, and what a worker holds (migration mar0009).
        Index("ix_market_assignments_deadline", "status", "deadline"),
        Index("ix_market_assignments_auto_approval", "status", "auto_approval_time"),
        Index("ix_market_assignments_worker_status", "worker_id", "status"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    hit_id: Mapped[str] = mapped_column(ForeignKey("market_hits.id"), index=True)
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=ACCEPTED, index=True)
    accept_time: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    deadline: Mapped[datetime] = mapped_column(UTCDateTime)
    submit_time: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    auto_approval_time: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    approval_time: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    rejection_time: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    #: When it went back to its HIT: returned by the worker, or abandoned (its deadline). A
    #: worker's recent ones are counted (``assignment_ops.RETURN_LIMIT``). Not part of MTurk's
    #: Assignment; never sent on the API.
    return_time: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: The page's typing record (``hits.wire.authenticity``: counts, never content), kept beside the
    #: answer so the answer stays what MTurk would store. Sent on the API as ``HitforgeAuthenticity``,
    #: a member boto3 ignores and hitforge's requester side reads.
    authenticity: Mapped[str | None] = mapped_column(Text, nullable=True)
    requester_feedback: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    hit: Mapped[HIT] = relationship(back_populates="assignments")
