"""How a command that sets a password gets it: asked for (hidden, twice) or from the environment.

Never as an argument: other users of the machine can read a command line in
the process list, and the shell keeps it in its history.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def password_options(default_env: str | None = None) -> Callable[[F], F]:
    """Options of a command that sets a password: ``--password-env VAR``, and a ``--password`` refused.

    The command's function gets ``password_env`` and passes it to :func:`read_password`
    with the same ``default_env``. ``--password`` is known to the parser only to
    answer it with what to do instead.
    """
    instead = "give --password-env VAR to read it from the environment variable VAR"
    default = "ask, hidden, twice"
    if default_env:
        instead = f"set {default_env}, or {instead}"
        default = f"{default_env} if set, else {default}"

    def refuse(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            raise click.UsageError(
                "a password is never taken on the command line (the process list and the shell's "
                f"history would show it): leave out --password to be asked for it, or {instead}.",
                ctx,
            )

    def decorate(function: F) -> F:
        refused = click.option(
            "--password",
            hidden=True,
            expose_value=False,
            is_flag=False,
            flag_value="",
            default=None,
            callback=refuse,
        )
        from_env = click.option(
            "--password-env",
            metavar="VAR",
            help=f"Read the password from this environment variable (default: {default}).",
        )
        return from_env(refused(function))

    return decorate


def read_password(password_env: str | None, default_env: str | None = None) -> str:
    """The password from ``$password_env``, else from ``$default_env`` if set, else asked for twice.

    A variable named with ``--password-env`` must hold a password; ``default_env``
    unset or empty means the user is asked.
    """
    if password_env is not None:
        password = os.environ.get(password_env, "")
        if not password:
            raise click.BadParameter(
                f"the environment variable {password_env} is not set or empty", param_hint="--password-env"
            )
        return password
    if default_env and os.environ.get(default_env):
        return os.environ[default_env]
    return str(click.prompt("Password", hide_input=True, confirmation_prompt=True))
