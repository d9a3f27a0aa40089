"""Sign-ins end on the server: after a time without requests, and at an absolute age.

The session cookie is signed with the app's secret, so a client cannot move the
stamps in it; these tests hold the secret and move them, as time passing would.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
import requests
from flask import Flask
from flask.sessions import SecureCookieSessionInterface
from werkzeug.security import generate_password_hash

from hits.db import session_scope
from hits.requester.tables.campaigns import StaffUser
from hits.settings import SessionLimits, load_settings
from tests.server.worker_helpers import WorkerClient, csrf_of

HOUR = 3600


def _serializer(settings) -> Any:  # type: ignore[no-untyped-def]
    app = Flask(__name__)
    app.secret_key = settings.secret_key
    return SecureCookieSessionInterface().get_signing_serializer(app)


def _edit_session(http: requests.Session, settings, **changes: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Rewrite the stored session as the server would have signed it; keys set to None are dropped."""
    serializer = _serializer(settings)
    data = dict(serializer.loads(http.cookies["session"]))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    domain = next(c.domain for c in http.cookies if c.name == "session")
    http.cookies.set("session", serializer.dumps(data), domain=domain, path="/")
    return data


def _stored(http: requests.Session, settings) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return dict(_serializer(settings).loads(http.cookies["session"]))


def _worker_signed_in(http: requests.Session, base: str) -> bool:
    response = http.get(base + "/me", allow_redirects=False)
    assert response.status_code in (200, 302)
    return response.status_code == 200


def test_a_worker_sign_in_ends_after_twelve_idle_hours(live_server, settings) -> None:
    worker = WorkerClient(live_server.url, "idle")
    now = int(time.time())
    # Eleven hours without a request: still signed in, and the request counts as use.
    _edit_session(worker.http, settings, worker_seen_at=now - 11 * HOUR)
    assert _worker_signed_in(worker.http, live_server.url)
    assert _stored(worker.http, settings)["worker_seen_at"] >= now
    # Twelve hours and a minute: the server refuses it, however the browser kept the cookie.
    _edit_session(worker.http, settings, worker_seen_at=now - 12 * HOUR - 60)
    assert not _worker_signed_in(worker.http, live_server.url)
    assert "worker_id" not in _stored(worker.http, settings)
    # Putting the stamp back does not revive it: the sign-in is gone from the cookie.
    _edit_session(worker.http, settings, worker_seen_at=now)
    assert not _worker_signed_in(worker.http, live_server.url)


def test_a_worker_sign_in_ends_fourteen_days_after_signing_in_however_busy(live_server, settings) -> None:
    worker = WorkerClient(live_server.url, "busy")
    now = int(time.time())
    _edit_session(worker.http, settings, worker_signed_in_at=now - 13 * 24 * HOUR)
    assert _worker_signed_in(worker.http, live_server.url)
    _edit_session(worker.http, settings, worker_signed_in_at=now - 14 * 24 * HOUR - 60, worker_seen_at=now)
    assert not _worker_signed_in(worker.http, live_server.url)


def test_a_cookie_without_the_stamps_is_no_sign_in(live_server, settings) -> None:
    # What a cookie signed before sign-ins expired looked like: an id and a generation only.
    worker = WorkerClient(live_server.url, "old")
    _edit_session(worker.http, settings, worker_signed_in_at=None, worker_seen_at=None)
    assert not _worker_signed_in(worker.http, live_server.url)


def test_an_expired_sign_in_cannot_act(live_server, settings) -> None:
    worker = WorkerClient(live_server.url, "late")
    home = worker.get("/")
    _edit_session(worker.http, settings, worker_seen_at=int(time.time()) - 13 * HOUR)
    # A form loaded before (its CSRF token still good) posts into a sign-in that has ended.
    response = worker.http.post(
        live_server.url + "/groups/nothing/accept", data={"csrf_token": csrf_of(home)}, allow_redirects=False
    )
    assert response.status_code == 302 and response.headers["Location"].startswith("/signin")


def _staff_session(base: str, requester_sessions) -> requests.Session:  # type: ignore[no-untyped-def]
    name = f"qa-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        session.add(StaffUser(username=name, password_hash=generate_password_hash("qa-password"), role="qa"))
    browser = requests.Session()
    page = browser.get(base + "/dashboard/signin")
    signed_in = browser.post(
        base + "/dashboard/signin",
        data={"csrf_token": csrf_of(page), "username": name, "password": "qa-password"},
    )
    assert signed_in.status_code == 200 and "Campaigns" in signed_in.text
    return browser


def _staff_signed_in(http: requests.Session, base: str) -> bool:
    response = http.get(base + "/dashboard/", allow_redirects=False)
    assert response.status_code in (200, 302)
    return response.status_code == 200


def test_a_staff_sign_in_ends_sooner(live_server, settings, requester_sessions) -> None:
    staff = _staff_session(live_server.url, requester_sessions)
    now = int(time.time())
    _edit_session(staff, settings, staff_seen_at=now - 90 * 60)
    assert _staff_signed_in(staff, live_server.url)
    _edit_session(staff, settings, staff_seen_at=now - 2 * HOUR - 60)
    assert not _staff_signed_in(staff, live_server.url)

    staff = _staff_session(live_server.url, requester_sessions)
    _edit_session(staff, settings, staff_signed_in_at=now - 12 * HOUR - 60)
    assert not _staff_signed_in(staff, live_server.url)


def test_session_limits_come_from_the_environment(tmp_path) -> None:
    env = {
        "HITFORGE_VAR_DIR": str(tmp_path),
        "HITFORGE_SECRET_KEY": "k",
        "HITFORGE_WORKER_SESSION_IDLE_MINUTES": "30",
        "HITFORGE_WORKER_SESSION_LIFETIME_HOURS": "48",
        "HITFORGE_STAFF_SESSION_IDLE_MINUTES": "15",
    }
    settings = load_settings(env)
    assert settings.worker_session == SessionLimits(idle=timedelta(minutes=30), lifetime=timedelta(hours=48))
    assert settings.staff_session == SessionLimits(idle=timedelta(minutes=15), lifetime=timedelta(hours=12))
    defaults = load_settings({"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_SECRET_KEY": "k"})
    assert defaults.worker_session == SessionLimits(idle=timedelta(hours=12), lifetime=timedelta(days=14))
    for bad in ("0", "-5", "1.5", "soon", "²"):
        with pytest.raises(ValueError, match="HITFORGE_WORKER_SESSION_IDLE_MINUTES must be a whole number"):
            load_settings({**env, "HITFORGE_WORKER_SESSION_IDLE_MINUTES": bad})


def test_configured_limits_are_the_ones_enforced(settings) -> None:
    from demo.runner import serve_in_thread
    from server import create_app

    short = SessionLimits(idle=timedelta(minutes=5), lifetime=timedelta(hours=1))
    running = serve_in_thread(create_app(settings=settings.with_overrides(worker_session=short)))
    try:
        worker = WorkerClient(running.url, "short")
        now = int(time.time())
        _edit_session(worker.http, settings, worker_seen_at=now - 4 * 60)
        assert _worker_signed_in(worker.http, running.url)
        _edit_session(worker.http, settings, worker_seen_at=now - 6 * 60)
        assert not _worker_signed_in(worker.http, running.url)
    finally:
        running.stop()
