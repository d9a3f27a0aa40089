"""``hitforge payouts``: paying a crowd hitforge pays itself, from the marketplace's ledger.

A run records what it pays in the ledger before any money moves: the CSV it
writes is what the operator uploads to the payment service afterwards.
"""

from __future__ import annotations

import os
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import click

from server.cli.sessions import open_sessions

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from hits.market.payouts import Plan


def _amount(text: str, option: str) -> Decimal:
    from hits.money import MoneyError, parse_amount

    try:
        return parse_amount(text, field=option)
    except MoneyError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from exc


@click.group()
def payouts() -> None:
    """Pay-outs to workers: statements, pay-out runs as a payment file, yearly totals."""


@payouts.command("statement")
@click.argument("worker")
def statement(worker: str) -> None:
    """WORKER's (id or user name) rewards, bonuses, fees, paid out and owed, by year."""
    from sqlalchemy import or_, select

    from hits.db import session_scope
    from hits.market.models import Worker
    from hits.market.worker_statements import statement as worker_statement

    with session_scope(open_sessions("market")) as session:
        found = session.scalar(select(Worker).where(or_(Worker.id == worker, Worker.username == worker)))
        if found is None:
            raise click.BadParameter(f"no worker with id or user name {worker!r}", param_hint="WORKER")
        figures = worker_statement(session, found.id)
        click.echo(f"{found.username} ({found.id})")
        click.echo(f"{'year':<6}{'rewards':>12}{'bonuses':>12}{'fees':>12}{'paid out':>12}")
        for y in [*figures.years, figures.total]:
            label = str(y.year) if y.year else "all"
            click.echo(f"{label:<6}{y.rewards:>12}{y.bonuses:>12}{y.fees:>12}{y.paid_out:>12}")
        click.echo(f"owed {figures.owed}  pending review {figures.pending}")
        click.echo("fees: the marketplace's fee on these payments, paid by the requesters")


def _describe(found: Plan) -> None:
    for owed in found.payees:
        click.echo(f"pay {owed.worker_id} ({owed.username}) {owed.amount} to {owed.address}")
    for owed in found.below_minimum:
        click.echo(f"keep {owed.worker_id} ({owed.username}) {owed.amount}: under the minimum")
    for owed in found.no_address:
        click.echo(f"keep {owed.worker_id} ({owed.username}) {owed.amount}: no payout address")
    for owed in found.paid_elsewhere:
        click.echo(
            f"skip {owed.worker_id} ({owed.username}) {owed.amount}: paid by the platform that recruited them"
        )


@payouts.command("run")
@click.option("--min", "minimum", default="5.00", show_default=True, help="Pay only workers owed this much.")
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("payouts.csv"), show_default=True
)
@click.option(
    "--header", is_flag=True, help="Start the CSV with its column names (PayPal's upload takes none)."
)
@click.option("--dry-run", is_flag=True, help="Show who would be paid; record and write nothing.")
def run(minimum: str, out: Path, header: bool, dry_run: bool) -> None:
    """Pay every worker what they are owed: record it in the ledger and write the payment file.

    The ledger rows and the CSV are one step: the file is put in place only
    once the run is committed, and a second run pays nobody twice.
    """
    from hits.db import session_scope
    from hits.market import payouts as domain

    floor = _amount(minimum, "--min")
    sessions = open_sessions("market")
    if dry_run:
        with session_scope(sessions) as session:
            found = domain.plan(session, floor)
        _describe(found)
        click.echo(f"dry run: {len(found.payees)} payment(s), {found.total} USD; nothing recorded")
        return
    if out.exists():
        # An earlier run's file may not be uploaded yet: never write over it.
        raise click.ClickException(f"{out} exists: move it away or name another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(handle)
    committed = False
    try:
        with session_scope(sessions) as session:
            recorded, found = domain.run(session, floor)
            if recorded is not None:
                run_id = recorded.id
                with open(temporary, "w", newline="", encoding="utf-8") as stream:
                    domain.write_csv(domain.run_lines(session, run_id), stream, header=header)
                    stream.flush()
                    os.fsync(stream.fileno())
        committed = True
        if recorded is not None:
            os.replace(temporary, out)  # committed: the file may now be used to pay
    finally:
        # A run that did not commit recorded nothing: its half-written file must not be used.
        if (not committed or recorded is None) and os.path.exists(temporary):
            os.unlink(temporary)
    _describe(found)
    if recorded is None:
        click.echo("nobody to pay: nothing recorded, no file written")
        return
    click.echo(f"run {run_id}: {len(found.payees)} payment(s), {found.total} USD, recorded; file {out}")
    click.echo(f"(lost the file? hitforge payouts export {run_id} --out FILE writes it again)")


@payouts.command("export")
@click.argument("run_id", type=int)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--header", is_flag=True, help="Start the CSV with its column names.")
def export(run_id: int, out: Path, header: bool) -> None:
    """Write RUN_ID's payment file again from what the run recorded (nothing is paid again)."""
    from hits.db import session_scope
    from hits.market import payouts as domain

    with session_scope(open_sessions("market")) as session:
        lines = domain.run_lines(session, run_id)
    if not lines:
        raise click.ClickException(f"no pay-out run {run_id}")
    with out.open("w", newline="", encoding="utf-8") as stream:
        written = domain.write_csv(lines, stream, header=header)
    click.echo(f"run {run_id}: {written} payment(s) written to {out}")


@payouts.command("reverse")
@click.argument("payout_id", type=int)
def reverse(payout_id: int) -> None:
    """Give back PAYOUT_ID (the number in its reference, hitforge-N) that the payment service did not pay.

    The worker is owed it again, and the next run pays it. Reversing twice changes nothing more.
    """
    from hits.db import session_scope
    from hits.market import payouts as domain
    from hits.market.errors import RequestError

    try:
        with session_scope(open_sessions("market")) as session:
            payout = domain.reverse(session, payout_id)
            worker_id, amount = payout.worker_id, payout.amount
    except RequestError as exc:
        raise click.ClickException(exc.message) from exc
    click.echo(f"payout {payout_id}: {amount} owed to {worker_id} again")


def _report(session: Session, year: int, threshold: Decimal, basis: str, every: bool) -> None:
    from hits.market.worker_statements import reportable, yearly_totals

    totals = yearly_totals(session, year)
    above = {t.worker_id for t in reportable(totals, threshold, basis=basis)}
    click.echo(f"{'worker':<22}{'user name':<24}{'earned':>12}{'paid out':>12}  reportable")
    for t in totals:
        if every or t.worker_id in above:
            mark = "yes" if t.worker_id in above else ""
            click.echo(f"{t.worker_id:<22}{t.username[:23]:<24}{t.earned:>12}{t.paid_out:>12}  {mark}")
    click.echo(f"{len(above)} worker(s) at or above {threshold} {basis} in {year}, of {len(totals)}")


@payouts.command("yearly")
@click.argument("year", type=click.IntRange(1970, 9998))
@click.option(
    "--threshold",
    envvar="HITFORGE_PAYOUT_REPORTING_THRESHOLD",
    default="2000.00",
    show_default=True,
    help="Report workers at or above this (env HITFORGE_PAYOUT_REPORTING_THRESHOLD).",
)
@click.option("--basis", type=click.Choice(["paid", "earned"]), default="paid", show_default=True)
@click.option(
    "--all", "every", is_flag=True, help="List every worker with money in YEAR, not only those reported."
)
def yearly(year: int, threshold: str, basis: str, every: bool) -> None:
    """YEAR's totals per worker (UTC) and the workers whose pay-outs reach the reporting threshold."""
    from hits.db import session_scope

    floor = _amount(threshold, "--threshold")
    with session_scope(open_sessions("market")) as session:
        _report(session, year, floor, basis, every)
