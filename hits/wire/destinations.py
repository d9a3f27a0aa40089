"""Where the marketplace may POST a requester's notification events: public web addresses only.

A requester names the destination of its events, so without a check the
server would send requests for it to its own loopback services, the cloud
metadata address or the private network (server-side request forgery). A
destination is refused unless it is ``http(s)://`` and every address its host
resolves to is a public unicast one; the operator can allow private ones
(``HITFORGE_NOTIFICATION_ALLOW_PRIVATE=1``) for receivers on its own network.

The check is made when a destination is stored or tested, and again when an
event is sent: the connection itself resolves the host, checks what it got
and connects only to an address it checked, so a name that resolves to a
public address at the first check and to a private one later (DNS rebinding)
is refused too. Redirects are never followed. Every refusal and every failure
looks the same to the requester (:data:`DESTINATION_REFUSED`), so the answers
tell nothing about what listens where.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from sqlalchemy import Engine
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

#: The one answer for a destination refused or an event not taken, whatever the reason.
DESTINATION_REFUSED = (
    "The notification destination cannot be used: give a public http:// or https:// address "
    "that accepts the events it is sent."
)
#: Engine execution option: events delivered through this engine may go to private addresses.
ALLOW_PRIVATE_OPTION = "hitforge_notification_allow_private"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class DestinationRefused(Exception):
    """The destination is not a public http(s) address (or could not be resolved).

    Deliberately not an ``OSError``: urllib3 would take it for a network error and retry.
    """


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is a public unicast address (not private, loopback, link-local, reserved...)."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address inside IPv6 reaches the IPv4 address: judge that one.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            address = embedded
        elif address.is_reserved or address.is_site_local or address in _LOCAL_NAT64:
            # Python 3.11 calls these "global": ::/8 holds the IPv4-compatible and
            # IPv4-translated forms (::127.0.0.1, ::ffff:0:127.0.0.1), site-local
            # fec0::/10 is private by meaning, and a local-use NAT64 prefix
            # translates to the operator's own network.
            return False
    return address.is_global and not address.is_multicast


def is_web_hook(destination: str) -> bool:
    """Whether the marketplace would fetch ``destination`` (anything URL-like; e-mail addresses are not)."""
    lowered = destination.strip().lower()
    return "://" in lowered or lowered.startswith(("http:", "https:"))


def normalised(destination: str) -> str:
    """``destination`` as it is stored and compared: no surrounding spaces, the scheme in lower case.

    URL schemes are case-insensitive (RFC 3986, 3.1), so ``HTTP://host/`` is a web
    hook like ``http://host/``; every later check (is it posted to? may it be?)
    then needs only the one spelling.
    """
    stripped = destination.strip()
    scheme, sep, rest = stripped.partition(":")
    if sep and scheme.isascii() and scheme.isalpha():
        return scheme.lower() + sep + rest
    return stripped


def is_posted_to(destination: str) -> bool:
    """Whether events for ``destination`` are POSTed by the marketplace (an http(s) URL, in any case)."""
    return normalised(destination).startswith(("http://", "https://"))


def resolve_checked(host: str, port: int, allow_private: bool) -> list[str]:
    """The addresses to connect to for ``host``; refused if any of them is not public.

    Every spelling of an address (``2130706433``, ``0x7f000001``, ``127.1``,
    ``[::ffff:127.0.0.1]``, a name) goes through the resolver, so all are
    judged by the address they mean.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError) as exc:
        raise DestinationRefused(f"{host} does not resolve") from exc
    addresses: list[str] = []
    for *_, sockaddr in found:
        text = str(sockaddr[0])
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError as exc:
            raise DestinationRefused(f"{host} resolves to {text}") from exc
        if not allow_private and not is_public(address):
            raise DestinationRefused(f"{host} resolves to a non-public address")
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise DestinationRefused(f"{host} does not resolve")
    return addresses


def check_destination(destination: str, allow_private: bool) -> None:
    """Refuse (``DestinationRefused``) a destination the marketplace must not send events to."""
    try:
        parts = urlsplit(destination.strip())
        port = parts.port
    except ValueError as exc:
        raise DestinationRefused("not a URL") from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise DestinationRefused("only http:// and https:// destinations are sent to")
    if allow_private:
        return
    resolve_checked(parts.hostname, port or (443 if parts.scheme.lower() == "https" else 80), allow_private)


class _CheckedConnectionMixin:
    """Resolves, checks, then connects only to a checked address (see the module's docstring)."""

    allow_private = False
    host: str
    port: int
    timeout: Any
    source_address: Any
    socket_options: Any

    def _new_conn(self) -> socket.socket:
        addresses = resolve_checked(self.host, self.port, self.allow_private)
        last: OSError | None = None
        for address in addresses:
            try:
                return urllib3_connection.create_connection(
                    (address, self.port),
                    self.timeout,
                    source_address=self.source_address,
                    socket_options=self.socket_options,
                )
            except TimeoutError as exc:
                raise ConnectTimeoutError(self, f"Connection to {self.host} timed out") from exc
            except OSError as exc:
                last = exc
        raise NewConnectionError(self, f"Failed to establish a new connection: {last}")  # type: ignore[arg-type]


class _CheckedHTTPConnection(_CheckedConnectionMixin, HTTPConnection):
    pass


class _CheckedHTTPSConnection(_CheckedConnectionMixin, HTTPSConnection):
    pass


class _PrivateHTTPConnection(_CheckedHTTPConnection):
    allow_private = True


class _PrivateHTTPSConnection(_CheckedHTTPSConnection):
    allow_private = True


def _pools(allow_private: bool) -> dict[str, type[HTTPConnectionPool]]:
    http_cls = _PrivateHTTPConnection if allow_private else _CheckedHTTPConnection
    https_cls = _PrivateHTTPSConnection if allow_private else _CheckedHTTPSConnection
    http_pool = type("CheckedHTTPConnectionPool", (HTTPConnectionPool,), {"ConnectionCls": http_cls})
    https_pool = type("CheckedHTTPSConnectionPool", (HTTPSConnectionPool,), {"ConnectionCls": https_cls})
    return {"http": http_pool, "https": https_pool}


class _CheckedAdapter(HTTPAdapter):
    def __init__(self, allow_private: bool) -> None:
        self._allow_private = allow_private
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _pools(self._allow_private)  # type: ignore[assignment]


def checked_session(allow_private: bool) -> requests.Session:
    """A ``requests`` session that connects only to addresses :func:`resolve_checked` allows.

    Proxies and .netrc from the environment are not used, so each connection goes
    where it was checked to; the caller still passes ``allow_redirects=False``.
    """
    http = requests.Session()
    http.trust_env = False
    adapter = _CheckedAdapter(allow_private)
    http.mount("http://", adapter)
    http.mount("https://", adapter)
    return http


def post_json(destination: str, document: dict[str, Any], timeout: float, allow_private: bool) -> int:
    """POST ``document`` to a checked destination; the HTTP status.

    Raises ``DestinationRefused`` for a destination that may not be sent to
    and ``requests.RequestException`` for a network failure. Redirects are not
    followed (a 3xx is returned as it is); proxies and .netrc from the
    environment are not used, so the connection goes where it was checked to.
    """
    check_destination(destination, allow_private)
    with checked_session(allow_private) as http:
        response = http.post(
            destination.strip(),
            data=json.dumps(document),
            headers={"Content-Type": "application/json"},
            timeout=timeout,
            allow_redirects=False,
        )
        return int(response.status_code)


def allow_private_destinations(engine: Engine, allowed: bool = True) -> None:
    """Let events delivered through ``engine`` go to private addresses (the operator's setting)."""
    engine.update_execution_options(**{ALLOW_PRIVATE_OPTION: allowed})


def private_destinations_allowed(engine: Engine) -> bool:
    """Whether the operator allowed private destinations for events delivered through ``engine``."""
    return bool(engine.get_execution_options().get(ALLOW_PRIVATE_OPTION, False))
