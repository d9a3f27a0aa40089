"""The money ledger: double entry, so the sum over all accounts is always zero."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Integer, Numeric, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow


class LedgerEntry(MarketBase):
    """One leg of a money movement; the legs of a transaction share ``txn``.

    Accounts are strings: ``requester:<id>``, ``worker:<id>``, ``fees`` and
    ``external`` (where deposits come from).
    """

    __tablename__ = "market_ledger_entries"
    # One leg per account per transaction: replaying a payment cannot double it.
    __table_args__ = (UniqueConstraint("txn", "account"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    txn: Mapped[str] = mapped_column(String(64), index=True)
    account: Mapped[str] = mapped_column(String(64), index=True)
    amount: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    kind: Mapped[str] = mapped_column(String(16))
    reference: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class AccountBalance(MarketBase):
    """An account's balance: the sum of its ledger legs, kept as they are written.

    Reading a balance is then one row, not a sum over every leg the account
    ever had (a requester approving 100,000 assignments has 100,000 of them),
    and the row is what concurrent payments lock before they check funds.
    """

    __tablename__ = "market_account_balances"

    account: Mapped[str] = mapped_column(String(64), primary_key=True)
    balance: Mapped[Decimal] = mapped_column(Numeric(14, 2))
