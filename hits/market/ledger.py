"""Money movements in the marketplace's double-entry ledger.

Every transaction's legs sum to zero and a transaction id is written once per
account, so replaying a payment (a retried request, a restarted task) is a
no-op rather than a second charge. Each account's balance is kept in its own
row, updated with every leg in the same transaction: reading it costs one row
whatever the account's history, and a payment locks the payer's row before it
checks the funds, so two concurrent payments cannot both spend the same money.
Only requesters' and workers' balances are kept so; the marketplace's own
accounts (fees, external) are summed when asked, so that every payment does
not queue on one shared row.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

from sqlalchemy import Insert, Select, bindparam, exists, func, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from hits.market.errors import RequestError
from hits.market.models import AccountBalance, LedgerEntry
from hits.money import mturk_fee

EXTERNAL = "external"
FEES = "fees"
#: Accounts whose balance has its own row (see the module's docstring).
KEPT_BALANCE_PREFIXES = ("requester:", "worker:")


def requester_account(requester_id: str) -> str:
    return f"requester:{requester_id}"


def worker_account(worker_id: str) -> str:
    return f"worker:{worker_id}"


def _money(total: Decimal | None) -> Decimal:
    """A summed or stored amount as dollars and cents (no row: nothing)."""
    return Decimal(total or 0).quantize(Decimal("0.01"))


def _kept(account: str) -> bool:
    return account.startswith(KEPT_BALANCE_PREFIXES)


def balance(session: Session, account: str, *, for_update: bool = False) -> Decimal:
    """The balance of ``account`` (the sum of its legs); ``for_update`` locks it until commit."""
    if _kept(account):
        stmt = select(AccountBalance.balance).where(AccountBalance.account == account)
        total = session.scalar(stmt.with_for_update() if for_update else stmt)
    else:
        total = session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account == account))
    return _money(total)


@cache
def _add_to_balance(dialect: str) -> Insert:
    """Add ``balance`` to ``account``'s kept balance (parameters ``account``, ``balance``).

    One statement whether or not the account has a row yet: two first
    payments to a new worker at once cannot collide on the insert. Built
    once per dialect and run for all of a transaction's legs at once.
    """
    insert_for = postgresql.insert if dialect == "postgresql" else sqlite.insert
    stmt = insert_for(AccountBalance)
    upsert: Insert = stmt.on_conflict_do_update(
        index_elements=[AccountBalance.account],
        set_={"balance": AccountBalance.balance + stmt.excluded.balance},
    )
    return upsert


@cache
def _insert_legs() -> Insert:
    return insert(LedgerEntry)


@cache
def _payer_funds() -> Select[Decimal, bool]:
    # The payer's kept balance, locked, and whether the transaction was already
    # posted: one round trip for what a payment must know before it writes.
    posted = exists().where(LedgerEntry.txn == bindparam("txn"))
    return (
        select(AccountBalance.balance, posted)
        .where(AccountBalance.account == bindparam("account"))
        .with_for_update(of=AccountBalance)
    )


def transaction_exists(session: Session, txn: str) -> bool:
    return session.scalar(select(LedgerEntry.id).where(LedgerEntry.txn == txn).limit(1)) is not None


def post(
    session: Session, txn: str, kind: str, legs: list[tuple[str, Decimal]], reference: str | None = None
) -> bool:
    """Write a balanced transaction once; return False if ``txn`` was already posted."""
    _check_balanced(txn, legs)
    if transaction_exists(session, txn):
        return False
    _write(session, txn, kind, legs, reference)
    return True


def _check_balanced(txn: str, legs: list[tuple[str, Decimal]]) -> None:
    if sum((amount for _, amount in legs), Decimal(0)) != 0:
        raise ValueError(f"unbalanced transaction {txn}: {legs}")


def _write(
    session: Session, txn: str, kind: str, legs: list[tuple[str, Decimal]], reference: str | None
) -> None:
    """Write ``txn``'s legs and move the kept balances; the caller checked it is new and balanced.

    Plain inserts, not ORM objects: nothing reads the legs back in the unit of work.
    """
    moving = [(account, amount) for account, amount in legs if amount != 0]
    if not moving:
        return
    connection = session.connection()
    connection.execute(
        _insert_legs(),
        [
            {"txn": txn, "account": account, "amount": amount, "kind": kind, "reference": reference}
            for account, amount in moving
        ],
    )
    kept = [{"account": account, "balance": amount} for account, amount in moving if _kept(account)]
    if kept:
        connection.execute(_add_to_balance(connection.dialect.name), kept)


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
    payer = requester_account(requester_id)
    funds = session.execute(_payer_funds(), {"account": payer, "txn": txn}).first()
    if funds is None:  # the payer has no balance row: it never had money
        if transaction_exists(session, txn):
            return False
        total = None
    else:
        total, posted = funds
        if posted:
            return False
    available = _money(total)
    fee = mturk_fee(amount, max_assignments=max_assignments)
    charge = amount + fee
    if charge > available:
        raise RequestError(
            f"This Requester has insufficient funds in their account to complete this "
            f"transaction: needs {charge}, has {available}.",
            "AWS.MechanicalTurk.InsufficientFunds",
        )
    legs = [(payer, -charge), (worker_account(worker_id), amount), (FEES, fee)]
    _check_balanced(txn, legs)
    _write(session, txn, kind, legs, reference)  # new: checked above, with the funds
    return True
