"""A click group that imports a command's module only when that command runs.

``hitforge --help`` lists every command from a table (``main.COMMANDS``) and
from entry-point metadata, so it imports none of them: listing them used to
import the whole domain (SQLAlchemy, boto3, SciPy, Flask) and took two
seconds. Only the command named on the command line is imported.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import click


@dataclass(frozen=True)
class Lazy:
    """Where a command lives (``"module:attribute"``) and its line in its group's ``--help``.

    ``summary`` is what the command's own ``get_short_help_str()`` says (a test
    holds the two together), so the listing needs no import.
    """

    target: str
    summary: str

    def load(self) -> click.Command:
        """Import the command's module and return the command."""
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(click.Group):
    """A group whose commands come from ``table`` and from the entry points of ``plugins``.

    A name ``"group.command"`` in either adds ``command`` to ``group`` when
    ``group`` is loaded (one level of nesting, as the CLI has).
    """

    def __init__(
        self, *args: Any, table: Mapping[str, Lazy] | None = None, plugins: str = "", **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.table = dict(table or {})
        self.plugins = plugins
        self._found: list[EntryPoint] | None = None

    def _entry_points(self) -> list[EntryPoint]:
        # Read from installed metadata once, when first needed; loading one is what imports it.
        if self._found is None:
            self._found = list(entry_points(group=self.plugins)) if self.plugins else []
        return self._found

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, the lazy ones included, without importing any."""
        names = set(self.commands) | {name for name in self.table if "." not in name}
        names |= {ep.name for ep in self._entry_points() if "." not in ep.name}
        return sorted(names)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, imported on first use."""
        command = self.commands.get(cmd_name)
        if command is not None:
            return command
        if cmd_name in self.table:
            command = self.table[cmd_name].load()
        else:
            found = [ep for ep in self._entry_points() if ep.name == cmd_name]
            if not found:
                return None
            command = found[0].load()
        if isinstance(command, click.Group):
            self._adopt(command, cmd_name)
        self.add_command(command, cmd_name)
        return command

    def _adopt(self, group: click.Group, prefix: str) -> None:
        """Add the ``prefix.child`` commands of the table and of plugins to ``group``, now loaded."""
        for dotted, lazy in self.table.items():
            parent, _, child = dotted.rpartition(".")
            if parent == prefix:
                group.add_command(lazy.load(), child)
        for ep in self._entry_points():
            parent, _, child = ep.name.rpartition(".")
            if parent == prefix:
                group.add_command(ep.load(), child)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands:`` section, from the table and the plugins' sources: nothing is imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        plugins = {ep.name: ep for ep in self._entry_points()}
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None:
                if not loaded.hidden:
                    rows.append((name, loaded.get_short_help_str(limit)))
            elif name in self.table:
                rows.append((name, _short(self.table[name].summary, limit)))
            else:
                rows.append((name, _short(plugin_summary(plugins[name]), limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _short(summary: str, limit: int) -> str:
    # Shortened as click shortens a loaded command's help, so the listing reads the same either way.
    return click.Command(None, help=summary).get_short_help_str(limit)


def plugin_summary(ep: EntryPoint) -> str:
    """The first paragraph of a plugin command's docstring, read from its source without importing it.

    Importing a plugin to list it would cost what the lazy group saves; a
    source that cannot be found or read lists the command with no help.
    """
    origin = _source_of(ep.module)
    if origin is None:
        return ""
    try:
        with open(origin, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return ""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == ep.attr:
            doc = ast.get_docstring(node)
            return inspect.cleandoc(doc).split("\n\n")[0] if doc else ""
    return ""


def _source_of(module: str) -> str | None:
    """The file of ``module``, found as ``importlib`` would, but without importing its packages."""
    locations = None
    origin = None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = None
        for finder in sys.meta_path:
            find_spec: Callable[..., ModuleSpec | None] | None = getattr(finder, "find_spec", None)
            if find_spec is not None:
                spec = find_spec(name, locations)
                if spec is not None:
                    break
        if spec is None:
            return None
        locations, origin = spec.submodule_search_locations, spec.origin
    return origin if origin and origin.endswith(".py") else None
