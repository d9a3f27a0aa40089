"""The ``hitforge`` command group: serve, work, manage accounts, launch campaigns.

Each group lives in its own module of this package; commands from installed
packages join through the ``hitforge.commands`` entry-point group (the demo's
``demo`` and ``quality`` come that way, so the product never imports the demo).
An entry point named ``group.command`` joins the group of that name.
"""

from __future__ import annotations

import os
from importlib.metadata import entry_points

import click
from rich.console import Console

from hits.settings import load_settings

console = Console()
#: The entry-point group through which packages add commands.
COMMANDS_GROUP = "hitforge.commands"


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


def _add_subcommands() -> None:
    """Command groups that live in their own modules, then those of installed packages."""
    from server.cli.accounts import requester, staff
    from server.cli.batch import batch
    from server.cli.launch import launch
    from server.cli.qualification import qualification
    from server.cli.qualification_publish import publish
    from server.cli.results import results
    from server.cli.serve import serve, worker
    from server.cli.target import target
    from server.cli.worker_accounts import workers
    from server.cli.workflow import rounds, workflow

    qualification.add_command(publish)
    for command in (
        serve,
        worker,
        requester,
        staff,
        launch,
        qualification,
        batch,
        results,
        target,
        workers,
        workflow,
    ):
        main.add_command(command)
    results.add_command(rounds)
    for ep in entry_points(group=COMMANDS_GROUP):
        parent_name, _, name = ep.name.rpartition(".")
        parent = main.commands.get(parent_name) if parent_name else main
        if isinstance(parent, click.Group):
            parent.add_command(ep.load(), name)


_add_subcommands()


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
