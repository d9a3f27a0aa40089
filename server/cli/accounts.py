"""``hitforge requester`` and ``hitforge staff``: requester accounts and dashboard users."""

from __future__ import annotations

import click
from rich.console import Console

from server.cli.passwords import password_options, read_password
from server.cli.sessions import open_sessions

console = Console()
#: Where ``staff create`` reads a password from when it is set (a script's way in; else it asks).
STAFF_PASSWORD_ENV = "HITFORGE_STAFF_PASSWORD"  # noqa: S105 - the name of a variable, not a password


@click.group()
def requester() -> None:
    """Requester accounts of the marketplace."""


@requester.command("create")
@click.argument("name")
@click.option("--deposit", default="0.00", show_default=True, help="Prepaid balance in USD.")
def requester_create(name: str, deposit: str) -> None:
    """Create a requester with an access-key pair (shown once)."""
    from hits.db import session_scope
    from hits.market.accounts import create_requester
    from hits.money import parse_amount
    from hits.settings import load_settings

    settings = load_settings()
    sessions = open_sessions("market", settings)
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
    from hits.db import session_scope
    from hits.market.models import Requester
    from hits.market.requester_options import set_options
    from hits.settings import load_settings

    settings = load_settings()
    sessions = open_sessions("market", settings)
    with session_scope(sessions) as session:
        if session.get(Requester, requester_id) is None:
            raise click.BadParameter(f"no requester {requester_id}", param_hint="REQUESTER_ID")
        try:
            set_options(session, requester_id, throttle_rate=throttle_rate, fault_rate=fault_rate)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc
    console.print(f"throttle_rate={throttle_rate} fault_rate={fault_rate} for {requester_id}")


@click.group()
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
@password_options(default_env=STAFF_PASSWORD_ENV)
def staff_create(username: str, role: str, access_key: str | None, password_env: str | None) -> None:
    """Create a dashboard user (qa: assigned campaigns; requester: its own; admin: all).

    The password is asked for (hidden, twice), or read from HITFORGE_STAFF_PASSWORD
    or the variable named with --password-env; never taken on the command line.
    """
    from werkzeug.security import generate_password_hash

    from hits.db import session_scope
    from hits.requester.campaigns.staff import StaffError, create_staff
    from hits.settings import load_settings

    password = read_password(password_env, STAFF_PASSWORD_ENV)
    settings = load_settings()
    try:
        with session_scope(open_sessions("requester", settings)) as session:
            create_staff(session, username, role, generate_password_hash(password), access_key)
    except StaffError as exc:
        raise click.UsageError(str(exc)) from exc
    console.print(f"created {role} user {username}", highlight=False)
    console.print(f"sign in at {settings.public_url.rstrip('/')}/dashboard/signin", highlight=False)


@staff.command("assign")
@click.argument("username")
@click.argument("campaign")
def staff_assign(username: str, campaign: str) -> None:
    """Let a QA reviewer (or a requester user) see and review CAMPAIGN (its id or name)."""
    from hits.db import session_scope
    from hits.requester.campaigns.staff import StaffError, assign_campaign
    from hits.settings import load_settings

    settings = load_settings()
    try:
        with session_scope(open_sessions("requester", settings)) as session:
            user, found, new = assign_campaign(session, username, campaign)
            state = "is now" if new else "was already"
            message = f"{user.username} {state} assigned to campaign {found.id} ({found.name})"
    except StaffError as exc:
        raise click.UsageError(str(exc)) from exc
    console.print(message, highlight=False)
    console.print(
        f"{username} reviews it at {settings.public_url.rstrip('/')}/dashboard/queue", highlight=False
    )


@staff.command("unassign")
@click.argument("username")
@click.argument("campaign")
def staff_unassign(username: str, campaign: str) -> None:
    """Take CAMPAIGN (its id or name) away from a user assigned to it."""
    from hits.db import session_scope
    from hits.requester.campaigns.staff import unassign_campaign
    from hits.settings import load_settings

    settings = load_settings()
    with session_scope(open_sessions("requester", settings)) as session:
        removed = unassign_campaign(session, username, campaign)
    if not removed:
        raise click.UsageError(f"{username} is not assigned to campaign {campaign}")
    console.print(f"{username} is no longer assigned to campaign {campaign}", highlight=False)
