"""``hitforge campaign list|pause|resume|cancel|extend|budget``: a campaign's life from the shell.

Each change is what the dashboard's campaign page does (``hits.requester.campaigns.control``):
one outbox entry and one audit-log line (under the "command line" user, with the
shell's user name). The entry is applied at once through the API; if the
marketplace cannot be reached it stays queued, and the Celery worker's sweep
applies it later.
"""

from __future__ import annotations

import sys
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn, cast

import click
from rich.console import Console

console = Console()


def _fail(message: str) -> NoReturn:
    console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    sys.exit(2)


@click.command("list")
@click.option("--status", "status", default=None, help="Only campaigns in this state (running, paused, ...).")
def list_campaigns(status: str | None) -> None:
    """The campaigns, newest first: name, template, state, progress and money."""
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.money import dollars
    from hits.requester.campaigns.progress import campaign_progress
    from hits.requester.tables.campaigns import Campaign
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    with session_scope(open_sessions("requester", load_settings())) as session:
        query = select(Campaign).order_by(Campaign.created_at.desc(), Campaign.id.desc())
        if status:
            query = query.where(Campaign.status == status)
        rows = []
        for c in session.scalars(query):
            p = campaign_progress(session, c)
            rows.append(
                (
                    c.name,
                    c.template,
                    c.status,
                    f"{p.submitted}/{p.planned_assignments}",
                    f"{dollars(p.committed)} of {dollars(p.budget)}",
                )
            )
    if not rows:
        console.print("no campaigns" + (f" {status}" if status else ""), highlight=False)
        return
    header = ("name", "template", "state", "submitted", "committed")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        console.print("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)), highlight=False)


def _change(name: str, change: str, note: str, **options: Any) -> None:
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.campaigns import control
    from hits.requester.mturk import Marketplace
    from hits.requester.quality import outbox
    from hits.requester.tables.campaigns import Campaign
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    sessions = open_sessions("requester", settings)
    with session_scope(sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        if campaign is None:
            _fail(f"there is no campaign named {name!r}")
        user = control.command_line_user(session)
        try:
            if change == "budget":
                said, entries = control.raise_budget(session, campaign, options["budget"], user, note), []
            else:
                done = control.change_campaign(
                    session,
                    campaign,
                    cast(control.Change, change),
                    user,
                    note,
                    extend_seconds=options.get("seconds"),
                )
                said, entries = done.said, done.entry_ids
        except control.ControlRefused as exc:
            session.rollback()
            _fail(str(exc))
    console.print(said, highlight=False, soft_wrap=True)
    if not entries:
        return
    try:
        report = outbox.apply_entries(sessions, Marketplace.from_settings(settings), entries)
    except Exception as exc:  # noqa: BLE001 - unreachable or misconfigured: the worker's sweep retries
        console.print(
            f"[yellow]queued:[/yellow] the marketplace was not reached ({exc}); the Celery worker "
            "applies it when it can",
            highlight=False,
        )
        return
    for outcome in report.outcomes.values():
        console.print(f"applied: {outcome}", highlight=False)
    for error in report.failures.values():
        console.print(f"[yellow]queued:[/yellow] {error}; the Celery worker retries it", highlight=False)


_NOTE = click.option("--note", default="", help="A note for the audit log.")


@click.command("pause")
@click.argument("name")
@_NOTE
def pause(name: str, note: str) -> None:
    """Expire the campaign's open HITs now; submitted work is still reviewed and paid."""
    _change(name, "pause", note)


@click.command("resume")
@click.argument("name")
@_NOTE
def resume(name: str, note: str) -> None:
    """Open a paused campaign's HITs again, for a fresh lifetime."""
    _change(name, "resume", note)


@click.command("cancel")
@click.argument("name")
@_NOTE
def cancel(name: str, note: str) -> None:
    """Stop taking work for good; submitted work is reviewed and paid as usual, then it ends."""
    _change(name, "cancel", note)


@click.command("extend")
@click.argument("name")
@click.option(
    "--hours",
    type=click.IntRange(1, 365 * 24),
    required=True,
    help="Take work until this many hours from now.",
)
@_NOTE
def extend(name: str, hours: int, note: str) -> None:
    """Let a running campaign's open HITs take work longer."""
    _change(name, "extend", note, seconds=hours * 3600)


@click.command("budget")
@click.argument("name")
@click.argument("amount")
@_NOTE
def budget(name: str, amount: str, note: str) -> None:
    """Set the campaign's budget in dollars (never below what it has committed)."""
    try:
        value = Decimal(amount.strip().lstrip("$"))
    except InvalidOperation:
        _fail(f"{amount!r} is not a sum in dollars, such as 250.00")
    if not value.is_finite() or value != value.quantize(Decimal("0.01")) or value > 10**9:
        _fail(f"{amount!r} is not a sum in dollars and cents, such as 250.00")
    _change(name, "budget", note, budget=value)


@click.command("add")
@click.argument("name")
@click.argument("items_file", type=click.Path(exists=True, dir_okay=False))
@_NOTE
def add(name: str, items_file: str, note: str) -> None:
    """Add items to a running campaign in new HITs and publish them, within its budget."""
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.campaigns import control
    from hits.requester.campaigns.add_work import add_work
    from hits.requester.campaigns.service import PublishInterrupted, publish_campaign
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.mturk import Marketplace
    from hits.requester.tables.campaigns import Campaign
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    sessions = open_sessions("requester", settings)
    with session_scope(sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        if campaign is None:
            _fail(f"there is no campaign named {name!r}")
        try:
            added = add_work(session, campaign, items_file, control.command_line_user(session), note)
        except (control.ControlRefused, InputFileError, InputFileErrors) as exc:
            session.rollback()
            _fail(str(exc))
        campaign_id = campaign.id
    console.print(added.said(name), highlight=False, soft_wrap=True)
    try:
        report = publish_campaign(
            sessions, Marketplace.from_settings(settings), campaign_id, settings.public_url + "/tasks/hit"
        )
    except PublishInterrupted as exc:
        console.print(
            f"[red]error:[/red] {exc}\nFix the cause, then publish the rest with: "
            f"hitforge launch --resume {name}",
            highlight=False,
        )
        sys.exit(1)
    console.print(f"published {report.published} HITs", highlight=False)
