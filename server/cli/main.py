"""The ``hitforge`` command group: serve, work, manage accounts, launch campaigns.

Each group lives in its own module of this package, listed in ``COMMANDS``
and imported only when it runs (``server/cli/lazy.py``): ``hitforge --help``
imports no command. Commands from installed packages join through the
``hitforge.commands`` entry-point group (the demo's ``demo`` and ``quality``
come that way, so the product never imports the demo). A name
``group.command``, in the table or an entry point, joins the group of that name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from server.cli.lazy import Lazy, LazyGroup

#: The entry-point group through which packages add commands.
COMMANDS_GROUP = "hitforge.commands"

#: Every command of this package: name -> where it lives and its line in ``hitforge --help``
#: (what its docstring's first sentence says; tests/test_cli_startup.py holds them together).
#: Adding a command is one line here.
COMMANDS: dict[str, Lazy] = {
    "batch": Lazy(
        "server.cli.batch:batch", "Projects as in MTurk's requester UI: an HTML layout published over a CSV."
    ),
    "campaign": Lazy(
        "server.cli.campaign:campaign",
        "Campaigns: check a file before paying, its schema and reference; list, status, pause, resume, "
        "cancel, extend, budget and add work.",
    ),
    "campaign.list": Lazy(
        "server.cli.campaign_control:list_campaigns",
        "The campaigns, newest first: name, template, state, progress and money.",
    ),
    "campaign.pause": Lazy(
        "server.cli.campaign_control:pause",
        "Expire the campaign's open HITs now; submitted work is still reviewed and paid.",
    ),
    "campaign.resume": Lazy(
        "server.cli.campaign_control:resume", "Open a paused campaign's HITs again, for a fresh lifetime."
    ),
    "campaign.cancel": Lazy(
        "server.cli.campaign_control:cancel",
        "Stop taking work for good; submitted work is reviewed and paid as usual, then it ends.",
    ),
    "campaign.extend": Lazy(
        "server.cli.campaign_control:extend", "Let a running campaign's open HITs take work longer."
    ),
    "campaign.add": Lazy(
        "server.cli.campaign_control:add",
        "Add items to a running campaign in new HITs and publish them, within its budget.",
    ),
    "campaign.budget": Lazy(
        "server.cli.campaign_control:budget",
        "Set the campaign's budget in dollars (never below what it has committed).",
    ),
    "invite": Lazy(
        "server.cli.invite:invite", "Invitation links for a crowd you know: each grants a qualification."
    ),
    "launch": Lazy(
        "server.cli.launch:launch",
        "Validate a campaign file, store it, and publish its HITs through the API.",
    ),
    "payouts": Lazy(
        "server.cli.payouts:payouts",
        "Pay-outs to workers: statements, pay-out runs as a payment file, yearly totals.",
    ),
    "qualification": Lazy(
        "server.cli.qualification:qualification",
        "Qualification tests: item banks, MTurk export, grading, item analysis.",
    ),
    "qualification.publish": Lazy(
        "server.cli.qualification_publish:publish",
        "Create the qualification type for BANK through the API and open its test on the worker site.",
    ),
    "recruit": Lazy(
        "server.cli.recruit:recruit",
        "Recruiting on Prolific: a campaign's study, its places, pause, resume and stop.",
    ),
    "recruit.codes": Lazy(
        "server.cli.recruit_panel:codes",
        "Each participant's own completion code (recruit.per_participant_codes), for those who took a place.",
    ),
    "recruit.links": Lazy(
        "server.cli.recruit_panel:links",
        "Each participant's own entry link (recruit.signed_links): IDS is a file of ids, one per line.",
    ),
    "requester": Lazy("server.cli.accounts:requester", "Requester accounts of the marketplace."),
    "results": Lazy("server.cli.results:results", "Campaign results: exports and aggregation."),
    "results.rounds": Lazy(
        "server.cli.workflow:rounds",
        "A workflow's per-round record: time, tokens, parts of speech, Jaccard and edit distance.",
    ),
    "beat": Lazy(
        "server.cli.serve:beat",
        "Run the beat scheduler on its own: the one that holds the lease schedules, on any number of hosts.",
    ),
    "serve": Lazy(
        "server.cli.serve:serve",
        "Run the server: the development server, or with --production as in production.",
    ),
    "staff": Lazy("server.cli.accounts:staff", "Dashboard users (QA staff, requesters, admins)."),
    "staff.token": Lazy(
        "server.cli.api_tokens:token",
        "Print a new API token for USERNAME (shown once), or revoke all of theirs.",
    ),
    "target": Lazy(
        "server.cli.target:target",
        "Target-object identification (template 'target'): import and export per-system files.",
    ),
    "worker": Lazy("server.cli.serve:worker", "Run a Celery worker for the review pipeline."),
    "workers": Lazy(
        "server.cli.worker_accounts:workers",
        "Worker accounts of the marketplace: create, Masters, locale and adult status.",
    ),
    "workflow": Lazy(
        "server.cli.workflow:workflow", "Multi-stage campaigns (workflows): launch, status, step."
    ),
}


@click.group(cls=LazyGroup, table=COMMANDS, plugins=COMMANDS_GROUP)
def main() -> None:
    """hitforge: a self-hosted, MTurk-compatible crowdsourcing backend."""


@main.group()
def db() -> None:
    """Database schema, backups and restores."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply all migrations to both halves' databases."""
    from rich.console import Console

    from hits.schema import upgrade
    from hits.settings import load_settings

    console = Console()
    for side in upgrade(load_settings()):
        console.print(side.describe(), highlight=False)


@db.command("backup")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def db_backup(folder: Path) -> None:
    """Back up both halves' databases into FOLDER while hitforge runs (requester side first)."""
    from rich.console import Console

    from hits.backup import BackupError, back_up
    from hits.settings import load_settings

    console = Console()
    try:
        saved = back_up(load_settings(), folder)
    except BackupError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
    for database in saved:
        at = ", ".join(database.revisions) or "no revision"
        console.print(f"{database.side} database ({database.kind}, at {at}) -> {folder / database.file}")
    console.print(f"backup complete in {folder}; copy the media folders with it (docs/operations.md)")


@db.command("restore")
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path))
def db_restore(folder: Path) -> None:
    """Restore the backup in FOLDER into new, empty databases (the ones HITFORGE_* names)."""
    from rich.console import Console

    from hits.backup import BackupError, restore
    from hits.settings import load_settings

    console = Console()
    try:
        saved = restore(load_settings(), folder)
    except BackupError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
    for database in saved:
        console.print(f"{database.side} database restored from {folder / database.file}")
    console.print("run hitforge db upgrade if this code has newer migrations, then start the services")


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
