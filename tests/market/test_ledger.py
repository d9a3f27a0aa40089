"""The double-entry ledger, each test in a rolled-back transaction."""

from __future__ import annotations

import threading
import uuid
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market import ledger
from hits.market.accounts import create_requester
from hits.market.errors import RequestError
from hits.market.models import AccountBalance, LedgerEntry
from hits.money import MoneyError, mturk_fee, parse_amount


def test_fees_follow_mturks_schedule() -> None:
    assert mturk_fee(Decimal("1.00")) == Decimal("0.20")
    assert mturk_fee(Decimal("1.00"), max_assignments=10) == Decimal("0.40")
    assert mturk_fee(Decimal("0.01")) == Decimal("0.01")  # at least a cent
    assert mturk_fee(Decimal("0.00")) == Decimal("0.00")


def test_amounts_are_parsed_strictly() -> None:
    assert parse_amount("0.05") == Decimal("0.05")
    for bad in ("abc", "-1", "0.001", "NaN"):
        with pytest.raises(MoneyError):
            parse_amount(bad)
    with pytest.raises(MoneyError):
        parse_amount(0.05)  # type: ignore[arg-type]


def test_payment_is_exact_idempotent_and_balanced(market_db) -> None:
    key = create_requester(market_db, "ledger-test", Decimal("1.00"))
    account = ledger.requester_account(key.requester_id)
    fees_before = ledger.balance(market_db, ledger.FEES)  # other tests share the database
    args = dict(
        txn="reward:A1",
        kind="reward",
        requester_id=key.requester_id,
        worker_id="AWORKER",
        amount=Decimal("0.30"),
        max_assignments=3,
        reference="A1",
    )
    assert ledger.pay(market_db, **args) is True  # type: ignore[arg-type]
    assert ledger.pay(market_db, **args) is False  # type: ignore[arg-type]
    assert ledger.balance(market_db, account) == Decimal("0.64")
    assert ledger.balance(market_db, ledger.worker_account("AWORKER")) == Decimal("0.30")
    assert ledger.balance(market_db, ledger.FEES) - fees_before == Decimal("0.06")
    assert market_db.scalar(select(func.sum(LedgerEntry.amount))) == 0


def test_a_payment_never_overdraws(market_db) -> None:
    key = create_requester(market_db, "poor-requester", Decimal("0.10"))
    with pytest.raises(RequestError) as caught:
        ledger.pay(
            market_db,
            txn="reward:A2",
            kind="reward",
            requester_id=key.requester_id,
            worker_id="AW",
            amount=Decimal("0.10"),
            max_assignments=1,
            reference="A2",
        )
    assert caught.value.turk_error_code == "AWS.MechanicalTurk.InsufficientFunds"
    assert ledger.balance(market_db, ledger.requester_account(key.requester_id)) == Decimal("0.10")


def test_a_requester_who_never_paid_in_is_refused(market_db) -> None:
    key = create_requester(market_db, "never-paid-in")  # no deposit: no balance row at all
    with pytest.raises(RequestError) as caught:
        _reward(market_db, key.requester_id, "N1", "ANEVER", "0.05", max_assignments=1)
    assert caught.value.turk_error_code == "AWS.MechanicalTurk.InsufficientFunds"
    assert ledger.balance(market_db, ledger.requester_account(key.requester_id)) == Decimal("0.00")
    assert (
        market_db.scalar(select(func.count()).where(LedgerEntry.txn.like(f"reward:{key.requester_id}:%")))
        == 0
    )


def _reward(  # type: ignore[no-untyped-def]
    session, requester_id: str, reference: str, worker_id: str, amount: str, max_assignments: int
) -> bool:
    return ledger.pay(
        session,
        txn=f"reward:{requester_id}:{reference}",
        kind="reward",
        requester_id=requester_id,
        worker_id=worker_id,
        amount=Decimal(amount),
        max_assignments=max_assignments,
        reference=reference,
    )


def test_kept_balances_equal_the_sum_of_their_legs(market_db) -> None:
    key = create_requester(market_db, "kept-balances", Decimal("5.00"))
    for n in range(4):
        _reward(market_db, key.requester_id, f"K{n}", f"AKEPT{n % 2}", "0.25", max_assignments=10)
    ledger.deposit(market_db, key.requester_id, Decimal("1.10"), txn="deposit:kept:2")
    sums = dict(
        market_db.execute(
            select(LedgerEntry.account, func.sum(LedgerEntry.amount)).group_by(LedgerEntry.account)
        ).all()
    )
    kept = dict(market_db.execute(select(AccountBalance.account, AccountBalance.balance)).all())
    assert kept  # the requester's and the workers' rows exist
    assert set(kept) == {a for a in sums if a.startswith(ledger.KEPT_BALANCE_PREFIXES)}
    assert all(kept[a] == sums[a] for a in kept)
    # 5.00 - 4 x (0.25 + 0.10 fee at 10 assignments) + 1.10
    assert ledger.balance(market_db, ledger.requester_account(key.requester_id)) == Decimal("4.70")
    assert ledger.balance(market_db, ledger.worker_account("AKEPT0")) == Decimal("0.50")


def test_concurrent_payments_never_spend_the_same_money_twice(market_sessions) -> None:
    with session_scope(market_sessions) as session:
        key = create_requester(session, f"race-{uuid.uuid4().hex[:8]}", Decimal("1.20"))
    outcomes: list[str] = []
    start = threading.Barrier(8)

    def pay(n: int) -> None:
        start.wait()
        try:
            with session_scope(market_sessions) as session:
                _reward(session, key.requester_id, str(n), f"ARACE{n}", "0.30", max_assignments=1)
            outcomes.append("paid")
        except RequestError as exc:
            outcomes.append(exc.turk_error_code or "?")

    threads = [threading.Thread(target=pay, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Each costs 0.36 with the fee: three fit in 1.20, the others are refused.
    assert outcomes.count("paid") == 3
    assert outcomes.count("AWS.MechanicalTurk.InsufficientFunds") == 5
    with session_scope(market_sessions) as session:
        assert ledger.balance(session, ledger.requester_account(key.requester_id)) == Decimal("0.12")
