"""Requesters with their access keys, and workers."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from hits.db import MarketBase, UTCDateTime, utcnow
from hits.signin_limits import SignInFailureColumns


class Requester(MarketBase):
    """A requester account; it calls the API with one of its access keys."""

    __tablename__ = "market_requesters"

    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    access_keys: Mapped[list[AccessKey]] = relationship(back_populates="requester")


class AccessKey(MarketBase):
    """An access-key pair for SigV4.

    The secret is kept as issued because SigV4 verification recomputes an HMAC
    with it (as AWS does); protect the database accordingly.
    """

    __tablename__ = "market_access_keys"

    access_key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    secret_access_key: Mapped[str] = mapped_column(String(64))
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    requester: Mapped[Requester] = relationship(back_populates="access_keys")


class Worker(MarketBase):
    """A crowd worker with a sign-in on the worker site."""

    __tablename__ = "market_workers"

    id: Mapped[str] = mapped_column(String(20), primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    country: Mapped[str] = mapped_column(String(2), default="US")
    subdivision: Mapped[str | None] = mapped_column(String(3), nullable=True)
    is_adult: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Stamped into each sign-in's session cookie; signing out counts it up, so every cookie
    #: issued before (a copy kept by someone else included) stops being a sign-in.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Set when the worker returned too many HITs too fast: no accept until then. Kept on the
    #: worker, whom every request loads anyway, so an accept checks it without a query.
    accepts_paused_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class SignInFailure(SignInFailureColumns, MarketBase):
    """A failed sign-in on the worker site (see ``hits.signin_limits``)."""

    __tablename__ = "market_signin_failures"
    __table_args__ = (Index("ix_market_signin_failures_key_failed_at", "key", "failed_at"),)
