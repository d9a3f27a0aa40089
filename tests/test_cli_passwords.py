"""Passwords reach ``hitforge`` by a prompt or the environment, never as an argument."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select
from werkzeug.security import check_password_hash

from hits.db import session_scope
from hits.requester.tables.campaigns import StaffUser
from server.cli.main import main


def hitforge(settings, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:  # type: ignore[no-untyped-def]
    base = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_STAFF_PASSWORD": "",
    }
    return CliRunner().invoke(main, list(args), env={**base, **(env or {})}, input=input)


def stored_hash(requester_sessions, username: str) -> str | None:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return session.scalar(select(StaffUser.password_hash).where(StaffUser.username == username))


def test_staff_create_reads_the_password_from_the_environment(settings, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    name = f"env-{uuid.uuid4().hex[:8]}"
    made = hitforge(settings, "staff", "create", name, env={"HITFORGE_STAFF_PASSWORD": "from the env"})
    assert made.exit_code == 0, made.output
    assert "Password" not in made.output  # not asked
    hashed = stored_hash(requester_sessions, name)
    assert hashed and check_password_hash(hashed, "from the env")


def test_staff_create_asks_twice_without_echo(settings, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    name = f"ask-{uuid.uuid4().hex[:8]}"
    made = hitforge(settings, "staff", "create", name, input="typed secret\ntyped secret\n")
    assert made.exit_code == 0, made.output
    assert "Repeat for confirmation" in made.output and "typed secret" not in made.output
    hashed = stored_hash(requester_sessions, name)
    assert hashed and check_password_hash(hashed, "typed secret")


def test_staff_create_reads_a_named_variable(settings, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    name = f"var-{uuid.uuid4().hex[:8]}"
    made = hitforge(settings, "staff", "create", name, "--password-env", "MY_PW", env={"MY_PW": "named one"})
    assert made.exit_code == 0, made.output
    hashed = stored_hash(requester_sessions, name)
    assert hashed and check_password_hash(hashed, "named one")


@pytest.mark.parametrize(
    "args",
    [
        ("staff", "create", "someone", "--password", "hunter2"),
        ("staff", "create", "someone", "--password=hunter2"),
        ("staff", "create", "someone", "--password"),
        ("workers", "create", "someone", "--password", "hunter2"),
    ],
)
def test_a_password_on_the_command_line_is_refused_with_the_way_in(
    settings, requester_sessions, args
) -> None:  # type: ignore[no-untyped-def]
    refused = hitforge(settings, *args)
    assert refused.exit_code == 2, refused.output
    assert "never taken on the command line" in refused.output
    assert "--password-env" in refused.output
    if args[0] == "staff":
        assert "HITFORGE_STAFF_PASSWORD" in refused.output
        assert stored_hash(requester_sessions, "someone") is None


def test_help_offers_no_password_argument(settings) -> None:  # type: ignore[no-untyped-def]
    for group in ("staff", "workers"):
        shown = hitforge(settings, group, "create", "--help")
        assert shown.exit_code == 0
        assert "--password-env" in shown.output
        assert "--password " not in shown.output and "--password\n" not in shown.output
