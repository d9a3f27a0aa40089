"""Qualification types and the qualifications workers hold."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow


class QualificationType(MarketBase):
    """A qualification a requester defines (or a system one, with no requester)."""

    __tablename__ = "market_qualification_types"
    __table_args__ = (UniqueConstraint("requester_id", "name"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    requester_id: Mapped[str | None] = mapped_column(
        ForeignKey("market_requesters.id"), index=True, nullable=True
    )
    name: Mapped[str] = mapped_column(String(256))
    description: Mapped[str] = mapped_column(String(2000))
    keywords: Mapped[str] = mapped_column(String(1000), default="")
    status: Mapped[str] = mapped_column(String(16), default="Active")
    test: Mapped[str | None] = mapped_column(Text, nullable=True)
    answer_key: Mapped[str | None] = mapped_column(Text, nullable=True)
    test_duration_seconds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    retry_delay_seconds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    auto_granted: Mapped[bool] = mapped_column(Boolean, default=False)
    auto_granted_value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class WorkerQualification(MarketBase):
    """A qualification granted to one worker, with its score or locale."""

    __tablename__ = "market_worker_qualifications"
    __table_args__ = (UniqueConstraint("qualification_type_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qualification_type_id: Mapped[str] = mapped_column(
        ForeignKey("market_qualification_types.id"), index=True
    )
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    integer_value: Mapped[int | None] = mapped_column(Integer, nullable=True)
    locale_value: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="Granted")
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QualificationTestAttempt(MarketBase):
    """A worker's latest start of a qualification type's test: the clock, kept on the server.

    One row a worker and type, rewritten when the test is started again. A start
    never submitted by ``deadline`` (plus the submit grace) is an abandoned
    attempt: it counts as a failed one for RetryDelayInSeconds.
    """

    __tablename__ = "market_qualification_test_attempts"
    __table_args__ = (UniqueConstraint("qualification_type_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qualification_type_id: Mapped[str] = mapped_column(ForeignKey("market_qualification_types.id"))
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    deadline: Mapped[datetime] = mapped_column(UTCDateTime)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
