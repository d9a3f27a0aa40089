"""Signing in against an attacker: open redirects, cookies replayed after sign-out, guessing, cookie flags."""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

import pytest
import requests

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
