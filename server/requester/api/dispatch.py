"""What every API call shares: the bearer token, the errors, the transaction, the outbox after commit.

An operation is a function of an :class:`ApiContext` registered with
:func:`operation` (method, path, summary, parameters, reply schema); it reads
and writes through the request's requester session and returns a JSON value.
It raises :class:`ApiError` for what the caller did wrong; anything else is a
500 with no detail leaked. A failed call rolls back everything it did.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, g, request
from sqlalchemy import Select
from werkzeug.exceptions import HTTPException

from hits.requester.campaigns.api_tokens import user_of_token
from hits.requester.campaigns.staff import may_manage, may_see_campaign, scoped_campaign_ids
from hits.requester.tables.campaigns import Campaign, StaffUser
from server import MAX_ROW_ID
from server.db import requester_session
from server.task_queue import send_after_commit

log = logging.getLogger(__name__)
bp = Blueprint("api", __name__, url_prefix="/api/v1")
#: The most rows a page of any list holds, and the default.
MAX_PAGE_SIZE = 200
DEFAULT_PAGE_SIZE = 50


class ApiError(Exception):
    """A call the caller got wrong: HTTP status, a stable code, and a message a person reads."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def not_found(what: str) -> ApiError:
    """The one answer for what does not exist and what the user may not see (no probing)."""
    return ApiError(404, "NotFound", f"no {what} you may see")


@dataclass(frozen=True)
class Param:
    """One parameter of an operation, for validation and the OpenAPI description."""

    name: str
    where: str  # "path" | "query" | "body"
    kind: str  # "integer" | "string" | "number"
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operation:
    """A registered API operation."""

    method: str
    path: str
    name: str
    summary: str
    params: tuple[Param, ...]
    reply: dict[str, Any]
    run: Callable[[ApiContext], Any]
    writes: bool = False


@dataclass
class ApiContext:
    """One call: who makes it, its parameters (checked), and what it queued to send after commit."""

    user: StaffUser
    args: dict[str, Any]
    outbox: list[int] = field(default_factory=list)

    @property
    def session(self):  # type: ignore[no-untyped-def]
        return requester_session()

    def visible(self) -> Select[int]:
        """Ids of the campaigns this user may see."""
        return scoped_campaign_ids(self.user)

    def campaign(self, campaign_id: int) -> Campaign:
        """A campaign the user may see, or 404."""
        found = self.session.get(Campaign, campaign_id)
        if found is None or not may_see_campaign(self.session, self.user, campaign_id):
            raise not_found(f"campaign {campaign_id}")
        return found

    def owned_campaign(self, campaign_id: int) -> Campaign:
        """A campaign the user may see and manage (its requester or an admin); else 404, or 403 (QA)."""
        found = self.campaign(campaign_id)
        if not may_manage(self.user):
            raise ApiError(
                403,
                "NotPermitted",
                "changing a campaign's course or budget is for its requester or an admin, not a QA reviewer",
            )
        return found

    def page(self) -> tuple[int, int]:
        """(offset, size) of the page asked for (``page`` from 1, ``page_size`` up to 200)."""
        page = self.args.get("page") or 1
        size = min(self.args.get("page_size") or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        return (page - 1) * size, size


OPERATIONS: list[Operation] = []
_PAGING = (
    Param("page", "query", "integer", "Page number, from 1."),
    Param(
        "page_size", "query", "integer", f"Rows a page, up to {MAX_PAGE_SIZE} (default {DEFAULT_PAGE_SIZE})."
    ),
)


def operation(
    method: str,
    path: str,
    summary: str,
    reply: dict[str, Any],
    params: tuple[Param, ...] = (),
    paged: bool = False,
) -> Callable[[Callable[[ApiContext], Any]], Callable[[ApiContext], Any]]:
    """Register an operation at ``path`` (Flask syntax: ``/campaigns/<int:campaign_id>``)."""

    def register(run: Callable[[ApiContext], Any]) -> Callable[[ApiContext], Any]:
        op = Operation(
            method,
            path,
            run.__name__,
            summary,
            params + (_PAGING if paged else ()),
            reply,
            run,
            method != "GET",
        )
        OPERATIONS.append(op)
        bp.add_url_rule(path, run.__name__, lambda **kw: _call(op, kw), methods=[method])
        return run

    return register


def _reply(body: Any, status: int = 200) -> Response:
    return Response(
        json.dumps(body, ensure_ascii=False, default=str), status=status, mimetype="application/json"
    )


def _error(status: int, code: str, message: str) -> Response:
    g.rollback_only = True
    return _reply({"error": {"code": code, "message": message}}, status)


def _user() -> StaffUser:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "MissingToken", "send your API token as 'Authorization: Bearer <token>'")
    user = user_of_token(requester_session(), token.strip())
    if user is None:
        raise ApiError(401, "InvalidToken", "that API token is unknown or revoked")
    return user


def _integer(value: Any, name: str) -> int:
    if isinstance(value, bool) or not (
        isinstance(value, int) or (isinstance(value, str) and value.isascii() and value.isdigit())
    ):
        raise ApiError(400, "InvalidParameter", f"{name} must be a whole number")
    number = int(value)
    if not 0 < number <= MAX_ROW_ID:
        raise ApiError(400, "InvalidParameter", f"{name} must be between 1 and {MAX_ROW_ID}")
    return number


def _arguments(op: Operation, path_args: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if op.writes and request.get_data():
        try:
            loaded = json.loads(request.get_data())
        except ValueError:
            raise ApiError(400, "InvalidJson", "the request body is not JSON") from None
        if not isinstance(loaded, dict):
            raise ApiError(400, "InvalidJson", "the request body must be a JSON object")
        body = loaded
    args: dict[str, Any] = {}
    for p in op.params:
        source = path_args if p.where == "path" else request.args if p.where == "query" else body
        value = source.get(p.name)
        if value is None or value == "":
            if p.required:
                raise ApiError(400, "MissingParameter", f"{p.name} is required")
            continue
        if p.kind == "integer":
            value = _integer(value, p.name)
        elif p.kind == "string":
            if not isinstance(value, str) or len(value) > 4096:
                raise ApiError(
                    400, "InvalidParameter", f"{p.name} must be a string of at most 4096 characters"
                )
            if p.enum and value not in p.enum:
                raise ApiError(400, "InvalidParameter", f"{p.name} must be one of {', '.join(p.enum)}")
        elif p.kind == "number" and not isinstance(value, int | float | str):
            raise ApiError(400, "InvalidParameter", f"{p.name} must be a number")
        args[p.name] = value
    return args


def _call(op: Operation, path_args: dict[str, Any]) -> Response:
    try:
        ctx = ApiContext(_user(), {})
        ctx.args = _arguments(op, path_args)
        result = op.run(ctx)
    except ApiError as exc:
        return _error(exc.status, exc.code, exc.message)
    except Exception:  # noqa: BLE001 - a bug: logged with its trace, the caller told nothing more
        log.exception("API operation %s failed", op.name)
        return _error(500, "InternalError", "the server failed; nothing was changed")
    if ctx.outbox:
        send_after_commit(requester_session(), "hitforge.apply_decisions", ctx.outbox)
    return _reply(result, 201 if op.method == "POST" else 200)


def http_error_as_json(error: HTTPException) -> Response | HTTPException:
    """An HTTP error under ``/api/v1`` (no such path, a wrong method, a NUL refused at the door)
    answered in the API's JSON shape; any other path keeps the site's own page."""
    if not request.path.startswith(bp.url_prefix or "/api/v1"):
        return error
    codes = {404: "NotFound", 405: "MethodNotAllowed", 413: "TooLarge"}
    message = {
        404: "no such API path: see /api/v1/openapi.json",
        405: "that path does not take this method: see /api/v1/openapi.json",
    }.get(error.code or 0, error.description or "refused")
    return _error(error.code or 400, codes.get(error.code or 0, "BadRequest"), message)
