"""Quality control's own records: pairs of workers tested for copying (``quality.live_copying``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String
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
