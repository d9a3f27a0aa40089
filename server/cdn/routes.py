"""``/cdn/``: the installed library copies and the operator's directories, as static files.

HIT pages run in a sandboxed frame with an opaque origin, so every request they
make here is cross-origin: fonts (always fetched in CORS mode) and tags with
``crossorigin`` need ``Access-Control-Allow-Origin``. Only asset types are served.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from flask import Blueprint, abort, send_from_directory
from werkzeug.wrappers import Response

from server.cdn import app_cdn_map

bp = Blueprint("cdn", __name__, url_prefix="/cdn")

# Python's mimetypes lacks some of these (woff2 before 3.12) and guesses others per platform.
CONTENT_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".map": "application/json",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".gif": "image/gif",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".ico": "image/x-icon",
}
#: A library copy's URL names its version, so its bytes never change: cache it for a year.
VERSIONED_MAX_AGE = 365 * 86_400
#: An operator's directory may be edited in place.
SITE_MAX_AGE = 3_600


def _send(directory: Path, filename: str, max_age: int, immutable: bool) -> Response:
    content_type = CONTENT_TYPES.get(PurePosixPath(filename).suffix.lower())
    if content_type is None:
        abort(404)
    response = send_from_directory(directory, filename, mimetype=content_type, max_age=max_age)
    response.headers["Cache-Control"] = f"public, max-age={max_age}" + (", immutable" if immutable else "")
    response.headers["Access-Control-Allow-Origin"] = "*"
    response.headers["Cross-Origin-Resource-Policy"] = "cross-origin"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@bp.get("/<library>/<version>/<path:filename>")
def library_file(library: str, version: str, filename: str) -> Response:
    """A file of the installed copy of ``library`` at ``version``."""
    copy = app_cdn_map().copy(library, version)
    if copy is None:
        abort(404)
    return _send(copy.directory, filename, VERSIONED_MAX_AGE, immutable=True)


@bp.get("/site/<int:index>/<path:filename>")
def site_file(index: int, filename: str) -> Response:
    """A file under the operator's prefix number ``index`` (HITFORGE_CDN_MAP)."""
    prefix = next((p for p in app_cdn_map().prefixes if p.index == index), None)
    if prefix is None:
        abort(404)
    if prefix.target.is_file():
        if filename != prefix.target.name:
            abort(404)
        return _send(prefix.target.parent, filename, SITE_MAX_AGE, immutable=False)
    return _send(prefix.target, filename, SITE_MAX_AGE, immutable=False)
