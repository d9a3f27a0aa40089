"""The heatmap calls a HIT page made (``heatmaps.log`` writes and reads them)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class HeatmapRequest(RequesterBase):
    """One model's heatmap for one request of one assignment's page."""

    __tablename__ = "rq_heatmap_requests"
    __table_args__ = (
        Index("ix_rq_heatmap_requests_assignment", "campaign_id", "assignment_id", "position"),
        Index(
            "uq_rq_heatmap_requests_turn",
            *("campaign_id", "assignment_id", "position", "number", "model"),
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    assignment_id: Mapped[str] = mapped_column(String(32))
    position: Mapped[int] = mapped_column(Integer)
    #: The rows of one request share it (a random token).
    call_id: Mapped[str] = mapped_column(String(32))
    #: The request's turn among its slot's requests (0, 1, ...); None on rows logged before turns.
    number: Mapped[int | None] = mapped_column(Integer, nullable=True)
    round: Mapped[str] = mapped_column(String(8))
    sentence: Mapped[int | None] = mapped_column(Integer, nullable=True)
    prompt: Mapped[str | None] = mapped_column(Text, nullable=True)
    model: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(12), default="pending")
    detail: Mapped[str] = mapped_column(Text, default="")
    milliseconds: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: The overlay (PNG) the worker was shown, when ``ok``: what a reloaded page shows again.
    #: Loaded only when asked for (``latest_shown``), never by the results' reading of the log.
    overlay: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
