"""Paying the crowd out: payout addresses, pay-out runs recorded in the ledger, their CSV.

A worker's ledger account holds what they earned (approved rewards, bonuses)
less what was paid out, so what a worker is owed is their kept balance. A run
locks the balances it pays (in account order, the order every payment takes
them), records one :class:`Payout` and one balanced ledger transaction
``payout:<id>`` per worker (the worker's account down, ``external`` up) and
flushes; the caller commits, and only then is the money sent, from the CSV.
After that commit the workers' balances are zero, so a second run, or a retry
of one whose commit did go through, pays nothing again; a run whose commit
did not go through recorded nothing. The CSV of a recorded run can be
written again from its rows (:func:`run_lines`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TextIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import ledger
from hits.market.errors import RequestError
from hits.market.models import AccountBalance, Payout, PayoutAddress, PayoutRun, Worker
from hits.market.recruited import NO_PASSWORD
from hits.money import CENT, format_amount

CURRENCY = "USD"
#: The columns of PayPal Payouts' payment file (its web upload takes the rows without this header).
CSV_COLUMNS = ("Email/Phone", "Amount", "Currency code", "Reference ID", "Note")

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#: An e-mail address as payment services take it. The first character is a letter or digit on
#: purpose: a cell starting with = + - @ is a formula to a spreadsheet opening the CSV.
EMAIL = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._%+-]{{0,63}}@{_LABEL}(?:\.{_LABEL})+")
#: A phone number once spaces, dashes, dots and brackets are dropped: digits only (no leading +,
#: for the same reason; payment services take a domestic mobile number).
PHONE = re.compile(r"[0-9]{7,15}")
_PHONE_SEPARATORS = re.compile(r"[\s().-]")


def check_address(text: str) -> str:
    """``text`` as a payout address (an e-mail address or a phone number), else a RequestError."""
    address = text.strip()
    if len(address) <= 254 and EMAIL.fullmatch(address):
        return address
    digits = _PHONE_SEPARATORS.sub("", address)
    if PHONE.fullmatch(digits):
        return digits
    raise RequestError(
        "Give the e-mail address or mobile phone number (digits only, no +) your payments should go to."
    )


def payout_address(session: Session, worker_id: str) -> str | None:
    """Where ``worker_id`` is paid, or None if they have not said."""
    return session.scalar(select(PayoutAddress.address).where(PayoutAddress.worker_id == worker_id))


def set_payout_address(session: Session, worker_id: str, text: str) -> str | None:
    """Set (or, given an empty ``text``, clear) where ``worker_id`` is paid; the address stored."""
    row = session.get(PayoutAddress, worker_id)
    if not text.strip():
        if row is not None:
            session.delete(row)
            session.flush()
        return None
    address = check_address(text)
    if row is None:
        session.add(PayoutAddress(worker_id=worker_id, address=address, updated_at=utcnow()))
    else:
        row.address, row.updated_at = address, utcnow()
    session.flush()
    return address


@dataclass(frozen=True)
class Owed:
    """What one worker is owed, and where it would go."""

    worker_id: str
    username: str
    amount: Decimal
    address: str | None


@dataclass(frozen=True)
class Plan:
    """A run's workers: those it pays, those it leaves owed (no address, under the minimum), and those
    a recruiting platform pays (their balance is what the site credited, already paid there)."""

    payees: list[Owed]
    no_address: list[Owed]
    below_minimum: list[Owed]
    paid_elsewhere: list[Owed] = field(default_factory=list)

    @property
    def total(self) -> Decimal:
        """What the run pays in all."""
        return sum((o.amount for o in self.payees), Decimal("0.00"))


def plan(session: Session, minimum: Decimal, *, lock: bool = False) -> Plan:
    """Who is owed what now, ``minimum`` or more to be paid; ``lock`` holds their balances until commit."""
    if minimum < 0 or minimum != minimum.quantize(CENT):
        raise ValueError("the minimum is a non-negative amount in cents")
    prefix = ledger.worker_account("")
    stmt = (
        select(AccountBalance.account, AccountBalance.balance)
        .where(AccountBalance.account.startswith(prefix), AccountBalance.balance > 0)
        .order_by(AccountBalance.account)
    )
    balances = session.execute(stmt.with_for_update() if lock else stmt).all()
    owed = {account.removeprefix(prefix): Decimal(balance).quantize(CENT) for account, balance in balances}
    workers: dict[str, str] = {}
    recruited: set[str] = set()
    for worker_id, username, password_hash in session.execute(
        select(Worker.id, Worker.username, Worker.password_hash).where(Worker.id.in_(owed))
    ):
        workers[worker_id] = username
        if password_hash == NO_PASSWORD:
            recruited.add(worker_id)
    addresses = dict(
        session.execute(
            select(PayoutAddress.worker_id, PayoutAddress.address).where(PayoutAddress.worker_id.in_(owed))
        ).all()
    )
    result = Plan([], [], [])
    for worker_id, amount in owed.items():
        if worker_id not in workers:
            continue  # a ledger account with no worker behind it (made outside the site): nobody to pay
        row = Owed(worker_id, workers[worker_id], amount, addresses.get(worker_id))
        if worker_id in recruited:
            # A participant recruited on another platform is paid there (study reward and
            # bonuses through its API); paying their balance here too would pay them twice.
            result.paid_elsewhere.append(row)
        elif row.address is None:
            result.no_address.append(row)
        elif amount < minimum or amount <= 0:
            result.below_minimum.append(row)
        else:
            result.payees.append(row)
    return result


@dataclass(frozen=True)
class PayoutLine:
    """One line of a run's payment file."""

    payout_id: int
    worker_id: str
    username: str
    address: str
    amount: Decimal
    currency: str
    run_id: int

    @property
    def reference(self) -> str:
        """The payment's reference at the payment service: unique, short, no spaces (PayPal: 30 at most)."""
        return f"hitforge-{self.payout_id}"


def run(session: Session, minimum: Decimal) -> tuple[PayoutRun | None, Plan]:
    """Record a pay-out run: each worker owed ``minimum`` or more, with an address, is paid it all.

    Each payment is a :class:`Payout` and a ledger transaction written before
    any money leaves; nothing is committed here. No run is recorded when
    nobody is to be paid.
    """
    found = plan(session, minimum, lock=True)
    if not found.payees:
        return None, found
    payout_run = PayoutRun(currency=CURRENCY, minimum=minimum, total=found.total, created_at=utcnow())
    session.add(payout_run)
    session.flush()
    for owed in found.payees:
        payout = Payout(
            run_id=payout_run.id,
            worker_id=owed.worker_id,
            amount=owed.amount,
            address=owed.address or "",
            created_at=payout_run.created_at,
        )
        session.add(payout)
        session.flush()
        ledger.post(
            session,
            f"payout:{payout.id}",
            "payout",
            [(ledger.worker_account(owed.worker_id), -owed.amount), (ledger.EXTERNAL, owed.amount)],
            reference=f"run:{payout_run.id}",
        )
    return payout_run, found


def run_lines(session: Session, run_id: int) -> list[PayoutLine]:
    """The payments a recorded run made, in worker order (to write its CSV again)."""
    rows = session.execute(
        select(Payout, Worker.username, PayoutRun.currency)
        .join(Worker, Worker.id == Payout.worker_id)
        .join(PayoutRun, PayoutRun.id == Payout.run_id)
        .where(Payout.run_id == run_id)
        .order_by(Payout.worker_id)
    ).all()
    return [
        PayoutLine(p.id, p.worker_id, username, p.address, Decimal(p.amount), currency, p.run_id)
        for p, username, currency in rows
    ]


def write_csv(lines: Iterable[PayoutLine], out: TextIO, *, header: bool = False) -> int:
    """Write ``lines`` as a bulk payment file (PayPal Payouts' columns); the number of payments written."""
    writer = csv.writer(out)
    if header:
        writer.writerow(CSV_COLUMNS)
    written = 0
    for line in lines:
        note = f"hitforge earnings, pay-out run {line.run_id}"
        writer.writerow([line.address, format_amount(line.amount), line.currency, line.reference, note])
        written += 1
    return written


def reverse(session: Session, payout_id: int) -> Payout:
    """Give a payout the payment service did not make back to its worker's balance, once.

    A reversing ledger transaction ``payout-reversal:<id>`` (of kind ``payout``,
    so the year's paid-out total drops by it): the worker is owed the amount
    again and the next run pays it, to the address they have then. Reversing
    twice changes nothing more.
    """
    payout = session.get(Payout, payout_id)
    if payout is None:
        raise RequestError(f"Payout {payout_id} does not exist.")
    amount = Decimal(payout.amount)
    ledger.post(
        session,
        f"payout-reversal:{payout.id}",
        "payout",
        [(ledger.EXTERNAL, -amount), (ledger.worker_account(payout.worker_id), amount)],
        reference=f"run:{payout.run_id}",
    )
    return payout
