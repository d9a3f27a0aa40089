"""``hitforge staff token NAME``: an API token for a dashboard user's scripts, or revoke them all."""

from __future__ import annotations

import sys

import click
from rich.console import Console

console = Console()


@click.command("token")
@click.argument("username")
@click.option("--label", default="", help="What the token is for, e.g. 'nightly export'.")
@click.option("--revoke", is_flag=True, help="Revoke every token of the user instead.")
def token(username: str, label: str, revoke: bool) -> None:
    """Print a new API token for USERNAME (shown once), or revoke all of theirs."""
    from hits.db import session_scope
    from hits.requester.campaigns.api_tokens import issue_token, revoke_tokens
    from hits.requester.campaigns.staff import StaffError
    from hits.settings import load_settings
    from server.cli.sessions import open_sessions

    settings = load_settings()
    try:
        with session_scope(open_sessions("requester", settings)) as session:
            if revoke:
                n = revoke_tokens(session, username)
                console.print(f"revoked {n} token{'s' if n != 1 else ''} of {username}", highlight=False)
                return
            issued = issue_token(session, username, label)
    except StaffError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
    # The token on stdout alone, so a script can capture it; the rest on stderr.
    click.echo(issued)
    click.echo(
        f"API token for {username}: keep it secret, it is shown once. Use it as "
        f"'Authorization: Bearer <token>' on {settings.public_url}/api/v1 "
        f"(description: {settings.public_url}/api/v1/openapi.json).",
        err=True,
    )
