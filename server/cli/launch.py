"""``hitforge launch``: validate a campaign file, store it, publish its HITs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from hits.settings import load_settings
from server.cli.sessions import open_sessions

console = Console()


@click.command()
@click.argument("campaign_file", metavar="CAMPAIGN_FILE")
@click.option(
    "--resume",
    is_flag=True,
    help="Publish the rest of a campaign whose launch stopped half way "
    "(CAMPAIGN_FILE may also be the campaign's name).",
)
def launch(campaign_file: str, resume: bool) -> None:
    """Validate a campaign file, store it, and publish its HITs through the API.

    A launch that stops half way (bad keys, the marketplace unreachable) is
    finished with --resume: HITs already created are never created again.
    """
    from hits.db import session_scope
    from hits.requester.campaigns.check import CheckedCampaign, check_campaign_file, plan_lines
    from hits.requester.campaigns.service import (
        BudgetExceeded,
        PublishInterrupted,
        changed_fields,
        create_campaign,
        publish_campaign,
    )
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.mturk import Marketplace
    from server.cli.campaign import print_plan, watch_lines
    from server.cli.recruit import launch_recruiting, recruiter_for, resume_target

    def fail(message: str, code: int = 2) -> NoReturn:
        console.print(f"[red]error:[/red] {message}", highlight=False)
        sys.exit(code)

    settings = load_settings()
    checked: CheckedCampaign | None = None
    if not resume or Path(campaign_file).is_file():
        try:
            # The same checks and plan as `hitforge campaign check` (hits.requester.campaigns.check).
            checked = check_campaign_file(Path(campaign_file))
        except (InputFileError, InputFileErrors) as exc:
            fail(str(exc))
        loaded = checked.loaded
        if loaded.spec.workflow is not None and not resume:  # a workflow's first stage may be resumed
            fail(
                f"{campaign_file} declares a workflow: launch it with "
                f"`hitforge workflow launch {campaign_file}`"
            )
    try:
        # Before anything is stored: missing keys must not leave a campaign behind.
        market = Marketplace.from_settings(settings)
    except RuntimeError as exc:
        fail(str(exc))
    recruiting = checked.loaded.spec.recruit if checked is not None else None
    if recruiting is not None and recruiting.platform == "prolific":
        # A missing Prolific token, like missing keys, stops the launch before anything is stored.
        recruiter_for(settings)
    sessions = open_sessions("requester", settings)
    study_only = False
    try:
        with session_scope(sessions) as session:
            if resume:
                # A launch stopped between its HITs and its Prolific study resumes with the study alone.
                campaign, study_only = resume_target(
                    session, checked.loaded.spec.name if checked else campaign_file
                )
                if checked is not None and (changed := changed_fields(campaign, checked.loaded.spec)):
                    console.print(
                        f"[yellow]warning:[/yellow] {', '.join(changed)} changed in the file since the "
                        "campaign was created; the rest of its HITs are published as first planned",
                        highlight=False,
                    )
            else:
                assert checked is not None
                for warning in checked.warnings:
                    console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
                print_plan(plan_lines(checked.plan))
                campaign = create_campaign(session, checked.loaded)
            campaign_id, name = campaign.id, campaign.name
    except (BudgetExceeded, ValueError) as exc:
        fail(str(exc))
    from rich.progress import Progress

    try:
        with Progress(console=console, disable=study_only) as progress:
            task = progress.add_task("publishing HITs", total=None)
            if not study_only:  # every HIT is out already: only the study is left
                publish_campaign(
                    sessions,
                    market,
                    campaign_id,
                    settings.public_url + "/tasks/hit",
                    progress=lambda done, total: progress.update(task, completed=done, total=total),
                )
    except PublishInterrupted as exc:
        fail(f"{exc}\nFix the cause, then publish the rest with: hitforge launch --resume {name}", 1)
    except ValueError as exc:
        fail(str(exc))
    launch_recruiting(sessions, settings, campaign_id, name)
    console.print(f"[green]campaign {name} is running[/green]")
    for line in watch_lines(name, campaign_id, settings.public_url):
        console.print(line, highlight=False, soft_wrap=True)
