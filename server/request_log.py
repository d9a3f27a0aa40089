"""Request ids and structured logs.

Every request gets an id, sent back as ``X-Request-Id`` and, on the MTurk API,
as ``x-amzn-RequestId`` (the same value: the id a boto3 user quotes from
``ResponseMetadata`` finds the server's log lines). With
``HITFORGE_LOG_FORMAT=json`` every log line is one JSON object carrying that
id, and each request ends with one access line (endpoint, status, time; the
path without its query string, which may carry a worker's capability).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, g, has_request_context, request

#: The logger of the one line each request ends with.
access_log = logging.getLogger("hitforge.access")

#: What a log record carries besides the standard fields, copied into the JSON when present.
_EXTRA_FIELDS = ("endpoint", "method", "path", "status", "duration_ms")


def request_id() -> str:
    """The current request's id (made on first use)."""
    if "request_id" not in g:
        g.request_id = str(uuid.uuid4())
    value: str = g.request_id
    return value


class RequestIdFilter(logging.Filter):
    """Puts the current request's id (or none, outside a request) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id() if has_request_context() else None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, and an error's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for name in _EXTRA_FIELDS:
            if hasattr(record, name):
                line[name] = getattr(record, name)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_logging(log_format: str) -> None:
    """Send the root logger's lines to stderr as ``log_format`` says ("json" or "text"), once."""
    root = logging.getLogger()
    if any(getattr(handler, "hitforge", False) for handler in root.handlers):
        return
    handler = logging.StreamHandler()
    handler.hitforge = True  # type: ignore[attr-defined]
    handler.addFilter(RequestIdFilter())
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        )
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)


def _start() -> None:
    g.request_started = time.perf_counter()
    request_id()


def elapsed_seconds() -> float | None:
    """How long the current request has run (None: it began before this module's hook ran)."""
    started: float | None = g.get("request_started")
    return None if started is None else time.perf_counter() - started


def endpoint_name() -> str:
    """The route's endpoint name ("unmatched" for none): bounded, unlike the raw path."""
    return request.url_rule.endpoint if request.url_rule is not None else "unmatched"


def _finish(response: Response) -> Response:
    response.headers["X-Request-Id"] = request_id()
    elapsed = elapsed_seconds()
    if elapsed is not None and access_log.isEnabledFor(logging.INFO):
        endpoint = endpoint_name()
        access_log.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "endpoint": endpoint,
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 2),
            },
        )
    return response


def init_app(app: Flask, log_format: str) -> None:
    """Give every request an id and a start time (``server.metrics`` times requests by it); with
    ``log_format`` set ("json" or "text"), log to stderr that way."""
    app.before_request(_start)
    app.after_request(_finish)
    if log_format:
        configure_logging(log_format)
