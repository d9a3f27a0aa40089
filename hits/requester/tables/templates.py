"""How a template arranged an assignment's page (``templates.arrangements``): never shown to workers."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase


class SlotArrangement(RequesterBase):
    """How one position of one assignment's page was arranged (template-defined JSON)."""

    __tablename__ = "rq_slot_arrangements"
    __table_args__ = (UniqueConstraint("campaign_id", "assignment_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    assignment_id: Mapped[str] = mapped_column(String(32), index=True)
    position: Mapped[int] = mapped_column(Integer)
    arrangement: Mapped[dict[str, Any]] = mapped_column(JSON)
