"""``hitforge --help`` imports no command: what is imported is checked, not how long it takes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from server.cli.lazy import Lazy, LazyGroup, plugin_summary
from server.cli.main import COMMANDS, main
from tests.helpers import REPO, install_package

#: What makes a start slow (each takes 0.05 s to a second): none is needed to list commands.
HEAVY = (
    "sqlalchemy",
    "boto3",
    "botocore",
    "celery",
    "flask",
    "werkzeug",
    "jinja2",
    "xmlschema",
    "numpy",
    "scipy",
    "pandas",
    "hits.db",
    "hits.market",
    "hits.requester.campaigns",
    "hits.requester.templates",
    "qualification",
    "demo",
)


def imported_by(*args: str) -> set[str]:
    """The modules ``python -m server.cli ARGS`` imports, read from ``-X importtime``."""
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-X", "importtime", "-m", "server.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {
        line.rpartition("|")[2].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


#: Every command of the product, as ``--help`` reaches it (the demo's own commands are the demo's).
HELPS = [("--help",), *((*name.split("."), "--help") for name in sorted(COMMANDS)), ("db", "--help")]


@pytest.mark.parametrize("args", HELPS, ids=" ".join)
def test_help_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    modules = imported_by(*args)
    assert "server.cli.main" in modules  # the check reads the right output
    assert heavy(modules) == []


def test_the_listing_imports_no_command_module() -> None:
    modules = imported_by("--help")
    lazy = {entry.target.partition(":")[0] for entry in COMMANDS.values()}
    assert lazy & modules == set()
    assert "demo.cli" not in modules and "demo.simulation.cli" not in modules


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_tables_line_is_the_commands_own(name: str) -> None:
    """The summary kept in the table says what the command's own help says."""
    command = COMMANDS[name].load()
    assert COMMANDS[name].summary == command.get_short_help_str(10_000)


def test_every_listed_command_and_subcommand_answers_help() -> None:
    runner = CliRunner()
    names = main.list_commands(click.Context(main))
    assert {"db", "demo", "quality", *(n for n in COMMANDS if "." not in n)} <= set(names)
    for name in names:
        shown = runner.invoke(main, [name, "--help"], prog_name="hitforge")
        assert shown.exit_code == 0, f"hitforge {name} --help\n{shown.output}"
    for dotted in (n for n in COMMANDS if "." in n):
        shown = runner.invoke(main, [*dotted.split("."), "--help"], prog_name="hitforge")
        assert shown.exit_code == 0, f"hitforge {dotted} --help\n{shown.output}"


def test_a_plugins_line_is_read_from_its_source() -> None:
    """The demo's commands are listed with their own help, read without importing them."""
    from importlib.metadata import entry_points

    found = list(entry_points(group="hitforge.commands"))
    assert {ep.name for ep in found} >= {"demo", "quality"}
    for ep in found:
        listed = click.Command(None, help=plugin_summary(ep)).get_short_help_str(10_000)
        assert listed == ep.load().get_short_help_str(10_000)


def test_plugins_join_the_group_or_a_subgroup_only_when_used(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    source = (
        "import click\n\n"
        "LOADED = []\n\n"
        "@click.command()\n"
        "def hello():\n"
        '    """Say hello to the tester."""\n'
        '    click.echo("hello")\n\n'
        "@click.command()\n"
        "def nested():\n"
        '    """A command of the table\'s group."""\n'
        '    click.echo("nested")\n\n'
        'LOADED.append("yes")\n'
    )
    entry_points = "[test.lazy.commands]\nhello = lazy_plugin:hello\ngroup.nested = lazy_plugin:nested\n"
    install_package(tmp_path / "site", monkeypatch, "lazy_plugin", source, entry_points)
    table = {"group": Lazy("tests.test_cli_startup:sample_group", "A sample group.")}
    group = LazyGroup(name="tool", table=table, plugins="test.lazy.commands")
    runner = CliRunner()

    listing = runner.invoke(group, ["--help"])
    assert listing.exit_code == 0, listing.output
    assert "hello  Say hello to the tester." in listing.output
    assert "group  A sample group." in listing.output
    assert "lazy_plugin" not in sys.modules  # listed from its metadata and source, not imported

    assert runner.invoke(group, ["hello"]).output == "hello\n"
    assert runner.invoke(group, ["group", "nested"]).output == "nested\n"
    assert runner.invoke(group, ["nope"]).exit_code == 2


@click.group()
def sample_group() -> None:
    """A sample group."""
