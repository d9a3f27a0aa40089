"""A batch and its rows, in the requester database.

A batch hangs off a campaign row of status ``batch``: the outbox, the
dashboard's scopes and the access-key checks all key on campaigns, and a
batch's approvals and rejections go through that same outbox. Each row also
has a published HIT of that campaign with one slot (an item, or a gold item
for a gold row), so the review pipeline syncs, grades and decides a batch's
work as it does a campaign's (template ``batch``, :mod:`hits.requester.templates.batch`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from hits.db import RequesterBase, UTCDateTime, utcnow


class Batch(RequesterBase):
    """One layout published over one CSV; its settings are those of its HITType."""

    __tablename__ = "rq_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), unique=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    layout: Mapped[str] = mapped_column(Text)
    #: The input CSV's columns, in the file's order (``Input.<col>`` follows it).
    columns: Mapped[list[str]] = mapped_column(JSON)
    #: Title, reward, assignments, timings, qualification requirements (``BatchSettings``).
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    hit_type_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    rows: Mapped[list[BatchRow]] = relationship(order_by="BatchRow.position", lazy="selectin")


class BatchRow(RequesterBase):
    """One CSV row and the HIT made from it; the row id derives the UniqueRequestToken."""

    __tablename__ = "rq_batch_rows"
    __table_args__ = (UniqueConstraint("batch_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[int] = mapped_column(ForeignKey("rq_batches.id"), index=True)
    #: 0-based order in the CSV; ``line`` is where the row started in the file.
    position: Mapped[int] = mapped_column(Integer)
    line: Mapped[int] = mapped_column(Integer)
    inputs: Mapped[dict[str, str]] = mapped_column(JSON)
    mturk_hit_id: Mapped[str | None] = mapped_column(String(32), unique=True, nullable=True)
    #: The review pipeline's record of the row's HIT (one slot: the row as an item, or as a
    #: gold item when the CSV gave it ``Gold.*`` answers). None for batches stored before it.
    published_hit_id: Mapped[int | None] = mapped_column(
        ForeignKey("rq_published_hits.id"), unique=True, nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    @property
    def unique_request_token(self) -> str:
        """Derived from the row, so publishing again never creates a second HIT for it."""
        return f"hitforge-b{self.batch_id}-r{self.id}"
