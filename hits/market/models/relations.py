"""What passes between a requester and individual workers: bonuses, blocks, messages."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Integer, Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow


class BonusPayment(MarketBase):
    """A bonus a requester paid a worker for an assignment (SendBonus)."""

    __tablename__ = "market_bonus_payments"
    __table_args__ = (UniqueConstraint("requester_id", "unique_request_token"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    assignment_id: Mapped[str] = mapped_column(ForeignKey("market_assignments.id"), index=True)
    hit_id: Mapped[str] = mapped_column(ForeignKey("market_hits.id"), index=True)
    amount: Mapped[Decimal] = mapped_column(Numeric(12, 2))
    reason: Mapped[str] = mapped_column(Text)
    unique_request_token: Mapped[str | None] = mapped_column(String(64), nullable=True)
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkerBlock(MarketBase):
    """A requester's block on a worker: they cannot accept that requester's HITs."""

    __tablename__ = "market_worker_blocks"
    __table_args__ = (UniqueConstraint("requester_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    worker_id: Mapped[str] = mapped_column(String(20), index=True)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkerMessage(MarketBase):
    """A message in a worker's inbox (NotifyWorkers)."""

    __tablename__ = "market_worker_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    subject: Mapped[str] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text)
    sent_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    read_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
