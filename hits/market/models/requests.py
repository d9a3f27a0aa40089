"""Qualification requests, notification settings, request tokens, per-requester options, uploaded files."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow

PENDING = "Pending"
GRANTED = "Granted"
DENIED = "Rejected"


class QualificationRequest(MarketBase):
    """A worker's request for a qualification (with a test answer, if the type has a test)."""

    __tablename__ = "market_qualification_requests"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    qualification_type_id: Mapped[str] = mapped_column(
        ForeignKey("market_qualification_types.id"), index=True
    )
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    test: Mapped[str | None] = mapped_column(Text, nullable=True)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=PENDING, index=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class NotificationSetting(MarketBase):
    """Where events of a HIT type are sent (UpdateNotificationSettings)."""

    __tablename__ = "market_notification_settings"

    hit_type_id: Mapped[str] = mapped_column(ForeignKey("market_hit_types.id"), primary_key=True)
    destination: Mapped[str] = mapped_column(String(1000))
    transport: Mapped[str] = mapped_column(String(16))
    version: Mapped[str] = mapped_column(String(32))
    event_types: Mapped[list[str]] = mapped_column(JSON, default=list)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RequestToken(MarketBase):
    """A UniqueRequestToken an operation has processed (for operations without their own row)."""

    __tablename__ = "market_request_tokens"
    __table_args__ = (UniqueConstraint("requester_id", "operation", "token"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    operation: Mapped[str] = mapped_column(String(64))
    token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RequesterOptions(MarketBase):
    """Per-requester test options: throttling and fault injection, off unless set."""

    __tablename__ = "market_requester_options"

    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), primary_key=True)
    # Calls per second allowed before ThrottlingException; None = unlimited.
    throttle_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Probability (0..1) that a call fails with ServiceFault; None = never.
    fault_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UploadedFile(MarketBase):
    """A file a worker gave for a FileUploadAnswer question; its key is the answer's UploadedFileKey."""

    __tablename__ = "market_uploaded_files"
    __table_args__ = (UniqueConstraint("assignment_id", "question_identifier"),)

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    assignment_id: Mapped[str] = mapped_column(ForeignKey("market_assignments.id"), index=True)
    question_identifier: Mapped[str] = mapped_column(String(512))
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(255))
    size_bytes: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
