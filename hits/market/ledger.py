"""Money movements in the marketplace's double-entry ledger.

Every transaction's legs sum to zero and a transaction id is written once per
account, so replaying a payment (a retried request, a restarted task) is a
no-op rather than a second charge.
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.market.errors import RequestError
from hits.market.models import LedgerEntry
from hits.money import mturk_fee

EXTERNAL = "external"
FEES = "fees"


def requester_account(requester_id: str) -> str:
    return f"requester:{requester_id}"


def worker_account(worker_id: str) -> str:
    return f"worker:{worker_id}"


def balance(session: Session, account: str) -> Decimal:
    """The balance of ``account``: the sum of its legs."""
    total = session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account == account))
    return Decimal(total or 0).quantize(Decimal("0.01"))


def transaction_exists(session: Session, txn: str) -> bool:
    return session.scalar(select(LedgerEntry.id).where(LedgerEntry.txn == txn).limit(1)) is not None


def post(
    session: Session, txn: str, kind: str, legs: list[tuple[str, Decimal]], reference: str | None = None
) -> bool:
    """Write a balanced transaction once; return False if ``txn`` was already posted."""
    if sum((amount for _, amount in legs), Decimal(0)) != 0:
        raise ValueError(f"unbalanced transaction {txn}: {legs}")
    if transaction_exists(session, txn):
        return False
    for account, amount in legs:
        if amount != 0:
            session.add(LedgerEntry(txn=txn, account=account, amount=amount, kind=kind, reference=reference))
    session.flush()
    return True


def deposit(session: Session, requester_id: str, amount: Decimal, txn: str) -> None:
    """Prepay ``amount`` into a requester's balance."""
    post(session, txn, "deposit", [(EXTERNAL, -amount), (requester_account(requester_id), amount)])


def pay(
    session: Session,
    *,
    txn: str,
    kind: str,
    requester_id: str,
    worker_id: str,
    amount: Decimal,
    max_assignments: int,
    reference: str,
) -> bool:
    """Move ``amount`` from requester to worker, plus MTurk's fee, exactly once.

    Refuses with ``AWS.MechanicalTurk.InsufficientFunds`` rather than let a
    balance go negative.
    """
    if transaction_exists(session, txn):
        return False
    fee = mturk_fee(amount, max_assignments=max_assignments)
    charge = amount + fee
    available = balance(session, requester_account(requester_id))
    if charge > available:
        raise RequestError(
            f"This Requester has insufficient funds in their account to complete this "
            f"transaction: needs {charge}, has {available}.",
            "AWS.MechanicalTurk.InsufficientFunds",
        )
    return post(
        session,
        txn,
        kind,
        [(requester_account(requester_id), -charge), (worker_account(worker_id), amount), (FEES, fee)],
        reference=reference,
    )
