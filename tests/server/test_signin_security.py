"""Signing in against an attacker: open redirects, cookies replayed after sign-out, guessing, cookie flags."""

from __future__ import annotations

import uuid
from datetime import timedelta
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from sqlalchemy import select, update
from werkzeug.security import generate_password_hash

from demo.runner import serve_in_thread
from hits.db import session_scope, utcnow
from hits.market.models import SignInFailure
from hits.requester.tables.campaigns import StaffUser
from server import create_app
from tests.server.worker_helpers import WorkerClient, csrf_of

PASSWORD = "a-long-password"  # WorkerClient's


def _sign_in(base: str, username: str, password: str, query: str = "") -> requests.Response:
    browser = requests.Session()
    page = browser.get(base + "/signin")
    return browser.post(
        base + "/signin" + query,
        data={"csrf_token": csrf_of(page), "username": username, "password": password},
        allow_redirects=False,
    )


@pytest.mark.parametrize(
    "next_param",
    [
        "/%09/example.org/",  # a tab, which browsers drop: //example.org/
        "/%0a/example.org/",
        "/%0d/example.org/",
        "//example.org/",
        "/%5cexample.org/",  # a backslash, which browsers read as a slash
        "/%5c/example.org/",
        "https://example.org/",
        "https:/example.org/",
        "javascript:alert(1)",
        "%2f%2fexample.org",
        "/%2F/example.org",
    ],
)
def test_sign_in_never_redirects_off_the_site(live_server, next_param: str) -> None:
    worker = WorkerClient(live_server.url, "redirect")
    response = _sign_in(live_server.url, worker.username, PASSWORD, "?next=" + next_param)
    assert response.status_code == 302
    location = response.headers["Location"]
    # Resolve it as a browser would, once tabs and newlines are dropped and backslashes read as slashes.
    as_browser = location.replace("\t", "").replace("\n", "").replace("\r", "").replace("\\", "/")
    target = urlsplit(urljoin(live_server.url + "/signin", as_browser))
    assert (target.scheme, target.netloc) == ("http", urlsplit(live_server.url).netloc), location
    assert not target.path.startswith("//"), location


def test_sign_in_still_returns_to_a_local_page(live_server) -> None:
    worker = WorkerClient(live_server.url, "back")
    response = _sign_in(live_server.url, worker.username, PASSWORD, "?next=/me")
    assert response.status_code == 302 and response.headers["Location"] == "/me"


def _signed_in(http: requests.Session, base: str) -> bool:
    return http.get(base + "/me", allow_redirects=False).status_code == 200


def test_a_cookie_kept_from_before_sign_out_is_no_sign_in(live_server) -> None:
    worker = WorkerClient(live_server.url, "replay")
    stolen = requests.Session()
    stolen.cookies.update(worker.http.cookies)  # a copy taken while the worker was signed in
    assert _signed_in(worker.http, live_server.url) and _signed_in(stolen, live_server.url)
    home = worker.get("/")
    assert worker.post_form(home, 'form[action="/signout"]', {}).status_code == 200
    assert not _signed_in(worker.http, live_server.url)
    # The copy still carries a validly signed session, but it is from before the sign-out.
    assert not _signed_in(stolen, live_server.url)
    assert (
        stolen.get(live_server.url + "/me", allow_redirects=False).headers["Location"].startswith("/signin")
    )
    # Signing in again works, and does not bring the old copy back.
    again = requests.Session()
    page = again.get(live_server.url + "/signin")
    again.post(
        live_server.url + "/signin",
        data={"csrf_token": csrf_of(page), "username": worker.username, "password": PASSWORD},
    )
    assert _signed_in(again, live_server.url) and not _signed_in(stolen, live_server.url)


@pytest.fixture(scope="module")
def behind_proxy(settings):  # type: ignore[no-untyped-def]
    """The same site behind one trusted proxy, so each test can be its own client address."""
    app = create_app(settings=settings.with_overrides(trusted_proxies=1))
    running = serve_in_thread(app)
    yield running
    running.stop()


def _attempt(base: str, username: str, password: str, address: str) -> requests.Response:
    browser = requests.Session()
    browser.headers["X-Forwarded-For"] = address
    page = browser.get(base + "/signin")
    return browser.post(
        base + "/signin", data={"csrf_token": csrf_of(page), "username": username, "password": password}
    )


def test_guessing_one_accounts_password_is_stopped(behind_proxy, market_sessions) -> None:
    base = behind_proxy.url
    victim = WorkerClient(base, "victim")
    for n in range(5):
        # From five addresses: the account's own count stops them, whatever the address.
        assert _attempt(base, victim.username, f"guess-{n}", f"198.51.100.{n}").status_code == 401
    locked = _attempt(base, victim.username, PASSWORD, "198.51.100.77")
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.text and "Try again in 15 minutes" in locked.text
    # Spelling the name differently is the same account.
    assert _attempt(base, f"  {victim.username.upper()} ", "guess", "198.51.100.78").status_code == 429
    # Someone else on the same network signs in normally.
    other = WorkerClient(base, "bystander")
    assert _attempt(base, other.username, PASSWORD, "198.51.100.1").status_code == 200
    # Once the failures are older than the window, the owner gets in, and their count starts over.
    with session_scope(market_sessions) as session:
        session.execute(
            update(SignInFailure)
            .where(
                SignInFailure.key.endswith(victim.username.casefold())
                | (SignInFailure.key == f"worker:id:{victim.worker_id}")
            )
            .values(failed_at=utcnow() - timedelta(minutes=16))
        )
    assert _attempt(base, victim.username, PASSWORD, "198.51.100.79").status_code == 200
    with session_scope(market_sessions) as session:
        left = session.scalars(
            select(SignInFailure).where(
                SignInFailure.key.endswith(victim.username.casefold())
                | (SignInFailure.key == f"worker:id:{victim.worker_id}")
            )
        ).all()
        assert left == []


def test_guessing_many_accounts_from_one_address_is_stopped(behind_proxy) -> None:
    base = behind_proxy.url
    address = "203.0.113.9"
    real = WorkerClient(base, "spray")
    for n in range(30):
        assert _attempt(base, f"nobody-{n}-{real.username}", "password1", address).status_code == 401
    # Even a right password is not checked from that address now; another address is unaffected.
    refused = _attempt(base, real.username, PASSWORD, address)
    assert refused.status_code == 429 and "Too many failed sign-ins" in refused.text
    assert _attempt(base, real.username, PASSWORD, "203.0.113.10").status_code == 200


def test_the_session_cookie_is_secure_when_the_site_is_https(settings, live_server) -> None:
    plain = requests.get(live_server.url + "/signin")
    assert "secure" not in plain.headers["Set-Cookie"].lower()
    running = serve_in_thread(
        create_app(settings=settings.with_overrides(public_url="https://hitforge.example"))
    )
    try:
        cookie = requests.get(running.url + "/signin").headers["Set-Cookie"]
    finally:
        running.stop()
    assert "; Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def _staff(requester_sessions) -> str:  # type: ignore[no-untyped-def]
    name = f"qa-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        session.add(StaffUser(username=name, password_hash=generate_password_hash("qa-password"), role="qa"))
    return name


def _staff_attempt(base: str, name: str, password: str, address: str = "") -> requests.Response:
    browser = requests.Session()
    if address:
        browser.headers["X-Forwarded-For"] = address
    page = browser.get(base + "/dashboard/signin")
    response = browser.post(
        base + "/dashboard/signin", data={"csrf_token": csrf_of(page), "username": name, "password": password}
    )
    response.http = browser  # type: ignore[attr-defined]
    return response


def test_a_dashboard_cookie_kept_from_before_sign_out_is_no_sign_in(live_server, requester_sessions) -> None:
    signed_in = _staff_attempt(live_server.url, _staff(requester_sessions), "qa-password")
    assert signed_in.status_code == 200 and "Campaigns" in signed_in.text
    staff: requests.Session = signed_in.http  # type: ignore[attr-defined]
    stolen = requests.Session()
    stolen.cookies.update(staff.cookies)
    assert stolen.get(live_server.url + "/dashboard/", allow_redirects=False).status_code == 200
    home = staff.get(live_server.url + "/dashboard/")
    staff.post(live_server.url + "/dashboard/signout", data={"csrf_token": csrf_of(home)})
    refused = stolen.get(live_server.url + "/dashboard/", allow_redirects=False)
    assert refused.status_code == 302 and "/dashboard/signin" in refused.headers["Location"]


def test_guessing_a_staff_password_is_stopped(behind_proxy, requester_sessions) -> None:
    name = _staff(requester_sessions)
    for n in range(5):
        assert _staff_attempt(behind_proxy.url, name, f"guess-{n}", f"192.0.2.{n}").status_code == 401
    locked = _staff_attempt(behind_proxy.url, name, "qa-password", "192.0.2.50")
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.text


def test_expired_failures_do_not_pile_up(behind_proxy, market_sessions) -> None:
    ghost = f"worker:account:ghost-{uuid.uuid4().hex[:8]}"
    with session_scope(market_sessions) as session:
        old = SignInFailure()
        old.key, old.failed_at = ghost, utcnow() - timedelta(minutes=16)
        session.add(old)
    assert _attempt(behind_proxy.url, f"nobody-{uuid.uuid4().hex[:8]}", "x", "198.18.0.1").status_code == 401
    with session_scope(market_sessions) as session:
        assert session.scalars(select(SignInFailure).where(SignInFailure.key == ghost)).all() == []
