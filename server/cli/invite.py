"""``hitforge invite``: invitation links that sign workers up and grant a requester's qualification."""

from __future__ import annotations

import click

from server.cli.sessions import open_sessions


@click.group()
def invite() -> None:
    """Invitation links for a crowd you know: each grants a qualification."""


@invite.command("create")
@click.option("--qualification", "qtype", required=True, help="The qualification type id the links grant.")
@click.option("--uses", type=click.IntRange(1), default=1, show_default=True, help="Workers one link admits.")
@click.option("--expires", default="7d", show_default=True, help="Lifetime: 30m, 12h, 7d, 2w.")
@click.option("--count", type=click.IntRange(1, 1000), default=1, show_default=True, help="Links to make.")
@click.option("--value", type=int, default=1, show_default=True, help="The qualification value granted.")
def create(qtype: str, uses: int, expires: str, count: int, value: int) -> None:
    """Make invitation links granting QUALIFICATION (for its owner) and print them, one a line.

    The links are shown once: only a hash of each is stored.
    """
    from hits.db import session_scope
    from hits.market import invitations
    from hits.market.errors import RequestError
    from hits.market.models import QualificationType
    from hits.settings import load_settings

    settings = load_settings()
    try:
        expires_at = invitations.expiry_from(expires)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires") from exc
    sessions = open_sessions("market", settings)
    try:
        with session_scope(sessions) as session:
            found = session.get(QualificationType, qtype)
            if found is None or found.requester_id is None:
                raise click.BadParameter(
                    f"no requester's qualification type {qtype!r}", param_hint="--qualification"
                )
            issued = invitations.create_invitations(
                session, found.requester_id, qtype, value=value, uses=uses, expires_at=expires_at, count=count
            )
    except RequestError as exc:
        raise click.ClickException(exc.message) from exc
    for one in issued:
        click.echo(invitations.link(settings.public_url, one.token))
    click.echo(
        f"{len(issued)} link(s) granting {qtype} = {value}, {uses} use(s) each, until "
        f"{expires_at:%Y-%m-%d %H:%M} UTC",
        err=True,
    )
