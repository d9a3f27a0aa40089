"""A worker's statement (earned, fees, paid out, owed, by year) and the yearly totals of every worker.

Every figure is summed from the ledger, the marketplace's one record of
money: approved rewards and bonuses are the legs paid into the worker's
account (kinds ``reward`` and ``bonus``), pay-outs the legs taken out (kind
``payout``), and the marketplace's fee on a payment is the ``fees`` leg of the
same transaction (the requester paid it; the worker's own page leaves it out).
Years are calendar years in UTC, by when the ledger recorded the movement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy import and_, extract, func, select
from sqlalchemy.orm import Session, aliased

from hits.market import ledger
from hits.market.models import LedgerEntry, Worker
from hits.market.worker_dashboard import earnings
from hits.money import CENT

EARNING_KINDS = ("reward", "bonus")
PAYOUT_KIND = "payout"
#: The reporting threshold when none is configured: US requesters file a 1099-NEC for a
#: contractor paid $2,000 or more in 2026 (it was $600 before).
DEFAULT_REPORTING_THRESHOLD = Decimal("2000.00")
ZERO = Decimal("0.00")


@dataclass
class YearFigures:
    """One calendar year of a worker's money."""

    year: int
    rewards: Decimal = ZERO
    bonuses: Decimal = ZERO
    fees: Decimal = ZERO
    paid_out: Decimal = ZERO

    @property
    def earned(self) -> Decimal:
        """Approved rewards and bonuses."""
        return self.rewards + self.bonuses


@dataclass
class Statement:
    """A worker's statement: each year's figures, what they are owed now, reward still under review."""

    worker_id: str
    years: list[YearFigures] = field(default_factory=list)
    owed: Decimal = ZERO
    pending: Decimal = ZERO

    @property
    def total(self) -> YearFigures:
        """All years added up (``year`` 0)."""
        total = YearFigures(0)
        for y in self.years:
            total.rewards += y.rewards
            total.bonuses += y.bonuses
            total.fees += y.fees
            total.paid_out += y.paid_out
        return total


def _money(value: object) -> Decimal:
    return Decimal(str(value or 0)).quantize(CENT)


def statement(session: Session, worker_id: str) -> Statement:
    """``worker_id``'s statement from the ledger; ``owed`` is their balance (earned less paid out)."""
    account = ledger.worker_account(worker_id)
    year = extract("year", LedgerEntry.created_at)
    by_year: dict[int, YearFigures] = {}
    rows = session.execute(
        select(year, LedgerEntry.kind, func.sum(LedgerEntry.amount))
        .where(LedgerEntry.account == account)
        .group_by(year, LedgerEntry.kind)
    ).all()
    for y, kind, amount in rows:
        figures = by_year.setdefault(int(y), YearFigures(int(y)))
        if kind == "reward":
            figures.rewards += _money(amount)
        elif kind == "bonus":
            figures.bonuses += _money(amount)
        elif kind == PAYOUT_KIND:
            figures.paid_out -= _money(amount)  # taken out of the account: a negative leg
    mine, fee = aliased(LedgerEntry), aliased(LedgerEntry)
    paid_year = extract("year", mine.created_at)
    fees = session.execute(
        select(paid_year, func.sum(fee.amount))
        .select_from(mine)
        .join(fee, and_(fee.txn == mine.txn, fee.account == ledger.FEES))
        .where(mine.account == account, mine.kind.in_(EARNING_KINDS))
        .group_by(paid_year)
    ).all()
    for y, amount in fees:
        by_year.setdefault(int(y), YearFigures(int(y))).fees += _money(amount)
    return Statement(
        worker_id=worker_id,
        years=[by_year[y] for y in sorted(by_year)],
        owed=ledger.balance(session, account),
        pending=earnings(session, worker_id).pending,
    )


@dataclass(frozen=True)
class YearTotal:
    """One worker's totals for a calendar year."""

    worker_id: str
    username: str
    earned: Decimal
    paid_out: Decimal


def year_bounds(year: int) -> tuple[datetime, datetime]:
    """The first instant of ``year`` and of the next, UTC."""
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def yearly_totals(session: Session, year: int) -> list[YearTotal]:
    """Every worker's earnings and pay-outs recorded in ``year``, by worker id."""
    start, end = year_bounds(year)
    prefix = ledger.worker_account("")
    rows = session.execute(
        select(LedgerEntry.account, LedgerEntry.kind, func.sum(LedgerEntry.amount))
        .where(
            LedgerEntry.account.startswith(prefix),
            LedgerEntry.created_at >= start,
            LedgerEntry.created_at < end,
            LedgerEntry.kind.in_((*EARNING_KINDS, PAYOUT_KIND)),
        )
        .group_by(LedgerEntry.account, LedgerEntry.kind)
    ).all()
    earned: dict[str, Decimal] = {}
    paid: dict[str, Decimal] = {}
    for account, kind, amount in rows:
        worker_id = account.removeprefix(prefix)
        if kind == PAYOUT_KIND:
            paid[worker_id] = paid.get(worker_id, ZERO) - _money(amount)
        else:
            earned[worker_id] = earned.get(worker_id, ZERO) + _money(amount)
    ids = sorted(earned.keys() | paid.keys())
    names = dict(session.execute(select(Worker.id, Worker.username).where(Worker.id.in_(ids))).all())
    return [YearTotal(w, names.get(w, ""), earned.get(w, ZERO), paid.get(w, ZERO)) for w in ids if w in names]


def reportable(totals: list[YearTotal], threshold: Decimal, *, basis: str = "paid") -> list[YearTotal]:
    """The workers whose year's pay-outs (``basis="paid"``) or earnings (``"earned"``) reach ``threshold``."""
    if basis not in ("paid", "earned"):
        raise ValueError(f"basis is 'paid' or 'earned', not {basis!r}")
    return [t for t in totals if (t.paid_out if basis == "paid" else t.earned) >= threshold]
