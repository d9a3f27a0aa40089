"""The double-entry ledger, each test in a rolled-back transaction."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import func, select

from hits.market import ledger
from hits.market.accounts import create_requester
from hits.market.errors import RequestError
from hits.market.models import LedgerEntry
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
