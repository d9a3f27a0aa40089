"""``hitforge campaign``: check a campaign file before paying; its schema, reference and status."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

console = Console()

#: Exit statuses of ``campaign check``: the files have mistakes; the plan costs more than the budget.
FILE_MISTAKES, OVER_BUDGET = 2, 1


def _fail(message: str, code: int) -> NoReturn:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    sys.exit(code)


@click.group()
def campaign() -> None:
    """Campaigns: check a file before paying, its schema and reference; list, status, pause, resume,
    cancel, extend, budget and add work."""


def print_plan(lines: list[str]) -> None:
    """The plan's lines under a heading (``campaign check`` and ``launch`` print the same)."""
    console.print("[bold]plan[/bold]", highlight=False)
    for line in lines:
        console.print(f"  {line}", highlight=False, soft_wrap=True)


def watch_lines(name: str, campaign_id: int, public_url: str) -> list[str]:
    """Where to watch a launched campaign: its dashboard page and the status command."""
    return [
        f"watch it at   {public_url}/dashboard/campaigns/{campaign_id}",
        f"status:       hitforge campaign status {name}",
    ]


@campaign.command("check")
@click.argument("campaign_file", type=click.Path(dir_okay=False))
@click.option(
    "--preview-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the HIT page previews here (default: a new temporary folder, printed at the end).",
)
def check(campaign_file: str, preview_dir: str | None) -> None:
    """Check a campaign file as launch would, preview its HIT pages and print the plan and cost.

    Nothing is stored and the marketplace is not contacted. Exits 2 when the
    files have mistakes (each named with file, line and field), 1 when the
    plan costs more than the budget, 0 when it is ready to launch.
    """
    from hits.requester.campaigns.check import check_campaign_file, plan_lines
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.settings import load_settings
    from server.requester.hit_pages.preview import write_previews

    try:
        checked = check_campaign_file(campaign_file)
    except (InputFileError, InputFileErrors) as exc:
        _fail(str(exc), FILE_MISTAKES)
    for warning in checked.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
    folder = Path(preview_dir) if preview_dir else Path(tempfile.mkdtemp(prefix="hitforge-preview-"))
    previews = write_previews(checked.loaded, folder, load_settings())
    for picture in sorted(set(previews.missing)):
        console.print(f"[yellow]warning:[/yellow] picture {picture!r} is not in media_dir", highlight=False)
    print_plan(plan_lines(checked.plan))
    if checked.loaded.spec.workflow is not None:
        console.print(
            "  (the first stage of a workflow: launch it with `hitforge workflow launch`; "
            "later stages are planned as it runs)",
            highlight=False,
            soft_wrap=True,
        )
    console.print("HIT pages as workers will see them:", highlight=False)
    for page in previews.pages:
        console.print(f"  {page}", highlight=False, soft_wrap=True)
    if checked.plan.over_budget:
        _fail(
            f"the plan costs {checked.plan.cost} but the budget is {checked.plan.budget}; raise budget or "
            "lower reward, assignments_per_hit or the number of items",
            OVER_BUDGET,
        )
    console.print("[green]ready to launch[/green]", highlight=False)


@campaign.command("schema")
def schema() -> None:
    """Print the campaign file's JSON Schema (draft 2020-12), for editors."""
    from hits.requester.files.schema import campaign_schema

    click.echo(json.dumps(campaign_schema(), indent=2, ensure_ascii=False))


@campaign.command("reference")
def reference() -> None:
    """Print docs/campaigns.md: every key of the campaign file and every template's files."""
    from hits.requester.files.reference import reference_markdown

    click.echo(reference_markdown(), nl=False)


@campaign.command("status")
@click.argument("name")
def status(name: str) -> None:
    """A campaign's HITs, assignments and money so far."""
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.money import dollars
    from hits.requester.campaigns.progress import DECISION_WORDS, campaign_progress
    from hits.requester.tables.campaigns import Campaign
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    with session_scope(open_sessions("requester", settings)) as session:
        found = session.scalar(select(Campaign).where(Campaign.name == name))
        if found is None:
            _fail(f"there is no campaign named {name!r}", FILE_MISTAKES)
        progress = campaign_progress(session, found)
        hits = ", ".join(f"{n} {state}" for state, n in sorted(progress.hits.items())) or "none"
        decided = ", ".join(
            f"{progress.decisions.get(key, 0)} {word}" for key, word in DECISION_WORDS.items()
        )
        lines = [
            f"campaign:     {found.name} (template {found.template}): {found.status}",
            f"HITs:         {progress.hit_count} ({hits})",
            f"assignments:  {progress.submitted} of {progress.planned_assignments} submitted ({decided})",
            f"workers:      {progress.workers}",
            f"money:        {dollars(progress.spent)} spent, {dollars(progress.committed)} committed, "
            f"budget {dollars(progress.budget)}",
            f"dashboard:    {settings.public_url}/dashboard/campaigns/{found.id}",
        ]
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
