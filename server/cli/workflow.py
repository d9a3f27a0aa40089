"""``hitforge workflow``: launch a multi-stage campaign, watch its stages and pictures, step it by hand.

``hitforge results rounds`` prints the per-round record of its rounds stages.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from server.cli.sessions import open_sessions

# The domain is imported in the commands: ``hitforge workflow --help`` needs none of it.

console = Console()


def _sessions():  # type: ignore[no-untyped-def]
    return open_sessions()


@click.group()
def workflow() -> None:
    """Multi-stage campaigns (workflows): launch, status, step."""


@workflow.command("launch")
@click.argument("campaign_file", type=click.Path(dir_okay=False))
def launch(campaign_file: str) -> None:
    """Store a campaign file that declares a workflow, and publish its first stage.

    An object-annotation first stage whose pictures wait for a seeder's
    objects is published by the Celery workers once they are seeded.

    Later stages (and every round of a rounds stage) are published by the
    Celery workers as approved work comes in (or by ``hitforge workflow step``).
    """
    from hits.db import session_scope
    from hits.requester.campaigns.service import BudgetExceeded, PublishInterrupted, publish_campaign
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.files.campaign import load_campaign_file
    from hits.requester.mturk import Marketplace
    from hits.requester.workflows.engine import stages_of
    from hits.requester.workflows.first_stage import needs_seeding
    from hits.requester.workflows.setup import create_workflow
    from hits.settings import load_settings

    settings = load_settings()
    try:
        loaded = load_campaign_file(Path(campaign_file))
    except (InputFileError, InputFileErrors) as exc:
        raise click.ClickException(str(exc)) from exc
    if loaded.spec.workflow is None:
        raise click.ClickException(
            f"{campaign_file} declares no workflow: launch it with `hitforge launch {campaign_file}`"
        )
    try:
        market = Marketplace.from_settings(settings)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    sessions = _sessions()
    try:
        with session_scope(sessions) as session:
            created = create_workflow(session, loaded)
            created.access_key_id = market.access_key_id
            workflow_id, name = created.id, created.name
            first = stages_of(session, workflow_id)[0]
            single_first = first.kind == "single"
            first_campaign = first.campaign_id
            to_seed = needs_seeding(session, workflow_id)
    except (BudgetExceeded, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    if to_seed:
        # A seeder may be a slow model: the Celery step asks it, then publishes the first stage.
        console.print(f"workflow {name!r} launched; the Celery workers seed its first stage and publish it")
        return
    if single_first:
        try:
            publish_campaign(sessions, market, first_campaign, settings.public_url + "/tasks/hit")
        except PublishInterrupted as exc:
            raise click.ClickException(
                f"{exc}; finish with: hitforge launch --resume {campaign_file}"
            ) from exc
    console.print(f"workflow {name!r} launched; the Celery workers take it from here")


@workflow.command("step")
@click.argument("name")
def step(name: str) -> None:
    """Advance a workflow once now (seed, make and publish due rounds), as a Celery worker does."""
    from hits.db import session_scope
    from hits.requester.mturk import Marketplace
    from hits.requester.quality.outbox import apply_entries
    from hits.requester.workflows.publish import run_step
    from hits.requester.workflows.report import find_workflow
    from hits.settings import load_settings

    settings = load_settings()
    sessions = _sessions()
    with session_scope(sessions) as session:
        found = find_workflow(session, name)
        if found is None:
            raise click.ClickException(f"no workflow named {name!r}")
        workflow_id = found.id
    try:
        market = Marketplace.from_settings(settings)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    report = run_step(sessions, market, workflow_id, settings.public_url + "/tasks/hit")
    if report.outbox:
        apply_entries(sessions, market, report.outbox)  # decisions on rounds' work, as a worker would
    console.print(
        f"seeded {report.seeded}, made {report.created} round(s), published {report.published} HIT(s)"
        + ("; the workflow is done" if report.finished else "")
    )
    for error in report.errors:
        console.print(f"[yellow]warning:[/yellow] {error}", highlight=False)


@workflow.command("status")
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def status(name: str, fmt: str) -> None:
    """The stage graph, each picture's state, and what it is waiting on."""
    from dataclasses import asdict

    from hits.db import session_scope
    from hits.requester.workflows.report import find_workflow, workflow_view

    with session_scope(_sessions()) as session:
        found = find_workflow(session, name)
        if found is None:
            raise click.ClickException(f"no workflow named {name!r}")
        view = workflow_view(session, found)
    if fmt == "json":
        click.echo(json.dumps(asdict(view), indent=2))
        return
    console.print(
        f"workflow [bold]{view.name}[/bold]: {view.status}; committed {view.committed} of {view.budget}",
        highlight=False,
    )
    graph = Table(title="Stages")
    for col in ("stage", "from", "template", "kind", "campaign", "status", "HITs", "pictures"):
        graph.add_column(col)
    for s in view.stages:
        pictures = ", ".join(f"{k} {v}" for k, v in sorted(s.chains.items())) or "-"
        graph.add_row(
            s.name, s.source, s.template, s.kind, s.campaign, s.campaign_status, str(s.hits), pictures
        )
    console.print(graph)
    if view.chains:
        chains = Table(title="Pictures")
        for col in (
            "stage",
            "item",
            "state",
            "rounds",
            "attempts",
            "last Jaccard",
            "waiting on",
            "why stopped",
        ):
            chains.add_column(col)
        for c in view.chains:
            chains.add_row(
                c.stage,
                c.key,
                c.status,
                str(c.rounds_approved),
                str(c.attempts),
                "-" if c.last_jaccard is None else f"{c.last_jaccard:.2f}",
                c.waiting_on,
                c.stop_reason or "",
            )
        console.print(chains)
    if view.items:
        items = Table(title="Pictures of single stages")
        for col in ("stage", "item", "state", "waiting on", "note"):
            items.add_column(col)
        for i in view.items:
            items.add_row(i.stage, i.key, i.state, i.waiting_on, i.note)
        console.print(items)


@click.command("rounds")
@click.argument("name")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "jsonl"]), default="table", show_default=True
)
@click.option("--per-round", is_flag=True, help="One row per picture and round instead of means per round.")
@click.option("--all-attempts", is_flag=True, help="With --per-round: rejected and open attempts too.")
def rounds(name: str, fmt: str, per_round: bool, all_attempts: bool) -> None:
    """A workflow's per-round record: time, tokens, parts of speech, Jaccard and edit distance.

    By default, the mean of each figure per round number (how they evolve);
    parts-of-speech columns appear only when a tagger is installed.
    """
    from hits.db import session_scope
    from hits.requester.workflows.report import find_workflow, round_records, round_summary

    with session_scope(_sessions()) as session:
        found = find_workflow(session, name)
        if found is None:
            raise click.ClickException(f"no workflow named {name!r}")
        records = round_records(session, found.id, all_attempts=all_attempts and per_round)
    rows = records if per_round else round_summary(records)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if fmt == "jsonl":
        for row in rows:
            click.echo(json.dumps(row))
    elif fmt == "csv":
        writer = csv.DictWriter(sys.stdout, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    else:
        table = Table(title=f"{name}: " + ("rounds" if per_round else "means per round"))
        for col in columns:
            table.add_column(col)
        for row in rows:
            table.add_row(*("-" if row.get(c) is None else str(row.get(c)) for c in columns))
        console.print(table)
