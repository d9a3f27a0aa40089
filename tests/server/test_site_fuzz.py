"""Fuzzing every web route over HTTP: hostile input gets a 4xx page or a redirect, never a 5xx.

The routes come from the app's ``url_map``, so a route added later is fuzzed
too, and a path converter no strategy knows fails the test. Each request is
sent to the running server as one of three people (anonymous, a worker who
holds a real assignment, a staff admin), with path values that are real ids
of other people's rows, huge or negative numbers, NUL, ``..``, unicode or
very long; query strings and bodies that repeat fields, carry NUL, invalid
UTF-8 or lone surrogates (as raw percent-encoded bytes), multipart uploads
with odd names and types; missing, forged or real CSRF tokens; the wrong
method; odd Host and X-Forwarded-For headers.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.routing import BaseConverter, IntegerConverter, PathConverter, Rule, UnicodeConverter

from hits.settings import load_settings
from server import create_app
from tests.conftest import boto3_client, new_requester
from tests.server.test_dashboard_roles import Dashboard, make_user, seed_campaign
from tests.server.worker_helpers import MTURK_HTML, accept_framed, create_hit, csrf_of, html_question

#: Examples a route: 37 routes x 12 requests, about 10 s; HITFORGE_FUZZ_EXAMPLES asks for a longer run.
EXAMPLES = int(os.environ.get("HITFORGE_FUZZ_EXAMPLES", "12"))

#: The MTurk API has its own fuzzer (tests/market/test_api_fuzz.py); the static files are Flask's.
FUZZED_ELSEWHERE = {"mturk_api.dispatch", "static"}

#: The field names the views read, so fuzzed values reach real code, plus a few nobody reads.
FIELD_NAMES = [
    "assignmentId",
    "hitId",
    "workerId",
    "turkSubmitTo",
    "hitforgeToken",
    "username",
    "password",
    "q",
    "sort",
    "order",
    "page",
    "submitted",
    "a",
    "action",
    "note",
    "feedback",
    "accept_next",
    "q-1",
    "q-a",
    "answer",
    "next",
    "campaign",
    "template",
    "reason",
    "worker",
    "reviewer",
    "submission",
    "evidence_sha256",
    "back",
    "x" * 300,
    "",
]


def _rules() -> list[Rule]:
    """Every route of the app (built only to read its url_map; nothing is served or stored)."""
    with tempfile.TemporaryDirectory() as var_dir:
        app = create_app(settings=load_settings({"HITFORGE_VAR_DIR": var_dir, "HITFORGE_SECRET_KEY": "x"}))
    return sorted(app.url_map.iter_rules(), key=lambda r: (r.rule, r.endpoint))


RULES = [r for r in _rules() if r.endpoint not in FUZZED_ELSEWHERE]


@dataclass
class World:
    """The live server, three people and real ids of rows that are not theirs."""

    url: str
    people: dict[str, requests.Session]
    tokens: dict[str, str]
    ids: list[str]
    ints: list[int]


@pytest.fixture(scope="module")
def world(live_server, market_sessions, requester_sessions) -> World:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "100.00")
    mturk = boto3_client(live_server.url, key)
    hit_id = create_hit(mturk, html_question(MTURK_HTML), MaxAssignments=3)
    worker, frame = accept_framed(live_server.url, hit_id)
    other, other_frame = accept_framed(live_server.url, hit_id, "other")
    hit_type = mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"]
    seeded = seed_campaign(requester_sessions, worker_id=worker.worker_id)
    admin = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    return World(
        url=live_server.url,
        people={"anonymous": requests.Session(), "worker": worker.http, "admin": admin.http},
        tokens={"worker": csrf_of(worker.get("/")), "admin": admin.token()},
        ids=[
            hit_id,
            hit_type,
            frame["assignmentId"],
            other_frame["assignmentId"],
            other.worker_id,
            worker.worker_id,
            seeded.worker_id,
        ],
        ints=[seeded.campaign_id, seeded.submission_id, seeded.test_id],
    )


ODD_TEXT = st.one_of(
    st.text(max_size=10),
    st.sampled_from(
        ["", " ", "\x00", "a\x00b", "..", "../..", "\u202e", "é", "😀", "x" * 5000, "-1", "0", "1e9", "NaN"]
    ),
)
#: Percent-encoded bytes that are not UTF-8, or encode a lone surrogate, or NUL.
RAW_BYTES = st.sampled_from(["%FF", "%C3%28", "%ED%A0%80", "%00", "a%00", "%F4%90%80%80", "%"])
BIG_INTS = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 2**31, 2**63, 2**64, 10**30]))


def encoded_text(world: World) -> st.SearchStrategy[str]:
    """A percent-encoded value: a real id, odd text, a number, or raw non-UTF-8 bytes."""
    return st.one_of(
        st.sampled_from(world.ids).map(lambda v: quote(v, safe="")),
        st.sampled_from(world.ints).map(str),
        ODD_TEXT.map(lambda v: quote(v.encode("utf-8", "surrogatepass"), safe="")),
        BIG_INTS.map(str),
        RAW_BYTES,
    )


def path_value(world: World, converter: BaseConverter) -> st.SearchStrategy[str]:
    """A value for a path parameter of ``converter``; unknown converters have none (and fail)."""
    if isinstance(converter, IntegerConverter):
        return st.one_of(st.sampled_from(world.ints).map(str), BIG_INTS.map(str), encoded_text(world))
    if type(converter) in (UnicodeConverter, PathConverter):
        return st.one_of(
            encoded_text(world), st.sampled_from(["..", "a/../b", "%2e%2e", "x" * 3000, "%2F", "a.txt"])
        )
    raise AssertionError(
        f"no strategy for the {type(converter).__name__} path converter: add one to test_site_fuzz"
    )


def query_string(world: World) -> st.SearchStrategy[str]:
    pair = st.tuples(
        st.one_of(st.sampled_from(FIELD_NAMES).map(lambda n: quote(n, safe="")), RAW_BYTES),
        encoded_text(world),
    )
    return st.lists(pair, max_size=6).map(lambda pairs: "&".join(f"{k}={v}" for k, v in pairs))


@st.composite
def request_for(draw: st.DrawFn, rule: Rule, world: World) -> dict[str, Any]:
    """One hostile request for ``rule``, as keyword arguments of ``requests.request``."""
    path = rule.rule
    for name, converter in rule._converters.items():  # noqa: SLF001 - werkzeug keeps them only there
        value = draw(path_value(world, converter))
        path = path.replace(f"<{_spec(rule, name)}>", value, 1)
    assert "<" not in path, f"a path parameter of {rule.rule} was left unfilled"
    allowed = sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})
    method = draw(st.one_of(st.sampled_from(allowed), st.sampled_from(["GET", "POST", "PUT", "DELETE"])))
    who = draw(st.sampled_from(["anonymous", "worker", "admin"]))
    query = draw(query_string(world))
    url = world.url + path + (f"?{query}" if query else "")
    headers: dict[str, str] = {}
    if draw(st.booleans()):
        headers["X-Forwarded-For"] = draw(st.sampled_from(["1.2.3.4", "nonsense", "::1, 10.0.0.1", "\u00e9"]))
    if draw(st.integers(0, 9)) == 0:
        headers["Host"] = draw(st.sampled_from(["evil.example", "127.0.0.1:1", "a" * 300]))
    kwargs: dict[str, Any] = {
        "method": method,
        "url": url,
        "headers": headers,
        "allow_redirects": False,
        "who": who,
    }
    if method == "GET":
        return kwargs
    token = draw(st.sampled_from(["real", "missing", "forged"]))
    if rule.endpoint.endswith("signout") and token == "real":
        token = "forged"  # signing the fuzzing people out would leave only anonymous requests
    fields = draw(st.lists(st.tuples(st.sampled_from(FIELD_NAMES), encoded_text(world)), max_size=6))
    if token == "real" and who in world.tokens:
        fields.append(("csrf_token", quote(world.tokens[who], safe="")))
    elif token == "forged":
        fields.append(("csrf_token", draw(encoded_text(world))))
    if draw(st.integers(0, 4)) == 0:
        kwargs["files"] = {
            draw(st.sampled_from(FIELD_NAMES[:3] + ["file", "upload"])): (
                draw(st.sampled_from(["a.txt", "../../etc/passwd", "\x00.png", "", "é" * 200, "a.exe"])),
                draw(st.binary(max_size=64)),
                draw(st.sampled_from(["text/plain", "image/png", "", "nonsense", "multipart/form-data"])),
            )
        }
        kwargs["data"] = {k: v for k, v in fields}
    else:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        kwargs["data"] = "&".join(f"{k}={v}" for k, v in fields).encode("ascii")
    return kwargs


def _spec(rule: Rule, name: str) -> str:
    """How ``name`` is written in the rule (``int:published_id``, ``path:filename`` or ``hit_id``)."""
    match = re.search(rf"<([a-z]+(?:\([^)]*\))?:)?{name}>", rule.rule)
    assert match is not None
    return match.group(0)[1:-1]


#: An error answer a browser shows (or, for POST / which is the MTurk API's path, one botocore reads).
ERROR_TYPES = ("text/html", "application/json", "application/x-amz-json-1.1")


def check(rule: Rule, response: requests.Response) -> None:
    """The answer is what a browser expects: a page, a redirect or a file, or a 4xx that says why."""
    where = f"{response.request.method} {response.request.url} -> {response.status_code}"
    assert response.status_code < 500, where + "\n" + response.text[:2000]
    assert "Traceback" not in response.text and "werkzeug debugger" not in response.text.lower(), where
    if 300 <= response.status_code < 400:
        assert response.headers.get("Location"), where
    elif response.status_code >= 400:
        assert response.text.strip(), f"{where}: an empty error page"
        assert response.headers.get("Content-Type", "").split(";")[0] in ERROR_TYPES, where


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.endpoint}:{r.rule}" for r in RULES])
def test_no_5xx_from_any_route(world: World, rule: Rule) -> None:
    """No request to ``rule``, however hostile and from whoever, gets a 5xx or a traceback."""

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        kwargs = data.draw(request_for(rule, world))
        session = world.people[kwargs.pop("who", "anonymous")]
        check(rule, session.request(**kwargs, timeout=30))

    fuzz()


def test_every_route_is_fuzzed() -> None:
    """A route this module neither fuzzes nor names as fuzzed elsewhere cannot slip in unnoticed."""
    endpoints = {r.endpoint for r in _rules()}
    assert endpoints >= FUZZED_ELSEWHERE
    assert {r.endpoint for r in RULES} == endpoints - FUZZED_ELSEWHERE


@pytest.mark.parametrize("number", [2**31, 2**63, 10**30])
def test_an_id_past_every_row_is_a_404(world: World, number: int) -> None:
    """A path id no INTEGER column can hold names nothing: a 404, not an overflow in the driver (500)."""
    admin, worker = world.people["admin"], world.people["worker"]
    for who, path in (
        # Worker pages ask for a worker's sign-in before they look an id up.
        (admin, f"/dashboard/qualification/{number}/items"),
        (worker, f"/qualify/{number}"),
        (worker, f"/qualify/attempts/{number}"),
    ):
        response = who.get(world.url + path, allow_redirects=False)
        assert response.status_code == 404, (path, response.status_code)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/work/%00"),
        ("GET", "/qualifications/a%00b"),
        ("GET", "/hits/%00"),
        ("GET", "/?q=%00"),
        ("GET", "/tasks/hit?assignmentId=%00&hitId=%00"),
        ("POST", "/work/{assignment}/answers"),
    ],
)
def test_a_nul_character_is_a_clear_400(world: World, method: str, path: str) -> None:
    """NUL (which no PostgreSQL text holds) in a path, query or form is refused up front with a 400 page."""
    worker = world.people["worker"]
    url = world.url + path.format(assignment=world.ids[2])
    body = f"csrf_token={quote(world.tokens['worker'])}&answer=a%00b&q-1=%00"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    response = worker.request(method, url, data=body if method == "POST" else None, headers=headers)
    assert response.status_code == 400, (path, response.status_code, response.text[:500])
    assert "NUL" in response.text and response.headers["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("declared", [0, 5, 10_000])
@pytest.mark.parametrize("path", ["/signin", "/work/x/answers", "/tasks/submit", "/dashboard/signin"])
def test_a_body_shorter_or_longer_than_its_content_length_is_no_5xx(
    world: World, path: str, declared: int
) -> None:
    """A client that lies about Content-Length (then stops sending) gets a 4xx or a page, never a 5xx."""
    host, port = world.url.removeprefix("http://").split(":")
    body = b"username=a&password=b&csrf_token=x&assignmentId=y"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {declared}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=20) as conn:
        conn.sendall(head.encode("ascii") + body)
        conn.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    assert status < 500 and b"Traceback" not in answer, answer[:1000]
