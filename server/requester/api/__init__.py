"""The JSON API for requesters' and reviewers' scripts: ``/api/v1``, described by OpenAPI.

``dispatch`` owns what every call shares (the token, errors, the transaction and
the outbox sent after commit); each operation in ``operations`` is a few lines
over the same domain code the dashboard uses; ``wire`` shapes the replies;
``openapi`` describes them all from the registry. A token acts as its user: the
same campaigns, the same actions, the same audit log as on the dashboard.
"""

from __future__ import annotations

from flask import Flask
from flask_wtf.csrf import CSRFProtect
from werkzeug.exceptions import HTTPException

from server.requester.api import operations  # noqa: F401 - registers the operations
from server.requester.api.dispatch import bp, http_error_as_json


def init_app(app: Flask, csrf: CSRFProtect) -> None:
    """Register the API; its calls carry a bearer token, not a browser's cookie, so no CSRF token."""
    csrf.exempt(bp)
    app.register_blueprint(bp)
    # App-wide: a path that matches no route belongs to no blueprint, so a blueprint's handler
    # would never see it; the handler answers JSON under /api/v1 only.
    app.register_error_handler(HTTPException, http_error_as_json)
