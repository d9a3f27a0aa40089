"""docs/migrating.md names only commands and options that exist.

Every ``hitforge ...`` in the page (code blocks, with ``\\`` continuations joined,
and inline code) is resolved against the CLI: each word before the first
argument must be a subcommand, each ``--option`` one of that command's, and
``COMMAND --help`` must run.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
from click.testing import CliRunner

from server.cli.main import main

DOC = Path(__file__).resolve().parents[2] / "docs" / "migrating.md"


def doc_commands() -> list[str]:
    """Each ``hitforge`` command line of the page, comments and prompts stripped."""
    text = DOC.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.removeprefix("$ ").strip()
            if line.startswith("hitforge "):
                found.append(re.split(r"\s{2,}#|\s+#\s", line, maxsplit=1)[0])
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    found += re.findall(r"`(hitforge [^`]+)`", prose)
    return found


def resolve(line: str) -> tuple[list[str], click.Command]:
    """The subcommand path of ``line`` and its command; fails on an unknown subcommand or option."""
    words = shlex.split(line)[1:]
    command: click.Command = main
    path: list[str] = []
    for word in words:
        if isinstance(command, click.Group) and not word.startswith("-"):
            # get_command, not .commands: hitforge's groups import a command only when asked for it.
            sub = command.get_command(click.Context(command), word)
            assert sub is not None, f"{line!r}: {word!r} is not a subcommand of hitforge {' '.join(path)}"
            command, path = sub, [*path, word]
            continue
        if word.startswith("--"):
            known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            assert word.split("=")[0] in known, f"{line!r}: hitforge {' '.join(path)} has no {word}"
    assert path, line
    return path, command


def test_every_command_of_the_migration_guide_exists() -> None:
    lines = doc_commands()
    paths = {tuple(resolve(line)[0]) for line in lines}
    # The sections on scripts, qualifications and workers are covered, not only batches.
    assert {("requester", "create"), ("workers", "create"), ("workers", "masters", "grant")} <= paths
    assert {("workers", "profile"), ("batch", "layout"), ("batch", "check")} <= paths
    for path in sorted(paths):
        shown = CliRunner().invoke(main, [*path, "--help"], prog_name="hitforge")
        assert shown.exit_code == 0, f"hitforge {' '.join(path)} --help\n{shown.output}"
