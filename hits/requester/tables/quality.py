"""Quality control's own records: pairs of workers tested for copying (``quality.live_copying``),
and approved work drawn for a person's spot check (``quality.spot_checks``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class CopyingPair(RequesterBase):
    """Two workers of the same HITs in a campaign: how alike they answered, and the latest verdict."""

    __tablename__ = "rq_copying_pairs"

    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), primary_key=True)
    first_worker: Mapped[str] = mapped_column(String(20), primary_key=True)
    second_worker: Mapped[str] = mapped_column(String(20), primary_key=True)
    shared_hits: Mapped[int] = mapped_column(Integer, default=0)
    shared_items: Mapped[int] = mapped_column(Integer, default=0)
    identical_answers: Mapped[int] = mapped_column(Integer, default=0)
    shared_texts: Mapped[int] = mapped_column(Integer, default=0)
    identical_texts: Mapped[int] = mapped_column(Integer, default=0)
    identical_wrong_gold: Mapped[int] = mapped_column(Integer, default=0)
    first_ahead: Mapped[int] = mapped_column(Integer, default=0)
    second_ahead: Mapped[int] = mapped_column(Integer, default=0)
    #: Whether the pair looked like copying at its latest judgement, and whether it ever did.
    suspicious: Mapped[bool] = mapped_column(Boolean, default=False)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    p_value: Mapped[float] = mapped_column(Float, default=1.0)
    #: The latest verdict's evidence, with the first identical answers and shared HITs' times.
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SpotCheck(RequesterBase):
    """An approved assignment drawn for a person to look at again, and what they found.

    One row per assignment (unique): approving it again, or a re-run of the
    review, never draws it twice. ``verdict`` is None while it waits.
    """

    __tablename__ = "rq_spot_checks"
    __table_args__ = (Index("ix_rq_spot_checks_campaign_worker", "campaign_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    worker_id: Mapped[str] = mapped_column(String(20))
    assignment_id: Mapped[str] = mapped_column(String(32), unique=True)
    #: Why it was drawn: ``first`` (one of the worker's first approvals) or ``sample`` (the rate).
    reason: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: ``agree`` or ``disagree`` once a reviewer has looked.
    verdict: Mapped[str | None] = mapped_column(String(16), nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    staff_user_id: Mapped[int | None] = mapped_column(ForeignKey("rq_staff_users.id"), nullable=True)
    checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
