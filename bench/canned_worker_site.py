"""A WSGI app that answers the worker path's requests with copies of real pages: the benchmark's floor.

``HITFORGE_BENCH_PAGES`` names a JSON file of the pages one real cycle
returned (``list``, ``work``, ``frame``, ``submitted``). Signing up sets a
cookie, a group's Accept redirects to the work page, everything else answers
its page at once: no database, no templates. The same client against it
shows what the machine and the client allow, whatever the server does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

_pages_path = os.environ.get("HITFORGE_BENCH_PAGES")
PAGES: dict[str, bytes] = (
    {name: body.encode() for name, body in json.loads(Path(_pages_path).read_text()).items()}
    if _pages_path
    else {}
)
WORK_PATH = os.environ.get("HITFORGE_BENCH_WORK_PATH", "/work/CANNED")


def _page(name: str) -> bytes:
    return PAGES.get(name, b"<!DOCTYPE html><title>canned</title>")


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Read the request, answer the page the real site would have sent for it."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    environ["wsgi.input"].read(length)
    method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/")
    headers = [("Content-Type", "text/html; charset=utf-8")]
    status, body = "200 OK", b""
    if path == "/signup":
        if method == "POST":
            status = "302 Found"
            headers += [("Location", "/"), ("Set-Cookie", "session=canned; HttpOnly; Path=/")]
        else:
            body = _page("list")
    elif method == "POST" and path.endswith("/accept"):
        status = "302 Found"
        headers.append(("Location", WORK_PATH))
    elif path.startswith("/work/"):
        body = _page("work")
    elif path.startswith("/hits/"):
        body = _page("frame")
    elif path.endswith("/externalSubmit"):
        body = _page("submitted")
    else:
        body = _page("list")
    headers.append(("Content-Length", str(len(body))))
    start_response(status, headers)
    return [body]
