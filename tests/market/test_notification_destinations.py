"""A requester's notification destination cannot make the marketplace reach its own network.

Through the real boto3 client against a marketplace with the default
settings, every spelling of a loopback, private, link-local or reserved
address is refused by UpdateNotificationSettings and SendTestEventNotification
with one message, whether a port listens there or not; the check is made
again when events are sent, so a destination that turns private later
(DNS rebinding) gets nothing; redirects are not followed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from sqlalchemy import select

from demo.runner import free_port
from hits.db import make_engine, make_session_factory, session_scope
from hits.market import events
from hits.market.models import MarketEvent, NotificationSetting
from hits.settings import load_settings
from hits.wire import destinations
from hits.wire.destinations import DESTINATION_REFUSED, DestinationRefused, post_json
from tests.helpers import hit_params
from tests.market.test_notification_events import _work, wait_until


class Hook:
    """A loopback web hook: records what reaches it, answers with ``status`` (and ``location``)."""

    def __init__(self, status: int = 200, location: str | None = None) -> None:
        self.received: list[str] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(self.path)
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    running = Hook()
    yield running
    running.stop()


def spellings(port: int) -> list[str]:
    """Every way we know of to name an address the marketplace must not send to."""
    return [
        f"http://127.0.0.1:{port}/hook",
        f"http://localhost:{port}/hook",
        f"http://LocalHost:{port}/hook",
        f"http://[::1]:{port}/hook",
        f"http://[::ffff:127.0.0.1]:{port}/hook",
        f"http://2130706433:{port}/hook",  # 127.0.0.1 in decimal
        f"http://0x7f000001:{port}/hook",  # in hexadecimal
        f"http://0177.0.0.1:{port}/hook",  # in octal
        f"http://127.1:{port}/hook",
        f"http://0.0.0.0:{port}/hook",
        f"http://0:{port}/hook",
        f"https://127.0.0.1:{port}/hook",
        f"http://user:pw@127.0.0.1:{port}/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/hook",
        "http://10.0.0.1/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://100.64.0.1/hook",  # shared address space
        "http://224.0.0.1/hook",  # multicast
        "http://240.0.0.1/hook",  # reserved
        "http://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
        f"ftp://127.0.0.1:{port}/hook",
        "file:///etc/passwd",
        f"gopher://127.0.0.1:{port}/_hello",
        "http:///no-host",
        f"http://127.0.0.1:{port}:{port}/hook",
        "http://no-such-host.invalid/hook",
    ]


def spec(destination: str) -> dict[str, Any]:
    return {
        "Destination": destination,
        "Transport": "Email",
        "Version": "2006-05-05",
        "EventTypes": ["AssignmentSubmitted"],
    }


def refusal(mturk, call, **params: Any) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        call(**params)
    return str(caught.value.response["Error"]["Message"])


def test_localhost_resolves_to_loopback_here() -> None:
    # What the spellings rely on: "localhost" is a name for loopback on this machine.
    assert {a[4][0] for a in socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)} <= {
        "127.0.0.1",
        "::1",
    }


def test_every_spelling_of_a_private_address_is_refused_with_one_message(
    mturk, market_sessions, hook
) -> None:
    closed = free_port()
    hit_type = mturk.create_hit_type(
        Title="Destinations", Description="d", Reward="0.05", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    messages = set()
    for port in (hook.port, closed):  # a port that listens, and one that does not
        for destination in spellings(port):
            sent = refusal(
                mturk,
                mturk.send_test_event_notification,
                Notification=spec(destination),
                TestEventType="Ping",
            )
            stored = refusal(
                mturk,
                mturk.update_notification_settings,
                HITTypeId=hit_type,
                Notification=spec(destination),
                Active=True,
            )
            messages |= {sent, stored}
    assert messages == {DESTINATION_REFUSED}
    assert hook.received == []
    with session_scope(market_sessions) as session:
        assert session.get(NotificationSetting, hit_type) is None  # nothing was stored


def test_a_public_address_and_stored_only_transports_are_accepted(mturk, market_sessions) -> None:
    hit_type = mturk.create_hit_type(
        Title="Public destination", Description="d", Reward="0.05", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    mturk.update_notification_settings(
        HITTypeId=hit_type, Notification=spec("https://93.184.215.14/hook"), Active=True
    )
    # Queue and topic names and e-mail addresses are stored, never fetched.
    for transport, destination in (
        ("SQS", "https://sqs.us-east-1.amazonaws.com/123456789012/q"),
        ("SNS", "arn:aws:sns:us-east-1:123456789012:t"),
        ("Email", "qa@example.org"),
    ):
        mturk.update_notification_settings(
            HITTypeId=hit_type, Notification={**spec(destination), "Transport": transport}, Active=True
        )
    with session_scope(market_sessions) as session:
        setting = session.get(NotificationSetting, hit_type)
        assert setting is not None and setting.destination == "qa@example.org"


def test_allowed_private_receivers_get_the_event_but_failures_all_read_the_same(hook_mturk) -> None:
    ok, not_found, target = Hook(), Hook(status=404), Hook()
    redirect = Hook(status=302, location=f"http://127.0.0.1:{target.port}/elsewhere")
    try:
        hook_mturk.send_test_event_notification(
            Notification=spec(f"http://127.0.0.1:{ok.port}/hook"), TestEventType="Ping"
        )
        assert ok.received == ["/hook"]
        messages = {
            refusal(
                hook_mturk,
                hook_mturk.send_test_event_notification,
                Notification=spec(destination),
                TestEventType="Ping",
            )
            for destination in (
                f"http://127.0.0.1:{not_found.port}/hook",  # listens, but does not take it
                f"http://127.0.0.1:{free_port()}/hook",  # nobody listens
                f"http://127.0.0.1:{redirect.port}/hook",  # a redirect is not followed
                f"gopher://127.0.0.1:{ok.port}/hook",  # not http(s), even when private is allowed
            )
        }
        assert messages == {DESTINATION_REFUSED}
        assert redirect.received == ["/hook"] and target.received == []
        assert ok.received == ["/hook"]
    finally:
        for running in (ok, not_found, redirect, target):
            running.stop()


def test_events_are_checked_again_when_they_are_sent(hook_mturk, settings, hook) -> None:
    # Stored while the operator allowed private destinations; delivered by a marketplace that does not.
    params = hit_params(MaxAssignments=1)
    hit_type = hook_mturk.create_hit_type(
        Title=params["Title"],
        Description=params["Description"],
        Reward=params["Reward"],
        AssignmentDurationInSeconds=600,
    )["HITTypeId"]
    hook_mturk.update_notification_settings(
        HITTypeId=hit_type, Notification=spec(f"http://127.0.0.1:{hook.port}/hook"), Active=True
    )
    hit_id = hook_mturk.create_hit_with_hit_type(
        HITTypeId=hit_type, MaxAssignments=1, LifetimeInSeconds=3600, Question=params["Question"]
    )["HIT"]["HITId"]
    strict = make_engine(settings.market_database_url)  # the default: no private destinations
    try:
        _work(make_session_factory(strict), hit_id, f"strict-{hit_id[:8]}")

        def mine() -> MarketEvent:
            with session_scope(make_session_factory(strict)) as session:
                rows = session.scalars(select(MarketEvent).where(MarketEvent.hit_type_id == hit_type)).all()
                (row,) = rows
                session.expunge(row)
                return row

        wait_until(lambda: mine().attempts == 1)
        assert mine().delivered_at is None and mine().last_error == "DestinationRefused"
        assert hook.received == []
        # The same event, once the operator allows private receivers, arrives.
        destinations.allow_private_destinations(strict)
        wait_until(lambda: events.deliver_pending(strict) == 1 or mine().delivered_at is not None, timeout=5)
        assert hook.received == ["/hook"]
    finally:
        strict.dispose()


def test_a_name_that_turns_private_after_the_check_is_not_connected_to(hook, monkeypatch) -> None:
    # DNS rebinding: the first answer is public, the next is loopback. The resolver is the
    # only thing replaced; the connection must go to an address that was checked.
    real = socket.getaddrinfo
    answers = iter(["93.184.215.14"])

    def rebinding(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.test":
            address = next(answers, "127.0.0.1")
            return real(address, port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    with pytest.raises(DestinationRefused):
        post_json(f"http://rebind.test:{hook.port}/hook", {"Events": []}, 2.0, allow_private=False)
    assert hook.received == []


def test_the_operator_setting_is_read_from_the_environment(tmp_path) -> None:
    base = {"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_SECRET_KEY": "k"}
    assert load_settings(base).notification_allow_private is False
    assert load_settings({**base, "HITFORGE_NOTIFICATION_ALLOW_PRIVATE": "1"}).notification_allow_private
    assert load_settings({**base, "HITFORGE_NOTIFICATION_ALLOW_PRIVATE": "true"}).notification_allow_private
    assert not load_settings({**base, "HITFORGE_NOTIFICATION_ALLOW_PRIVATE": "0"}).notification_allow_private


#: IPv6 addresses that reach an IPv4 one through a transition mechanism, or that are reserved or site-local:
#: Python 3.11 calls all of these "global".
IPV6_TRANSITION_SPELLINGS = [
    "http://[::127.0.0.1]/hook",  # IPv4-compatible (deprecated, reserved ::/96)
    "http://[::ffff:0:7f00:1]/hook",  # IPv4-translated (SIIT) of 127.0.0.1
    "http://[64:ff9b:1::7f00:1]/hook",  # local-use NAT64 prefix (RFC 8215)
    "http://[2002:7f00:1::]/hook",  # 6to4 of 127.0.0.1
    "http://[2002:a9fe:a9fe::1]/hook",  # 6to4 of the metadata address 169.254.169.254
    "http://[2002:c0a8:101::1]/hook",  # 6to4 of 192.168.1.1
    "http://[fec0::1]/hook",  # site-local (deprecated, private by meaning)
    "http://[5f00::1]/hook",  # reserved (SRv6 SIDs)
]


@pytest.mark.parametrize("destination", IPV6_TRANSITION_SPELLINGS)
def test_ipv6_forms_of_private_or_reserved_addresses_are_refused(mturk, destination: str) -> None:
    hit_type = mturk.create_hit_type(
        Title="IPv6 destinations", Description="d", Reward="0.05", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    stored = refusal(
        mturk,
        mturk.update_notification_settings,
        HITTypeId=hit_type,
        Notification=spec(destination),
        Active=True,
    )
    sent = refusal(
        mturk, mturk.send_test_event_notification, Notification=spec(destination), TestEventType="Ping"
    )
    assert {stored, sent} == {DESTINATION_REFUSED}


def test_public_ipv6_destinations_are_still_accepted(mturk) -> None:
    hit_type = mturk.create_hit_type(
        Title="Public IPv6", Description="d", Reward="0.05", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    for destination in (
        "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook",  # a public IPv6 address
        "https://[2002:5db8:d70e::1]/hook",  # 6to4 of a public IPv4 address
        "https://[::ffff:93.184.215.14]/hook",  # IPv4-mapped public address
    ):
        mturk.update_notification_settings(HITTypeId=hit_type, Notification=spec(destination), Active=True)
