"""``hitforge workers create``: a worker-site account from the shell, which then signs in."""

from __future__ import annotations

import uuid

import requests
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner, Result

from server.cli.main import main


def hitforge(settings, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:  # type: ignore[no-untyped-def]
    base = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
    }
    return CliRunner().invoke(main, list(args), env={**base, **(env or {})}, input=input)


def sign_in(base_url: str, username: str, password: str) -> requests.Response:
    """Sign in through the worker site's form, as a person does."""
    http = requests.Session()
    page = BeautifulSoup(http.get(f"{base_url}/signin", timeout=30).text, "html.parser")
    form = page.find("form", method="post")
    assert isinstance(form, Tag)
    fields = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", type="hidden")}
    return http.post(
        f"{base_url}/signin", data={**fields, "username": username, "password": password}, timeout=30
    )


def test_a_created_worker_signs_in(settings, live_server) -> None:  # type: ignore[no-untyped-def]
    name = f"cli-{uuid.uuid4().hex[:8]}"
    result = hitforge(
        settings, "workers", "create", name, "--password-env", "NEW_PW", env={"NEW_PW": "correct horse"}
    )
    assert result.exit_code == 0, result.output
    assert f"created worker {name}" in result.output
    assert "correct horse" not in result.output

    signed_in = sign_in(live_server.url, name, "correct horse")
    assert signed_in.status_code == 200 and f"Signed in as {name}" in signed_in.text
    assert sign_in(live_server.url, name, "wrong horse").status_code == 401


def test_the_password_is_asked_twice_when_not_given(settings, live_server) -> None:  # type: ignore[no-untyped-def]
    name = f"cli-{uuid.uuid4().hex[:8]}"
    result = hitforge(settings, "workers", "create", name, input="battery staple\nbattery staple\n")
    assert result.exit_code == 0, result.output
    assert "battery staple" not in result.output  # hidden input
    assert "Signed in as" in sign_in(live_server.url, name, "battery staple").text


def test_bad_accounts_are_refused_plainly(settings) -> None:  # type: ignore[no-untyped-def]
    name = f"cli-{uuid.uuid4().hex[:8]}"
    ok = hitforge(settings, "workers", "create", name, "--password-env", "PW", env={"PW": "long enough"})
    assert ok.exit_code == 0
    taken = hitforge(settings, "workers", "create", name, "--password-env", "PW", env={"PW": "long enough"})
    assert taken.exit_code == 1 and "That user name is taken." in taken.output
    short = hitforge(settings, "workers", "create", f"{name}x", "--password-env", "PW", env={"PW": "short"})
    assert short.exit_code == 1 and "at least 8 characters" in short.output
    unset = hitforge(settings, "workers", "create", f"{name}y", "--password-env", "NOT_SET_ANYWHERE")
    assert unset.exit_code == 2 and "NOT_SET_ANYWHERE is not set" in unset.output
    for result in (taken, short, unset):
        assert result.exception is None or isinstance(result.exception, SystemExit)
