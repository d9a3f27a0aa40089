"""Requester-side tables for qualification tests graded by hitforge."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class QualificationTest(RequesterBase):
    """A test from an item bank, tied to a marketplace qualification type."""

    __tablename__ = "rq_qualification_tests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    bank_path: Mapped[str] = mapped_column(String(1024))
    qualification_type_id: Mapped[str] = mapped_column(String(32), index=True)
    access_key_id: Mapped[str] = mapped_column(String(32))
    duration_seconds: Mapped[int] = mapped_column(Integer, default=1800)
    cooldown_seconds: Mapped[int] = mapped_column(Integer, default=86400)
    max_attempts: Mapped[int] = mapped_column(Integer, default=3)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class QualificationAttempt(RequesterBase):
    """One worker's attempt; the paper is re-derived from ``seed``."""

    __tablename__ = "rq_qualification_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    test_id: Mapped[int] = mapped_column(ForeignKey("rq_qualification_tests.id"), index=True)
    worker_id: Mapped[str] = mapped_column(String(20), index=True)
    seed: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    score: Mapped[int | None] = mapped_column(Integer, nullable=True)
    passed: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    correct_items: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
