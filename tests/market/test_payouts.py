"""Statements and pay-outs: figures equal the marketplace's records, a run pays once, yearly totals."""

from __future__ import annotations

import csv
import threading
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market import ledger, payouts
from hits.market.accounts import create_worker
from hits.market.errors import RequestError
from hits.market.models import LedgerEntry, Payout, PayoutRun, Worker
from hits.market.worker_statements import reportable, statement, yearly_totals
from hits.money import mturk_fee
from server.cli.main import main
from tests.helpers import EXTERNAL_QUESTION
from tests.server.worker_helpers import WorkerClient, create_hit, csrf_of, soup

QUESTION = EXTERNAL_QUESTION.format(url="https://example.org/task")


def do_hit(worker: WorkerClient, hit_id: str) -> str:
    page = worker.post_form(worker.get("/"), f'tr[data-hit-id="{hit_id}"] form', {})
    assignment_id = page.url.rsplit("/", 1)[-1]
    done = worker.http.post(
        f"{worker.base}/mturk/externalSubmit", data={"assignmentId": assignment_id, "answer": "yes"}
    )
    assert done.status_code == 200
    return assignment_id


def cli(settings: Any, *args: str, env: dict[str, str] | None = None) -> Any:
    """``hitforge ARGS`` in process on the test session's databases."""
    base = {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
    }
    return CliRunner().invoke(main, list(args), env={**base, **(env or {})}, catch_exceptions=False)


def set_address(worker: WorkerClient, address: str) -> requests.Response:
    page = worker.get("/me/earnings")
    return worker.http.post(
        f"{worker.base}/me/payout-address", data={"csrf_token": csrf_of(page), "address": address}
    )


def cell(page: requests.Response, selector: str) -> Decimal:
    found = soup(page).select_one(selector)
    assert found is not None, selector
    return Decimal(found.get_text(strip=True).lstrip("$"))


def earn(mturk: Any, worker: WorkerClient, rewards: list[str], bonus: str | None = None) -> list[str]:
    """The worker does a HIT for each reward; all are approved; a bonus on the first. Assignment ids."""
    done = [do_hit(worker, create_hit(mturk, QUESTION, Reward=r)) for r in rewards]
    for assignment_id in done:
        mturk.approve_assignment(AssignmentId=assignment_id)
    if bonus:
        mturk.send_bonus(WorkerId=worker.worker_id, BonusAmount=bonus, AssignmentId=done[0], Reason="Thanks")
    return done


def test_the_statement_equals_the_marketplaces_own_records(
    live_server, mturk, market_sessions, settings
) -> None:
    worker = WorkerClient(live_server.url, "earner")
    approved = earn(mturk, worker, ["0.40", "0.35"], bonus="1.05")
    rejected = do_hit(worker, create_hit(mturk, QUESTION, Reward="0.50"))
    mturk.reject_assignment(AssignmentId=rejected, RequesterFeedback="No.")
    waiting = do_hit(worker, create_hit(mturk, QUESTION, Reward="0.20"))
    # What the API says was paid: approved assignments' rewards and the bonuses.
    rewards = Decimal(0)
    for assignment_id in approved:
        got = mturk.get_assignment(AssignmentId=assignment_id)
        assert got["Assignment"]["AssignmentStatus"] == "Approved"
        rewards += Decimal(got["HIT"]["Reward"])
    hit_ids = [mturk.get_assignment(AssignmentId=a)["HIT"]["HITId"] for a in approved]
    bonuses = sum(
        (
            Decimal(b["BonusAmount"])
            for h in hit_ids
            for b in mturk.list_bonus_payments(HITId=h)["BonusPayments"]
        ),
        Decimal(0),
    )
    assert (rewards, bonuses) == (Decimal("0.75"), Decimal("1.05"))
    fees = mturk_fee(Decimal("0.40")) + mturk_fee(Decimal("0.35")) + mturk_fee(Decimal("1.05"))
    with session_scope(market_sessions) as session:
        figures = statement(session, worker.worker_id)
    year = datetime.now(UTC).year
    assert [y.year for y in figures.years] == [year]
    this = figures.years[0]
    assert (this.rewards, this.bonuses, this.fees, this.paid_out) == (rewards, bonuses, fees, Decimal("0.00"))
    assert figures.owed == rewards + bonuses and figures.pending == Decimal("0.20")
    assert all(isinstance(v, Decimal) for v in (this.rewards, this.bonuses, this.fees, figures.owed))
    # The worker's page shows the same, and not the requester's fees.
    page = worker.get("/me/earnings")
    assert page.status_code == 200
    assert cell(page, "#statement-owed") == Decimal("1.80")
    assert cell(page, f'tr[data-year="{year}"] .rewards') == rewards
    assert cell(page, f'tr[data-year="{year}"] .bonuses') == bonuses
    assert cell(page, f'tr[data-year="{year}"] .paid-out') == Decimal("0.00")
    assert "fee" not in page.text.lower()
    assert waiting not in page.text
    # So does the CLI, for the requester's eyes, fees included.
    shown = cli(settings, "payouts", "statement", worker.username)
    assert shown.exit_code == 0, shown.output
    line = next(line.split() for line in shown.output.splitlines() if line.startswith(str(year)))
    assert line == [str(year), "0.75", "1.05", str(fees), "0.00"]
    assert "owed 1.80" in shown.output


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.reader(stream))


def test_a_run_records_the_ledger_writes_the_file_and_a_second_run_pays_nothing(
    live_server, mturk, market_sessions, settings, tmp_path
) -> None:
    paid, unaddressed, small = (WorkerClient(live_server.url, n) for n in ("paid", "noaddr", "small"))
    earn(mturk, paid, ["0.40", "0.45"], bonus="1.00")  # owed 1.85
    earn(mturk, unaddressed, ["0.90"])
    earn(mturk, small, ["0.10"])
    email = f"paid.{uuid.uuid4().hex[:6]}@example.org"
    assert set_address(paid, email).status_code == 200
    assert set_address(small, "+1 (555) 010-2030").status_code == 400  # no leading +: a spreadsheet formula
    assert set_address(small, "555 010 2030").status_code == 200
    page = small.get("/me/earnings")
    assert "5550102030" in soup(page).select_one("#payout-address").get_text()  # type: ignore[union-attr]

    preview = cli(settings, "payouts", "run", "--min", "1.00", "--dry-run")
    assert preview.exit_code == 0 and f"pay {paid.worker_id}" in preview.output
    assert (
        f"keep {small.worker_id} (" in preview.output and f"keep {unaddressed.worker_id} (" in preview.output
    )
    out = tmp_path / "payouts.csv"
    assert not out.exists()
    with session_scope(market_sessions) as session:
        assert ledger.balance(session, ledger.worker_account(paid.worker_id)) == Decimal("1.85")

    first = cli(settings, "payouts", "run", "--min", "1.00", "--out", str(out), "--header")
    assert first.exit_code == 0, first.output
    rows = read_csv(out)
    assert rows[0] == list(payouts.CSV_COLUMNS)
    mine = [r for r in rows[1:] if r[0] == email]
    assert len(mine) == 1 and mine[0][1:3] == ["1.85", "USD"]
    assert mine[0][3].startswith("hitforge-") and len(mine[0][3]) <= 30 and " " not in mine[0][3]
    assert not any(r[0] == "5550102030" for r in rows)  # 0.10 is under the minimum: still owed
    with session_scope(market_sessions) as session:
        account = ledger.worker_account(paid.worker_id)
        assert ledger.balance(session, account) == Decimal("0.00")
        legs = session.execute(
            select(LedgerEntry.txn, LedgerEntry.amount).where(
                LedgerEntry.account == account, LedgerEntry.kind == "payout"
            )
        ).all()
        assert len(legs) == 1 and legs[0].amount == Decimal("-1.85") and isinstance(legs[0].amount, Decimal)
        assert session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.txn == legs[0].txn)) == 0
        payout = session.scalar(select(Payout).where(Payout.worker_id == paid.worker_id))
        assert payout is not None and payout.amount == Decimal("1.85") and payout.address == email
        figures = statement(session, paid.worker_id)
        assert figures.owed == Decimal("0.00") and figures.total.paid_out == Decimal("1.85")
        assert ledger.balance(session, ledger.worker_account(unaddressed.worker_id)) == Decimal("0.90")
    page = paid.get("/me/earnings")
    assert cell(page, "#statement-owed") == Decimal("0.00") and cell(
        page, "#statement-total .paid-out"
    ) == Decimal("1.85")

    # A second run finds nobody owed among those paid: no file, nothing recorded.
    second_out = tmp_path / "again.csv"
    second = cli(settings, "payouts", "run", "--min", "1.00", "--out", str(second_out))
    assert second.exit_code == 0, second.output
    assert f"pay {paid.worker_id}" not in second.output
    if second_out.exists():  # other tests' workers with addresses may be owed by now; never this one
        assert not any(r[0] == email for r in read_csv(second_out))
    # The file of a recorded run is written again from its rows, never paid again.
    run_id = int(first.output.split("run ", 1)[1].split(":", 1)[0])
    again = tmp_path / "export.csv"
    exported = cli(settings, "payouts", "export", str(run_id), "--out", str(again), "--header")
    assert exported.exit_code == 0 and read_csv(again) == rows
    # An existing file is never written over.
    refused = CliRunner().invoke(
        main,
        ["payouts", "run", "--out", str(out)],
        env={
            "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
            "HITFORGE_VAR_DIR": str(settings.var_dir),
        },
    )
    assert refused.exit_code != 0 and "exists" in refused.output
    assert not list(tmp_path.glob(".*.part"))


def test_odd_payout_addresses_are_refused_without_a_server_error(live_server) -> None:
    worker = WorkerClient(live_server.url, "odd")
    for bad in (
        '=HYPERLINK("x")',
        "@SUM(A1)",
        "-2+3",
        "a@b",
        "x" * 300 + "@example.org",
        "a b@example.org",
        "\x00",
        "12",
    ):
        assert set_address(worker, bad).status_code == 400, bad
    assert set_address(worker, "ok@example.org").status_code == 200
    assert set_address(worker, "").status_code == 200  # cleared
    assert "not given a payout address" in worker.get("/me/earnings").text


def test_concurrent_runs_pay_a_worker_once(market_sessions) -> None:
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"racer-{uuid.uuid4().hex[:8]}", "a-long-password")
        worker_id = worker.id
        payouts.set_payout_address(session, worker_id, f"{worker_id.lower()}@example.org")
        ledger.post(
            session,
            f"test-earning:{worker_id}",
            "reward",
            [(ledger.EXTERNAL, Decimal("-12.34")), (ledger.worker_account(worker_id), Decimal("12.34"))],
        )
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def pay_out() -> None:
        try:
            barrier.wait()
            with session_scope(market_sessions) as session:
                payouts.run(session, Decimal("0.01"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=pay_out) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with session_scope(market_sessions) as session:
        paid = session.scalars(select(Payout.amount).where(Payout.worker_id == worker_id)).all()
        assert paid == [Decimal("12.34")]
        assert ledger.balance(session, ledger.worker_account(worker_id)) == Decimal("0.00")


def test_yearly_totals_and_the_reporting_threshold(market_db) -> None:
    def worker_with(name: str, earned: str, *, dated: datetime | None = None) -> str:
        worker = create_worker(market_db, f"{name}-{uuid.uuid4().hex[:8]}", "a-long-password")
        payouts.set_payout_address(market_db, worker.id, f"{worker.id.lower()}@example.org")
        amount = Decimal(earned)
        txn = f"test-earning:{worker.id}"
        ledger.post(
            market_db, txn, "bonus", [(ledger.EXTERNAL, -amount), (ledger.worker_account(worker.id), amount)]
        )
        if dated is not None:
            for leg in market_db.scalars(select(LedgerEntry).where(LedgerEntry.txn == txn)):
                leg.created_at = dated
            market_db.flush()
        return worker.id

    over = worker_with("over", "2500.00")
    exactly = worker_with("exactly", "2000.00")
    under = worker_with("under", "1999.99")
    last_year = worker_with("lastyear", "3000.00", dated=datetime(2025, 12, 31, 23, 59, 59, tzinfo=UTC))
    recorded, _ = payouts.run(market_db, Decimal("0.01"))
    assert recorded is not None
    year = datetime.now(UTC).year
    totals = {t.worker_id: t for t in yearly_totals(market_db, year)}
    assert totals[over].paid_out == Decimal("2500.00") and totals[over].earned == Decimal("2500.00")
    assert totals[under].paid_out == Decimal("1999.99")
    assert last_year in totals and totals[last_year].earned == Decimal("0.00")  # earned in 2025, paid now
    reported = {t.worker_id for t in reportable(list(totals.values()), Decimal("2000.00"))}
    assert {over, exactly, last_year} <= reported and under not in reported
    earned_basis = {
        t.worker_id for t in reportable(list(totals.values()), Decimal("2000.00"), basis="earned")
    }
    assert last_year not in earned_basis and over in earned_basis
    earlier = {t.worker_id: t for t in yearly_totals(market_db, 2025)}
    assert earlier[last_year].earned == Decimal("3000.00") and earlier[last_year].paid_out == Decimal("0.00")
    by_year = statement(market_db, last_year)
    assert [(y.year, y.bonuses, y.paid_out) for y in by_year.years] == [
        (2025, Decimal("3000.00"), Decimal("0.00")),
        (year, Decimal("0.00"), Decimal("3000.00")),
    ]
    assert market_db.scalar(select(PayoutRun.total).where(PayoutRun.id == recorded.id)) >= Decimal("9499.99")


def test_the_yearly_command_reads_its_threshold_from_the_environment(live_server, mturk, settings) -> None:
    worker = WorkerClient(live_server.url, "yearly")
    earn(mturk, worker, ["0.60"])
    year = str(datetime.now(UTC).year)
    low = cli(
        settings,
        "payouts",
        "yearly",
        year,
        "--basis",
        "earned",
        env={"HITFORGE_PAYOUT_REPORTING_THRESHOLD": "0.50"},
    )
    assert low.exit_code == 0, low.output
    assert any(worker.worker_id in line and line.rstrip().endswith("yes") for line in low.output.splitlines())
    default = cli(settings, "payouts", "yearly", year, "--basis", "earned")
    assert worker.worker_id not in default.output and "at or above 2000.00" in default.output
    bad = cli(settings, "payouts", "yearly", year, "--threshold", "lots")
    assert bad.exit_code != 0


def test_bad_addresses_are_refused_by_the_domain(market_db) -> None:
    worker = market_db.scalar(select(Worker).limit(1))
    if worker is None:
        worker = create_worker(market_db, f"d-{uuid.uuid4().hex[:8]}", "a-long-password")
    with pytest.raises(RequestError):
        payouts.set_payout_address(market_db, worker.id, "=1+1")
    assert payouts.check_address(" Someone.Else+pay@mail.example.org ") == "Someone.Else+pay@mail.example.org"
    assert payouts.check_address("(555) 010-2030") == "5550102030"


def test_a_payout_the_service_did_not_make_is_owed_again_once(market_db) -> None:
    worker = create_worker(market_db, f"bounced-{uuid.uuid4().hex[:8]}", "a-long-password")
    payouts.set_payout_address(market_db, worker.id, "typo@example.org")
    amount = Decimal("7.77")
    ledger.post(
        market_db,
        f"test-earning:{worker.id}",
        "reward",
        [(ledger.EXTERNAL, -amount), (ledger.worker_account(worker.id), amount)],
    )
    recorded, _ = payouts.run(market_db, Decimal("5.00"))
    assert recorded is not None
    payout = market_db.scalar(select(Payout).where(Payout.worker_id == worker.id))
    assert payout is not None
    for _ in range(2):  # the second reversal changes nothing
        payouts.reverse(market_db, payout.id)
        assert ledger.balance(market_db, ledger.worker_account(worker.id)) == amount
    figures = statement(market_db, worker.id)
    assert figures.owed == amount and figures.total.paid_out == Decimal("0.00")
    payouts.set_payout_address(market_db, worker.id, "right@example.org")
    again, found = payouts.run(market_db, Decimal("5.00"))
    assert again is not None and [
        (o.worker_id, o.amount, o.address) for o in found.payees if o.worker_id == worker.id
    ] == [(worker.id, amount, "right@example.org")]
    assert statement(market_db, worker.id).total.paid_out == amount
    with pytest.raises(RequestError):
        payouts.reverse(market_db, 2**31 - 1)


def test_a_participant_recruited_on_another_platform_is_not_paid_out_here(market_db) -> None:
    """Prolific pays its participants; their balance here is what the site credited, not owed again."""
    from hits.market.recruited import recruited_worker

    participant = recruited_worker(market_db, "prolific", uuid.uuid4().hex[:24])
    payouts.set_payout_address(market_db, participant.id, "participant@example.org")
    amount = Decimal("9.00")
    ledger.post(
        market_db,
        f"test-earning:{participant.id}",
        "reward",
        [(ledger.EXTERNAL, -amount), (ledger.worker_account(participant.id), amount)],
    )
    found = payouts.plan(market_db, Decimal("5.00"))
    assert participant.id not in {o.worker_id for o in found.payees}
    assert [o.amount for o in found.paid_elsewhere if o.worker_id == participant.id] == [amount]
    payouts.run(market_db, Decimal("5.00"))
    assert market_db.scalar(select(Payout).where(Payout.worker_id == participant.id)) is None
