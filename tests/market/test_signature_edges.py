"""A signed request cannot be changed on its way: the body the signature covers is the body that runs."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.market.signed import parsed, signed_post

OPERATION = "CreateQualificationType"


def _body(name: str) -> bytes:
    return json.dumps({"Name": name, "Description": "d", "QualificationTypeStatus": "Active"}).encode()


@pytest.mark.parametrize(
    "claimed",
    [
        pytest.param(lambda signed: hashlib.sha256(signed).hexdigest(), id="the-signed-body's-hash"),
        pytest.param(lambda signed: "UNSIGNED-PAYLOAD", id="unsigned-payload"),
        pytest.param(lambda signed: "STREAMING-UNSIGNED-PAYLOAD-TRAILER", id="streaming"),
    ],
)
def test_a_body_changed_after_signing_is_refused(live_server, requester, claimed) -> None:  # type: ignore[no-untyped-def]
    """A signed X-Amz-Content-SHA256 must be the hash of the body sent, not a stand-in for it.

    botocore's canonical request takes that header's value in place of the
    body's hash, so a server that does not compare the two runs any body
    under a signature made for another one (a replay with a new body).
    """
    signed, swapped = _body("Signed name"), _body("Swapped name")
    response = signed_post(
        live_server.url,
        requester,
        OPERATION,
        signed,
        signed_headers={"X-Amz-Content-SHA256": claimed(signed)},
        sent_body=swapped,
    )
    assert response.status_code == 400, response.text
    assert parsed(response, OPERATION)["Error"]["Code"] == "InvalidSignatureException"


def test_a_signed_body_hash_that_matches_is_taken(live_server, requester) -> None:  # type: ignore[no-untyped-def]
    """Clients that sign the header (as the S3-style signers do) still work when it is true."""
    body = _body("Hashed body")
    response = signed_post(
        live_server.url,
        requester,
        OPERATION,
        body,
        signed_headers={"X-Amz-Content-SHA256": hashlib.sha256(body).hexdigest()},
    )
    assert response.status_code == 200, response.text
    assert parsed(response, OPERATION)["QualificationType"]["Name"] == "Hashed body"
