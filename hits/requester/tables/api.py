"""Tokens that let a dashboard user's scripts call the JSON API (``/api/v1``) as that user."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class ApiToken(RequesterBase):
    """One API token of a staff user; only its SHA-256 is kept (the token is shown once)."""

    __tablename__ = "rq_api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    staff_user_id: Mapped[int] = mapped_column(ForeignKey("rq_staff_users.id"), index=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    #: What the user called it ("nightly export"), to tell tokens apart when revoking one.
    label: Mapped[str] = mapped_column(String(128), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
