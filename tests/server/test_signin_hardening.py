"""Sign-in and sign-up against an attacker: probing which names exist, mass sign-ups, fixation, CSRF."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import requests
from sqlalchemy import select, update

from hits.db import session_scope, utcnow
from hits.market.models import SignInFailure, Worker
from tests.server.test_signin_security import (
    PASSWORD,
    _attempt,
    _staff,
    _staff_attempt,
    behind_proxy,  # noqa: F401 - a fixture used below
)
from tests.server.worker_helpers import WorkerClient, csrf_of


def _address() -> str:
    """A client address of its own per test, so no test's failures count against another's."""
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


@pytest.fixture
def scrypt_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """Every password hash computed in this process (its cost: n, r, p), calling the real one."""
    calls: list[tuple[int, int, int]] = []
    real = hashlib.scrypt

    def counted(password: bytes, *, salt: bytes, n: int, r: int, p: int, **kw: Any) -> bytes:
        calls.append((n, r, p))
        return real(password, salt=salt, n=n, r=r, p=p, **kw)

    monkeypatch.setattr(hashlib, "scrypt", counted)
    return calls


def _hashing_of(calls: list[tuple[int, int, int]], attempt: Callable[[], requests.Response]) -> list[Any]:
    before = len(calls)
    status = attempt().status_code
    return [status, calls[before:]]


def test_an_unknown_worker_name_costs_the_same_hashing_as_a_known_one(behind_proxy, scrypt_calls) -> None:  # noqa: F811
    base, address = behind_proxy.url, _address()
    known = WorkerClient(base, "timing").username
    unknown = f"nobody-{uuid.uuid4().hex[:8]}"
    _attempt(base, f"warm-{unknown}", "wrong-password", address)  # the stand-in hash is made on first use
    wrong_password = _hashing_of(scrypt_calls, lambda: _attempt(base, known, "wrong-password", address))
    no_such_name = _hashing_of(scrypt_calls, lambda: _attempt(base, unknown, "wrong-password", address))
    assert wrong_password[0] == no_such_name[0] == 401
    # One hash of the same cost either way: the answer's timing tells nothing about the name.
    assert len(wrong_password[1]) == 1 and no_such_name[1] == wrong_password[1]


def test_an_unknown_staff_name_costs_the_same_hashing_as_a_known_one(
    behind_proxy,  # noqa: F811
    requester_sessions,
    scrypt_calls,
) -> None:
    base, address = behind_proxy.url, _address()
    known = _staff(requester_sessions)
    unknown = f"nobody-{uuid.uuid4().hex[:8]}"
    _staff_attempt(base, f"warm-{unknown}", "wrong-password", address)
    wrong_password = _hashing_of(scrypt_calls, lambda: _staff_attempt(base, known, "wrong", address))
    no_such_name = _hashing_of(scrypt_calls, lambda: _staff_attempt(base, unknown, "wrong", address))
    assert wrong_password[0] == no_such_name[0] == 401
    assert len(wrong_password[1]) == 1 and no_such_name[1] == wrong_password[1]


def _sign_up(base: str, username: str, address: str | None) -> requests.Response:
    browser = requests.Session()
    if address is not None:
        browser.headers["X-Forwarded-For"] = address
    page = browser.get(base + "/signup")
    return browser.post(
        base + "/signup", data={"csrf_token": csrf_of(page), "username": username, "password": PASSWORD}
    )


def test_making_accounts_from_one_address_is_throttled(behind_proxy, market_sessions) -> None:  # noqa: F811
    base, address = behind_proxy.url, _address()
    names = [f"farm-{uuid.uuid4().hex[:8]}" for _ in range(9)]
    for name in names:
        assert _sign_up(base, name, address).status_code == 200
    # Asking about a taken name counts too: it tells that the account exists.
    assert _sign_up(base, names[0], address).status_code == 400
    late = f"farm-{uuid.uuid4().hex[:8]}"
    refused = _sign_up(base, late, address)
    assert refused.status_code == 429
    assert "Too many sign-ups from your network. Try again in 15 minutes." in refused.text
    with session_scope(market_sessions) as session:
        assert session.scalar(select(Worker).where(Worker.username == late)) is None
    # Another network signs up as usual, and so does the machine itself (no forwarded address).
    assert _sign_up(base, f"other-{uuid.uuid4().hex[:8]}", _address()).status_code == 200
    assert _sign_up(base, f"local-{uuid.uuid4().hex[:8]}", None).status_code == 200
    # Once the attempts are older than the window, the address may sign up again.
    with session_scope(market_sessions) as session:
        session.execute(
            update(SignInFailure)
            .where(SignInFailure.key == f"worker:signup:{address}")
            .values(failed_at=utcnow() - timedelta(minutes=16))
        )
    assert _sign_up(base, late, address).status_code == 200


def _post(base: str, path: str, fields: dict[str, str], address: str) -> requests.Response:
    browser = requests.Session()
    browser.headers["X-Forwarded-For"] = address
    page = browser.get(base + path)
    return browser.post(base + path, data={"csrf_token": csrf_of(page), **fields})


@pytest.mark.parametrize("name", ["nul\x00name", "bell\x07", "line\nbreak"])
def test_control_characters_in_a_name_are_refused_not_a_server_error(
    behind_proxy,  # noqa: F811
    market_sessions,
    name: str,
) -> None:
    base, address = behind_proxy.url, _address()
    # (PostgreSQL cannot store a NUL at all: these were 500s there, in the throttle's own queries.)
    signin = _post(base, "/signin", {"username": name, "password": PASSWORD}, address)
    staff = _post(base, "/dashboard/signin", {"username": name, "password": PASSWORD}, address)
    signup = _post(base, "/signup", {"username": name, "password": PASSWORD}, address)
    if "\x00" in name:  # refused at the door before any view (server/errors.py)
        for response in (signin, staff, signup):
            assert response.status_code == 400 and "NUL character" in response.text
        return
    assert signin.status_code == 401 and "Unknown user name or wrong password." in signin.text
    assert staff.status_code == 401 and "Unknown user name or wrong password." in staff.text
    assert signup.status_code == 400 and "without control characters" in signup.text
    if "\x00" not in name:  # (which this check's own query could not send to PostgreSQL)
        with session_scope(market_sessions) as session:
            assert session.scalar(select(Worker).where(Worker.username == name.strip())) is None


@pytest.mark.parametrize("country", ["U\x00", "USA", "1A", ""])
def test_a_country_that_is_not_a_two_letter_code_is_refused_at_sign_up(
    behind_proxy,  # noqa: F811
    market_sessions,
    country: str,
) -> None:
    name = f"country-{uuid.uuid4().hex[:8]}"
    fields = {"username": name, "password": PASSWORD, "country": country}
    response = _post(behind_proxy.url, "/signup", fields, _address())
    if country == "":
        assert response.status_code == 200  # left empty: the form's default, US
    elif "\x00" in country:  # refused at the door before any view (server/errors.py)
        assert response.status_code == 400 and "NUL character" in response.text
    else:
        assert response.status_code == 400 and "two-letter country code" in response.text
    with session_scope(market_sessions) as session:
        made = session.scalar(select(Worker).where(Worker.username == name))
        assert (made.country if made else None) == ("US" if country == "" else None)


def _failures_under(market_sessions, key: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return len(session.scalars(select(SignInFailure.id).where(SignInFailure.key == key)).all())


def test_a_forged_forwarded_address_is_not_believed_without_a_trusted_proxy(
    live_server, market_sessions
) -> None:
    # HITFORGE_TRUSTED_PROXIES=0 (the default): the address counted is the connection's own.
    forged = _address()
    before = _failures_under(market_sessions, "worker:address:127.0.0.1")
    browser = requests.Session()
    browser.headers["X-Forwarded-For"] = forged
    page = browser.get(live_server.url + "/signin")
    fields = {"csrf_token": csrf_of(page), "username": f"nobody-{uuid.uuid4().hex[:8]}", "password": "x"}
    assert browser.post(live_server.url + "/signin", data=fields).status_code == 401
    assert _failures_under(market_sessions, f"worker:address:{forged}") == 0
    assert _failures_under(market_sessions, "worker:address:127.0.0.1") == before + 1


def test_behind_one_proxy_only_the_address_it_added_counts(behind_proxy, market_sessions) -> None:  # noqa: F811
    # A client may send its own X-Forwarded-For; the proxy appends the real address last.
    forged, real = _address(), _address()
    assert (
        _attempt(behind_proxy.url, f"nobody-{uuid.uuid4().hex[:8]}", "x", f"{forged}, {real}").status_code
        == 401
    )
    assert _failures_under(market_sessions, f"worker:address:{forged}") == 0
    assert _failures_under(market_sessions, f"worker:address:{real}") == 1


def test_a_session_planted_before_sign_in_gives_the_planter_nothing(live_server) -> None:
    base = live_server.url
    worker = WorkerClient(base, "fixation")
    planter = requests.Session()
    planted_token = csrf_of(planter.get(base + "/signin"))
    victim = requests.Session()
    victim.cookies.update(planter.cookies)  # the attacker got their cookie into the victim's browser
    victim.post(
        base + "/signin",
        data={"csrf_token": planted_token, "username": worker.username, "password": PASSWORD},
    )
    assert victim.get(base + "/me", allow_redirects=False).status_code == 200
    assert victim.cookies.get("session") != planter.cookies.get("session")  # issued anew at sign-in
    assert planter.get(base + "/me", allow_redirects=False).status_code == 302  # the planted copy is nobody
    # The CSRF token the planter knew died with the old session: it cannot post as the victim.
    forged = victim.post(base + "/signout", data={"csrf_token": planted_token}, allow_redirects=False)
    assert forged.status_code == 400
    assert victim.get(base + "/me", allow_redirects=False).status_code == 200


@pytest.mark.parametrize(
    "path", ["/signin", "/signup", "/signout", "/hits/X/accept", "/groups/X/accept", "/work/X/return"]
)
def test_worker_site_posts_without_the_csrf_token_are_refused(live_server, path: str) -> None:
    worker = WorkerClient(live_server.url, "csrf")
    response = worker.http.post(
        live_server.url + path,
        data={"username": worker.username, "password": PASSWORD},
        headers={"Origin": "https://attacker.example"},
        allow_redirects=False,
    )
    assert response.status_code == 400 and "CSRF token is missing" in response.text
    assert "Traceback" not in response.text
    assert worker.get("/me", allow_redirects=False).status_code == 200  # still signed in


def test_signing_in_to_a_look_alike_account_does_not_wipe_the_victims_count(behind_proxy) -> None:  # noqa: F811
    base = behind_proxy.url
    victim = WorkerClient(base, "lookalike")
    # The attacker's own account, named as the victim's in capitals: a different account, but the
    # same name once case is folded, which is how failures are counted.
    twin = victim.username.upper()
    assert _sign_up(base, twin, _address()).status_code == 200
    for n in range(4):
        assert _attempt(base, victim.username, f"guess-{n}", _address()).status_code == 401
    assert _attempt(base, twin, PASSWORD, _address()).status_code == 200  # the attacker signs in
    assert _attempt(base, victim.username, "guess-4", _address()).status_code == 401
    # That was the victim's fifth failure: their account is locked, whoever signed in meanwhile.
    locked = _attempt(base, victim.username, PASSWORD, _address())
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.text
