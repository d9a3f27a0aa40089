"""The ``hitforge`` command: serve, work, manage accounts, launch campaigns, demo."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from hits.settings import load_settings

console = Console()


@click.group()
def main() -> None:
    """hitforge: a self-hosted, MTurk-compatible crowdsourcing backend."""


@main.group()
def db() -> None:
    """Database schema."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Apply all migrations to both halves' databases."""
    from hits.schema import upgrade

    for side in upgrade(load_settings()):
        console.print(side.describe(), highlight=False)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option(
    "--production",
    is_flag=True,
    help="Serve with granian, --workers processes of --threads threads, instead of the development server.",
)
@click.option("--workers", default=2, show_default=True, type=click.IntRange(min=1), help="--production")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(min=1), help="--production")
def serve(host: str, port: int, production: bool, workers: int, threads: int) -> None:
    """Run the server: the development server, or with --production as in production."""
    from server.cdn.cli import check_operator_map

    check_operator_map()  # an unusable HITFORGE_CDN_MAP is one line here, not a traceback in the app
    if production:
        from server.runner import production_argv

        argv = production_argv(host=host, port=port, workers=workers, threads=threads)
        # Replace this process: signals (a supervisor's SIGTERM) go straight to granian.
        os.execv(argv[0], argv)  # noqa: S606 - our own interpreter
    from werkzeug.serving import run_simple

    from server import create_app

    run_simple(host, port, create_app(), threaded=True, use_reloader=False)


@main.command()
@click.option("--concurrency", "-c", default=2, show_default=True, type=int)
@click.option("--beat/--no-beat", default=True, show_default=True, help="Also run the periodic sync.")
@click.option("--loglevel", default="INFO", show_default=True)
def worker(concurrency: int, beat: bool, loglevel: str) -> None:
    """Run a Celery worker for the review pipeline."""
    from workers import create_celery_app

    app = create_celery_app(load_settings())
    argv = [
        "worker",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
    ]
    if beat:
        argv.append("--beat")
    app.worker_main(argv)


@main.group()
def requester() -> None:
    """Requester accounts of the marketplace."""


@requester.command("create")
@click.argument("name")
@click.option("--deposit", default="0.00", show_default=True, help="Prepaid balance in USD.")
def requester_create(name: str, deposit: str) -> None:
    """Create a requester with an access-key pair (shown once)."""
    from hits.db import make_engine, make_session_factory, session_scope
    from hits.market.accounts import create_requester
    from hits.money import parse_amount

    settings = load_settings()
    sessions = make_session_factory(make_engine(settings.market_database_url))
    with session_scope(sessions) as session:
        key = create_requester(session, name, parse_amount(deposit, field="--deposit"))
    console.print(f"requester id: {key.requester_id}")
    console.print(f"HITFORGE_MTURK_ACCESS_KEY_ID={key.access_key_id}")
    console.print(f"HITFORGE_MTURK_SECRET_ACCESS_KEY={key.secret_access_key}")


@requester.command("test-options")
@click.argument("requester_id")
@click.option("--throttle-rate", type=float, default=None, help="Calls per second allowed.")
@click.option("--fault-rate", type=float, default=None, help="Probability (0 to 1) of a ServiceFault.")
def requester_test_options(requester_id: str, throttle_rate: float | None, fault_rate: float | None) -> None:
    """Throttle a requester or inject faults, to test retry code; no options switches both off."""
    from hits.db import make_engine, make_session_factory, session_scope
    from hits.market.models import Requester
    from hits.market.requester_options import set_options

    settings = load_settings()
    sessions = make_session_factory(make_engine(settings.market_database_url))
    with session_scope(sessions) as session:
        if session.get(Requester, requester_id) is None:
            raise click.BadParameter(f"no requester {requester_id}", param_hint="REQUESTER_ID")
        try:
            set_options(session, requester_id, throttle_rate=throttle_rate, fault_rate=fault_rate)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc
    console.print(f"throttle_rate={throttle_rate} fault_rate={fault_rate} for {requester_id}")


@main.group()
def staff() -> None:
    """Dashboard users (QA staff, requesters, admins)."""


@staff.command("create")
@click.argument("username")
@click.option("--role", type=click.Choice(["qa", "requester", "admin"]), default="qa", show_default=True)
@click.option(
    "--access-key",
    default=None,
    help="requester role: its marketplace account's access key (it sees the campaigns published with it).",
)
@click.password_option()
def staff_create(username: str, role: str, access_key: str | None, password: str) -> None:
    """Create a dashboard user (qa: assigned campaigns; requester: its own; admin: all)."""
    from werkzeug.security import generate_password_hash

    from hits.campaigns.staff import StaffError, create_staff
    from hits.db import make_engine, make_session_factory, session_scope

    settings = load_settings()
    try:
        with session_scope(make_session_factory(make_engine(settings.database_url))) as session:
            create_staff(session, username, role, generate_password_hash(password), access_key)
    except StaffError as exc:
        raise click.UsageError(str(exc)) from exc
    console.print(f"created {role} user {username}", highlight=False)


@staff.command("assign")
@click.argument("username")
@click.argument("campaign")
def staff_assign(username: str, campaign: str) -> None:
    """Let a QA reviewer (or a requester user) see and review CAMPAIGN (its id or name)."""
    from hits.campaigns.staff import StaffError, assign_campaign
    from hits.db import make_engine, make_session_factory, session_scope

    settings = load_settings()
    try:
        with session_scope(make_session_factory(make_engine(settings.database_url))) as session:
            user, found, new = assign_campaign(session, username, campaign)
            state = "is now" if new else "was already"
            message = f"{user.username} {state} assigned to campaign {found.id} ({found.name})"
    except StaffError as exc:
        raise click.UsageError(str(exc)) from exc
    console.print(message, highlight=False)


@staff.command("unassign")
@click.argument("username")
@click.argument("campaign")
def staff_unassign(username: str, campaign: str) -> None:
    """Take CAMPAIGN (its id or name) away from a user assigned to it."""
    from hits.campaigns.staff import unassign_campaign
    from hits.db import make_engine, make_session_factory, session_scope

    settings = load_settings()
    with session_scope(make_session_factory(make_engine(settings.database_url))) as session:
        removed = unassign_campaign(session, username, campaign)
    if not removed:
        raise click.UsageError(f"{username} is not assigned to campaign {campaign}")
    console.print(f"{username} is no longer assigned to campaign {campaign}", highlight=False)


@main.command()
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
    from hits.campaigns.fileerrors import InputFileError, InputFileErrors
    from hits.campaigns.service import (
        BudgetExceeded,
        PublishInterrupted,
        campaign_to_resume,
        campaign_warnings,
        changed_fields,
        create_campaign,
        publish_campaign,
    )
    from hits.campaigns.spec import CampaignFile, load_campaign_file
    from hits.db import make_engine, make_session_factory, session_scope
    from hits.mturk import Marketplace

    def fail(message: str, code: int = 2) -> NoReturn:
        console.print(f"[red]error:[/red] {message}", highlight=False)
        sys.exit(code)

    settings = load_settings()
    loaded: CampaignFile | None = None
    if not resume or Path(campaign_file).is_file():
        try:
            loaded = load_campaign_file(Path(campaign_file))
        except (InputFileError, InputFileErrors) as exc:
            fail(str(exc))
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
    sessions = make_session_factory(make_engine(settings.database_url))
    try:
        with session_scope(sessions) as session:
            if resume:
                campaign = campaign_to_resume(session, loaded.spec.name if loaded else campaign_file)
                if loaded is not None and (changed := changed_fields(campaign, loaded.spec)):
                    console.print(
                        f"[yellow]warning:[/yellow] {', '.join(changed)} changed in the file since the "
                        "campaign was created; the rest of its HITs are published as first planned",
                        highlight=False,
                    )
            else:
                assert loaded is not None
                for warning in campaign_warnings(loaded):
                    console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)
                campaign = create_campaign(session, loaded)
            campaign_id, name = campaign.id, campaign.name
    except (BudgetExceeded, ValueError) as exc:
        fail(str(exc))
    from rich.progress import Progress

    try:
        with Progress(console=console) as progress:
            task = progress.add_task("publishing HITs", total=None)
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
    console.print(f"[green]campaign {name} is running[/green]")


@main.command()
@click.option("--keep-serving", is_flag=True, help="Leave the server up and print its URLs.")
@click.option(
    "--template",
    default="rating",
    show_default=True,
    help="Task template to demo: rating, select, write, spans, target, compare, sxs, objects, rank, "
    "heatmap or refine; iiw runs the ImageInWords workflow (object annotation, then descriptions "
    "refined round by round).",
)
@click.option("--port", default=0, type=int, help="Port for the server (default: a free one).")
@click.option("--hits", "hit_count", default=24, show_default=True, type=int)
def demo(keep_serving: bool, template: str, port: int, hit_count: int) -> None:
    """Run a whole campaign on the embedded default with a simulated crowd."""
    from hits.demo_tasks import get_demo_task
    from server.demo import run_demo

    try:
        if template != "iiw":  # the ImageInWords workflow (Task 1 then Task 2), server/demo_iiw.py
            get_demo_task(template)
    except KeyError as exc:
        console.print(f"[red]error:[/red] {exc.args[0]}; or iiw, the ImageInWords workflow", highlight=False)
        sys.exit(2)

    code = run_demo(console, keep_serving=keep_serving, template=template, port=port, hit_count=hit_count)
    sys.exit(code)


def _add_subcommands() -> None:
    """Command groups that live in their own modules."""
    from server.batch_cli import batch
    from server.qualification_cli import qualification
    from server.qualification_publish import publish
    from server.quality_cli import quality
    from server.results_cli import results
    from server.target_cli import target
    from server.worker_admin_cli import workers
    from server.workflow_cli import rounds, workflow

    qualification.add_command(publish)
    main.add_command(qualification)
    main.add_command(batch)
    main.add_command(results)
    main.add_command(quality)
    main.add_command(target)
    main.add_command(workers)
    main.add_command(workflow)
    results.add_command(rounds)


_add_subcommands()


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
