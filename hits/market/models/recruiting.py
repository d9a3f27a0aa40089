"""A crowd hitforge recruits and pays itself: invitation links, payout addresses, pay-out runs."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Integer, Numeric, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow


class Invitation(MarketBase):
    """A link that signs a worker up (or takes a signed-in one) and grants a qualification.

    Only a hash of the link's token is kept: a copy of the database does not
    hold working links.
    """

    __tablename__ = "market_invitations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    qualification_type_id: Mapped[str] = mapped_column(
        ForeignKey("market_qualification_types.id"), index=True
    )
    integer_value: Mapped[int] = mapped_column(Integer, default=1)
    uses_allowed: Mapped[int] = mapped_column(Integer, default=1)
    uses_count: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class InvitationUse(MarketBase):
    """One worker's use of an invitation: a worker counts once per invitation."""

    __tablename__ = "market_invitation_uses"
    __table_args__ = (UniqueConstraint("invitation_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    invitation_id: Mapped[int] = mapped_column(ForeignKey("market_invitations.id"), index=True)
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    used_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class PayoutAddress(MarketBase):
    """Where a worker is paid: the e-mail address or phone number a bulk payment service takes."""

    __tablename__ = "market_payout_addresses"

    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), primary_key=True)
    address: Mapped[str] = mapped_column(String(254))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class PayoutRun(MarketBase):
    """One pay-out run: what was owed to whom, recorded before the money leaves."""

    __tablename__ = "market_payout_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    currency: Mapped[str] = mapped_column(String(3), default="USD")
    minimum: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    total: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Payout(MarketBase):
    """What one run pays one worker; its ledger transaction is ``payout:<id>``."""

    __tablename__ = "market_payouts"
    __table_args__ = (UniqueConstraint("run_id", "worker_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("market_payout_runs.id"), index=True)
    worker_id: Mapped[str] = mapped_column(ForeignKey("market_workers.id"), index=True)
    amount: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    address: Mapped[str] = mapped_column(String(254))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
