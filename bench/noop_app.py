"""A WSGI app that answers every MTurk call at once with an empty result: the benchmark's floor."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Read the request, do nothing, answer ``{}`` (a valid, empty output for any operation)."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    environ["wsgi.input"].read(length)
    body = b"{}"
    start_response(
        "200 OK",
        [("Content-Type", "application/x-amz-json-1.1"), ("Content-Length", str(len(body)))],
    )
    return [body]
