"""A WSGI app that answers every MTurk call at once without doing anything: the benchmark's floor.

It answers ``{}`` (a valid, empty output for any operation), or, for an
operation named in the JSON file that ``HITFORGE_BENCH_CANNED`` points to
(target -> body), that canned body: the floor of a call whose response the
client must also parse.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

_canned_path = os.environ.get("HITFORGE_BENCH_CANNED")
CANNED: dict[str, bytes] = (
    {target: body.encode() for target, body in json.loads(Path(_canned_path).read_text()).items()}
    if _canned_path
    else {}
)


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Read the request, do nothing, answer ``{}`` or the operation's canned body."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    environ["wsgi.input"].read(length)
    body = CANNED.get(environ.get("HTTP_X_AMZ_TARGET", ""), b"{}")
    start_response(
        "200 OK",
        [("Content-Type", "application/x-amz-json-1.1"), ("Content-Length", str(len(body)))],
    )
    return [body]
