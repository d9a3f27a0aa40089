"""Hand-signed requests to the MTurk API: any body, any header, signed as botocore signs."""

from __future__ import annotations

import json
from typing import Any

import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.parsers import create_parser

from hits.market.accounts import IssuedKey
from tests.market.shapes import service_model

TARGET = "MTurkRequesterServiceV20170117."


def signed_post(
    url: str,
    key: IssuedKey,
    operation: str,
    body: bytes,
    *,
    region: str = "us-east-1",
    sign_target: bool = True,
    signed_headers: dict[str, str] | None = None,
    sent_body: bytes | None = None,
) -> requests.Response:
    """POST ``body`` to the API as ``operation``, signed with SigV4 (the target left unsigned if asked).

    ``signed_headers`` are added and signed; ``sent_body``, if given, is sent in
    place of the ``body`` that was signed (a request changed on its way).
    """
    headers = {"Content-Type": "application/x-amz-json-1.1", **(signed_headers or {})}
    target = {"X-Amz-Target": TARGET + operation}
    request = AWSRequest(
        method="POST",
        url=url.rstrip("/") + "/",
        data=body,
        headers={**headers, **(target if sign_target else {})},
    )
    SigV4Auth(Credentials(key.access_key_id, key.secret_access_key), "mturk-requester", region).add_auth(
        request
    )
    sent = dict(request.headers.items()) | target
    return requests.post(request.url, data=body if sent_body is None else sent_body, headers=sent, timeout=30)


def call(url: str, key: IssuedKey, operation: str, params: Any) -> requests.Response:
    """:func:`signed_post` of ``params`` as JSON (NaN and Infinity written as Python writes them)."""
    return signed_post(url, key, operation, json.dumps(params).encode())


def parsed(response: requests.Response, operation: str) -> dict[str, Any]:
    """The response as botocore parses it for ``operation`` (an error lands under "Error")."""
    shape = service_model().operation_model(operation).output_shape
    result: dict[str, Any] = create_parser("json").parse(
        {"status_code": response.status_code, "headers": response.headers, "body": response.content},
        shape,
    )
    return result
