"""``hitforge workers``: worker accounts, and what the marketplace's operator decides about a worker.

Accounts are usually made on the worker site's sign-up page; ``create`` makes
one from the shell (a first account, a script). Masters is granted by the
operator, as Amazon grants it on MTurk; Locale and Adult are read from the
worker's profile, which the operator can correct.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from server.cli.passwords import password_options, read_password
from server.cli.sessions import open_sessions

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from hits.market.models import Worker


@click.group()
def workers() -> None:
    """Worker accounts of the marketplace: create, Masters, locale and adult status."""


@workers.command("create")
@click.argument("username")
@password_options()
@click.option("--country", default="US", show_default=True, help="ISO 3166-1 alpha-2 code.")
def create(username: str, password_env: str | None, country: str) -> None:
    """Create a worker-site account USERNAME that signs in with its password.

    The password is never taken on the command line, where other users of the
    machine could read it in the process list and it would stay in the shell's history.
    """
    from hits.db import session_scope
    from hits.market.accounts import create_worker
    from hits.market.errors import RequestError

    password = read_password(password_env)
    sessions = open_sessions("market")
    try:
        with session_scope(sessions) as session:
            worker = create_worker(session, username, password, country=country)
            worker_id = worker.id
    except RequestError as exc:
        raise click.ClickException(exc.message) from exc
    click.echo(f"created worker {username} ({worker_id}); they sign in at /signin")


@contextmanager
def _worker(who: str) -> Iterator[tuple[Session, Worker]]:
    """The worker with id or user name ``who``, in a unit of work committed on success."""
    # Imported here, as in every command: ``hitforge workers --help`` needs no database.
    from sqlalchemy import or_, select

    from hits.db import session_scope
    from hits.market.errors import RequestError
    from hits.market.models import Worker

    sessions = open_sessions("market")
    with session_scope(sessions) as session:
        worker = session.scalar(select(Worker).where(or_(Worker.id == who, Worker.username == who)))
        if worker is None:
            raise click.BadParameter(f"no worker with id or user name {who!r}", param_hint="WORKER")
        try:
            yield session, worker
        except RequestError as exc:
            raise click.ClickException(exc.message) from exc


@workers.group()
def masters() -> None:
    """The Masters qualification (its production and sandbox ids)."""


@masters.command("grant")
@click.argument("worker")
def masters_grant(worker: str) -> None:
    """Grant WORKER (id or user name) Masters."""
    from hits.market.qualification_ops import grant_masters

    with _worker(worker) as (session, found):
        grants = grant_masters(session, found.id)
    click.echo(
        f"{found.id} ({found.username}) holds Masters: {', '.join(g.qualification_type_id for g in grants)}"
    )


@masters.command("revoke")
@click.argument("worker")
def masters_revoke(worker: str) -> None:
    """Take Masters back from WORKER (id or user name)."""
    from hits.market.qualification_ops import revoke_masters

    with _worker(worker) as (session, found):
        revoked = revoke_masters(session, found.id)
    click.echo(
        f"{found.id} ({found.username}): Masters revoked" if revoked else f"{found.id} did not hold Masters"
    )


@workers.command("profile")
@click.argument("worker")
@click.option(
    "--country", help="ISO 3166-1 alpha-2 code, such as US (a different one clears the subdivision)."
)
@click.option("--subdivision", help="ISO 3166-2 subdivision code within the country, such as CA.")
@click.option("--no-subdivision", is_flag=True, help="Clear the subdivision.")
@click.option("--adult/--not-adult", default=None, help="Whether the worker meets the Adult qualification.")
def profile(
    worker: str, country: str | None, subdivision: str | None, no_subdivision: bool, adult: bool | None
) -> None:
    """Set what WORKER's Locale and Adult qualifications are read from, and show them."""
    from hits.market.accounts import set_worker_profile

    if subdivision is not None and no_subdivision:
        raise click.UsageError("--subdivision and --no-subdivision exclude each other")
    with _worker(worker) as (session, found):
        if subdivision is not None or no_subdivision:
            set_worker_profile(session, found.id, country=country, subdivision=subdivision, is_adult=adult)
        else:
            set_worker_profile(session, found.id, country=country, is_adult=adult)
        locale = found.country + (f"-{found.subdivision}" if found.subdivision else "")
    click.echo(f"{found.id} ({found.username}): locale {locale}, adult {'yes' if found.is_adult else 'no'}")
