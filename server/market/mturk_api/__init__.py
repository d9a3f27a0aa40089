"""The MTurk-compatible requester API: AWS JSON 1.1 over ``POST /``.

A thin adapter: it authenticates the SigV4 signature, finds the operation in
the registry, runs it in the request's marketplace session and renders
results and errors exactly as botocore parses them.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Blueprint, Flask, Response, g, request
from werkzeug.exceptions import HTTPException

from hits import shared_limits
from hits.market.accounts import Caller, find_caller
from hits.market.errors import MarketError
from server.db import market_session, read_only_request, runtime
from server.market.mturk_api import (  # noqa: F401
    ops_account,
    ops_assignments,
    ops_hit_admin,
    ops_hits,
    ops_notifications,
    ops_qualification_admin,
    ops_qualifications,
    ops_workers,
    throttle,
)
from server.market.mturk_api.model_check import check_request
from server.market.mturk_api.registry import OPERATIONS, READ_ONLY_OPERATIONS, CallContext
from server.market.mturk_api.sigv4 import AuthFailure, SignedRequest, parse_authorization, verify
from server.metrics import count_api_call
from server.request_log import request_id

TARGET_PREFIX = "MTurkRequesterServiceV20170117."
CONTENT_TYPE = "application/x-amz-json-1.1"
log = logging.getLogger(__name__)

bp = Blueprint("mturk_api", __name__)


def _reply(body: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, content_type=CONTENT_TYPE)


def _error(
    wire_type: str, message: str, status: int, turk_code: str | None = None, message_key: str = "Message"
) -> Response:
    body: dict[str, Any] = {"__type": wire_type, message_key: message}
    if turk_code:
        body["TurkErrorCode"] = turk_code
    g.rollback_only = True
    count_api_call(g.get("api_operation", "unknown"), turk_code or wire_type)
    return _reply(body, status)


def _authenticate() -> Caller:
    """The caller behind a valid signature, or ``AuthFailure``."""
    match = parse_authorization(request.headers.get("Authorization"))
    lookups = runtime().caller_lookups
    if lookups is None:
        caller = find_caller(market_session().connection(), match["key"])
    else:
        with lookups.connect() as connection:
            caller = find_caller(connection, match["key"])
    if caller is None:
        raise AuthFailure(
            "UnrecognizedClientException", "The security token included in the request is invalid."
        )
    headers = {name.lower(): value for name, value in request.headers.items()}
    signed = SignedRequest(request.method, request.url, headers, request.get_data())
    verify(signed, caller.secret_access_key, region=runtime().settings.mturk_region)
    return caller


@bp.after_request
def _send_request_id(response: Response) -> Response:
    # botocore reads ResponseMetadata["RequestId"] from this header, on errors too; it is the
    # request's id in the server's logs (server/request_log.py).
    response.headers["x-amzn-RequestId"] = request_id()
    return response


@bp.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> Response:
    """An HTTP-level refusal inside the API (a body over the size limit) as a JSON error, not a page."""
    status = exc.code or 400
    return _error("SerializationException" if status < 500 else "ServiceFault", exc.description or "", status)


@bp.errorhandler(Exception)
def _unexpected(exc: Exception) -> Response:
    """A bug reaches the client as MTurk's retryable ServiceFault in JSON, never a traceback page."""
    log.exception("MTurk API request %s failed", request_id())
    return _error(
        "ServiceFault", "The service failed to process the request.", 500, "AWS.MechanicalTurk.ServiceFault"
    )


@bp.post("/")
def dispatch() -> Response:
    target = request.headers.get("X-Amz-Target", "")
    if not target.startswith(TARGET_PREFIX):
        return _error("UnknownOperationException", f"Unknown target {target!r}.", 400)
    name = target[len(TARGET_PREFIX) :]
    handler = OPERATIONS.get(name)
    # A made-up operation name is counted as one label, never as itself (labels stay bounded).
    g.api_operation = name if handler is not None else "unknown"
    if handler is None:
        return _error("UnknownOperationException", f"Operation {name} is not supported.", 400)
    if name in READ_ONLY_OPERATIONS:
        read_only_request()
    try:
        caller = _authenticate()
    except AuthFailure as exc:
        return _error(exc.wire_type, exc.message, exc.status)
    try:
        params = json.loads(request.get_data() or b"{}")
    except (ValueError, RecursionError):  # RecursionError: arrays or objects nested thousands deep
        return _error("SerializationException", "The request body is not valid JSON.", 400)
    if not isinstance(params, dict):
        return _error("SerializationException", "The request body must be a JSON object.", 400)
    verdict = throttle.verdict(caller, shared_limits.buckets_for(runtime().settings))
    if verdict == "throttle":
        return _error("ThrottlingException", "Rate exceeded", 400, message_key="message")
    if verdict == "fault":
        return _error("ServiceFault", "Injected fault: please retry.", 500, "AWS.MechanicalTurk.ServiceFault")
    try:
        check_request(name, params)
    except MarketError as exc:
        return _error(exc.wire_type, exc.message, exc.http_status, exc.turk_error_code)
    ctx = CallContext(session=market_session(), requester_id=caller.requester_id, settings=runtime().settings)
    try:
        result = handler(ctx, params)
    except MarketError as exc:
        return _error(exc.wire_type, exc.message, exc.http_status, exc.turk_error_code)
    count_api_call(name, "ok")
    return _reply(result)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
