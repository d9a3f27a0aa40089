"""Files workers uploaded for FileUploadAnswer questions, handed to their requester.

``GetFileUploadURL`` answers with a URL to ``/uploads/<token>``: the token is
signed with the app's secret, names one stored file, and is good for 60
seconds, like the temporary S3 URL MTurk gave. The file is always served as an
attachment, with nosniff and a sandboxing policy, never as a page of this site.
"""

from __future__ import annotations

import io
import re
from typing import Any

from flask import abort, current_app, send_file
from itsdangerous import BadSignature, URLSafeTimedSerializer

from hits.market.models.requests import UploadedFile
from server.db import market_session, runtime
from server.market.worker_site.base import bp

SALT = "hitforge.worker-site.uploaded-file"
URL_SECONDS = 60
MIME_TYPE = re.compile(r"[\w.+-]+/[\w.+-]+")


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(str(current_app.secret_key), salt=SALT)


def uploaded_file_url(key: str) -> str:
    """A URL that downloads the file with UploadedFileKey ``key`` for the next 60 seconds."""
    token = _serializer().dumps(key)
    return f"{runtime().settings.public_url.rstrip('/')}/uploads/{token}"


@bp.get("/uploads/<token>")
def uploaded_file(token: str) -> Any:
    """The file a ``GetFileUploadURL`` URL names, while the URL is fresh (403 after)."""
    try:
        key = _serializer().loads(token, max_age=URL_SECONDS)
    except BadSignature:  # expired ones too (SignatureExpired)
        abort(403)
    stored = market_session().get(UploadedFile, key) if isinstance(key, str) else None
    if stored is None:
        abort(404)
    response = send_file(
        io.BytesIO(stored.data),
        mimetype=stored.content_type
        if MIME_TYPE.fullmatch(stored.content_type)
        else "application/octet-stream",
        as_attachment=True,
        download_name=stored.filename,
        max_age=0,
    )
    response.headers["Cache-Control"] = "private, no-store"
    response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
