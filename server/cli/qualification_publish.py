"""``hitforge qualification publish``: put a bank's test online, graded by hitforge."""

from __future__ import annotations

from pathlib import Path

import click

from server.cli.qualification import BANK_ARGUMENT, load_or_exit
from server.cli.sessions import open_sessions


@click.command("publish")
@BANK_ARGUMENT
@click.option("--name", required=True, help="Name of the qualification type to create.")
@click.option("--duration", default=1800, show_default=True, help="Seconds to finish the test.")
@click.option("--cooldown", default=86400, show_default=True, help="Seconds before a retake.")
@click.option("--max-attempts", default=3, show_default=True)
def publish(bank_path: Path, name: str, duration: int, cooldown: int, max_attempts: int) -> None:
    """Create the qualification type for BANK through the API and open its test on the worker site."""
    from hits.db import session_scope
    from hits.requester.mturk import Marketplace, MarketplaceError
    from hits.settings import load_settings
    from qualification.delivery import publish_warning
    from qualification.service import bank_for, publish_test

    load_or_exit(bank_path)  # every problem of the bank, listed, before anything is created
    settings = load_settings()
    try:
        market = Marketplace.from_settings(settings)
    except RuntimeError as exc:  # no keys configured
        raise click.ClickException(str(exc)) from exc
    sessions = open_sessions("requester", settings)
    try:
        with session_scope(sessions) as session:
            test = publish_test(
                session,
                market,
                name=name,
                bank_path=bank_path,
                duration_seconds=duration,
                cooldown_seconds=cooldown,
                max_attempts=max_attempts,
                public_url=settings.public_url,
            )
            test_id, qtype = test.id, test.qualification_type_id
            pass_mark = bank_for(test.bank_path).overall_pass
            warning = publish_warning(session, market.access_key_id)
    except (ValueError, MarketplaceError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"qualification type {qtype}; workers take the test at {settings.public_url}/qualify/{test_id}"
    )
    # The value is the score only for a passing attempt (else 0): the bank's pass mark means passed.
    click.echo(f"require it in a campaign: QualificationTypeId {qtype}, GreaterThanOrEqualTo {pass_mark}")
    click.echo(
        f"results reach the marketplace through a `hitforge worker` running with the keys of requester "
        f"{market.access_key_id} (HITFORGE_MTURK_ACCESS_KEY_ID={market.access_key_id})"
    )
    if warning:
        click.secho(warning, err=True, fg="yellow")
