"""Review policies attached to HITs, and what evaluating them found and did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow


class HITReviewPolicies(MarketBase):
    """The AssignmentReviewPolicy and HITReviewPolicy given to CreateHIT, as sent."""

    __tablename__ = "market_review_policies"

    hit_id: Mapped[str] = mapped_column(ForeignKey("market_hits.id"), primary_key=True)
    assignment_policy: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    hit_policy: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    #: Set once the HIT-level policy has been evaluated (it runs when the HIT becomes reviewable).
    hit_policy_done_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class ReviewRecord(MarketBase):
    """One ReviewResultDetail or ReviewActionDetail, in wire form, for a HIT's report."""

    __tablename__ = "market_review_records"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    hit_id: Mapped[str] = mapped_column(ForeignKey("market_hits.id"), index=True)
    level: Mapped[str] = mapped_column(String(16))  # "Assignment" | "HIT"
    kind: Mapped[str] = mapped_column(String(8))  # "result" | "action"
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
