"""Verifying AWS Signature Version 4 on incoming API requests.

The canonical request and signature are computed by botocore's own
``SigV4Auth``, the same code that signed the request on the client, fed with
exactly the headers the client says it signed and the timestamp it used.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SERVICE = "mturk-requester"
#: Headers a request must sign: the target names the operation, so an unsigned one could be swapped.
REQUIRED_SIGNED_HEADERS = ("host", "x-amz-date", "x-amz-target")
MAX_CLOCK_SKEW = timedelta(minutes=15)
_AUTH_RE = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request,\s*SignedHeaders=(?P<signed>[^,]+),\s*Signature=(?P<sig>[0-9a-f]{64})$"
)


class AuthFailure(Exception):
    """A request whose signature cannot be accepted; carries AWS's error type."""

    def __init__(self, wire_type: str, message: str, status: int = 400):
        super().__init__(message)
        self.wire_type = wire_type
        self.message = message
        self.status = status


@dataclass(frozen=True)
class SignedRequest:
    """The parts of an HTTP request that SigV4 covers."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes


@lru_cache(maxsize=1024)
def _signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """SigV4's signing key for a secret on one day, region and service (four HMACs, derived once).

    Kept in the server's memory only, beside the secrets the server holds anyway;
    a day's keys for as many callers as the cache holds, the oldest dropped first.
    """
    key = f"AWS4{secret_key}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def parse_authorization(header: str | None) -> re.Match[str]:
    """Split an Authorization header; refuse anything that is not SigV4."""
    if not header:
        raise AuthFailure("MissingAuthenticationTokenException", "Missing Authentication Token", 400)
    match = _AUTH_RE.match(header.strip())
    if match is None:
        raise AuthFailure("IncompleteSignatureException", "Authorization header is not a valid SigV4 header.")
    return match


def verify(
    request: SignedRequest, secret_key: str, now: datetime | None = None, region: str | None = None
) -> None:
    """Raise ``AuthFailure`` unless ``request`` was signed with ``secret_key`` (for ``region``, if given).

    The signature must cover the ``X-Amz-Target`` header (which operation
    runs) and be scoped to the configured region: a signature made for
    another region, or one that leaves the operation open to change, is refused,
    and so is a signed ``X-Amz-Content-SHA256`` that is not the body's hash.
    """
    match = parse_authorization(request.headers.get("authorization"))
    if match["service"] != SERVICE:
        raise AuthFailure(
            "InvalidSignatureException", f"Credential should be scoped to correct service: '{SERVICE}'."
        )
    if region is not None and match["region"] != region:
        raise AuthFailure(
            "InvalidSignatureException",
            f"Credential should be scoped to a valid region, not '{match['region']}' "
            f"(this endpoint is '{region}').",
        )
    unsigned = [name for name in REQUIRED_SIGNED_HEADERS if name not in match["signed"].split(";")]
    if unsigned:
        raise AuthFailure(
            "IncompleteSignatureException", f"The request must sign the header(s): {', '.join(unsigned)}."
        )
    timestamp = request.headers.get("x-amz-date", "")
    try:
        signed_at = datetime.strptime(timestamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError as exc:
        raise AuthFailure("IncompleteSignatureException", "X-Amz-Date is missing or malformed.") from exc
    if timestamp[:8] != match["date"]:
        raise AuthFailure("InvalidSignatureException", "Credential date does not match X-Amz-Date.")
    now = now or datetime.now(UTC)
    if abs(now - signed_at) > MAX_CLOCK_SKEW:
        raise AuthFailure("InvalidSignatureException", "Signature expired: the request time is too skewed.")

    signed_names = match["signed"].split(";")
    headers = {}
    for name in signed_names:
        if name not in request.headers:
            raise AuthFailure("IncompleteSignatureException", f"Signed header {name} is missing.")
        headers[name] = request.headers[name]
    # botocore's canonical request takes a signed X-Amz-Content-SHA256 in place of
    # the body's hash, so the header must be that hash: otherwise a signature
    # made for one body (or for UNSIGNED-PAYLOAD) would run any other body.
    claimed = headers.get("x-amz-content-sha256")
    if claimed is not None and claimed != hashlib.sha256(request.body).hexdigest():
        raise AuthFailure(
            "InvalidSignatureException",
            "The X-Amz-Content-SHA256 header does not match the SHA-256 of the request body.",
        )
    aws_request = AWSRequest(method=request.method, url=request.url, headers=headers, data=request.body)
    aws_request.context["timestamp"] = timestamp
    signer = SigV4Auth(Credentials(match["key"], secret_key), SERVICE, match["region"])
    canonical = signer.canonical_request(aws_request)
    string_to_sign = signer.string_to_sign(aws_request, canonical)
    # botocore's own signature(), with the derived key kept: it changes once a day per key.
    signing_key = _signing_key(secret_key, match["date"], match["region"], SERVICE)
    expected = hmac.new(signing_key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, match["sig"]):
        raise AuthFailure(
            "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method.",
        )
