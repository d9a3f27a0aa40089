"""The Flask app: worker site, HIT pages, dashboard and the MTurk-compatible API."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

    from hits.settings import Settings

#: The largest value of a PostgreSQL INTEGER (and of every id column's type).
MAX_ROW_ID = 2**31 - 1


def create_app(test_config: dict[str, Any] | None = None, settings: Settings | None = None) -> Flask:
    """Build the app for ``settings`` (default: from ``HITFORGE_*`` variables)."""
    # Flask is imported here, not above: every ``hitforge`` command imports this package (the CLI
    # lives in it), and ``hitforge --help`` must not pay for a web framework it does not use.
    from flask import Flask, g
    from flask_wtf.csrf import CSRFProtect
    from werkzeug.middleware.proxy_fix import ProxyFix

    from hits.settings import load_settings
    from server.routing import RowIdConverter

    settings = settings or load_settings()
    app = Flask(__name__, instance_relative_config=False)
    # Every <int:...> in a path is a row id, stored as a 32-bit INTEGER: a larger number can name
    # nothing, and passed on it overflows the driver (SQLite) or the column (PostgreSQL) as a 500.
    app.url_map.converters["int"] = RowIdConverter
    app.config.update(
        SECRET_KEY=settings.secret_key,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # Served over https (as its public URL says), the cookie must never travel over plain http.
        SESSION_COOKIE_SECURE=settings.public_url.startswith("https://"),
        # The signature itself outlives no sign-in (each kind's limits are checked on top:
        # ``server/signin_session.py``); Flask's default is 31 days.
        PERMANENT_SESSION_LIFETIME=max(settings.worker_session.lifetime, settings.staff_session.lifetime),
        WTF_CSRF_TIME_LIMIT=None,
        # Cookies are kept per host name, not per port: two halves served apart under one name
        # (127.0.0.1:8000 and :8001) would overwrite each other's session. Each half names its own.
        SESSION_COOKIE_NAME="session" if settings.serve == "all" else f"hitforge_{settings.serve}_session",
        MAX_CONTENT_LENGTH=2 * 1024 * 1024,
    )
    if test_config:
        app.config.update(test_config)
    if settings.trusted_proxies:
        # Behind N proxies, the client's address (which the sign-in throttle counts) and scheme
        # are the ones they forwarded; without this every client would share the proxy's address.
        hops = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]

    from server import cdn, db, errors, health, metrics, request_log, task_queue
    from server.market import clock, mturk_api, worker_site
    from server.requester import api, dashboard, hit_pages, qualify, recruit_pages
    from server.requester import metrics as requester_metrics
    from server.templating import init_app as init_templating

    request_log.init_app(app, settings.log_format)
    if settings.metrics_enabled:
        metrics.init_app(app, settings.metrics_token)
    db.init_app(app, settings)
    health.init_app(app)
    errors.init_app(app)
    task_queue.init_app(app, settings)
    csrf = CSRFProtect(app)
    init_templating(app)
    cdn.init_app(app, settings)
    # Both halves in one app by default; HITFORGE_SERVE=market or requester serves one, for the two
    # on separate machines. They meet only at the API and in capabilities.py (answered "nobody" here
    # when the other half is elsewhere).
    if settings.serves_market:
        mturk_api.init_app(app)
        csrf.exempt(mturk_api.bp)
        worker_site.init_app(app, csrf)
        clock.init_app(app, "mturk_api", "worker_site")
    if settings.serves_requester:
        hit_pages.init_app(app)
        dashboard.init_app(app)
        api.init_app(app, csrf)
        qualify.init_app(app)
        recruit_pages.init_app(app)
        if settings.metrics_enabled:
            requester_metrics.init_app(app)

    @app.before_request
    def _nonce() -> None:
        g.csp_nonce = secrets.token_urlsafe(16)

    @app.after_request
    def _security_headers(response: Any) -> Any:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if response.mimetype == "text/html":
            response.headers.setdefault(
                "Content-Security-Policy",
                f"default-src 'self'; img-src 'self' data:; style-src 'self'; "
                f"script-src 'self' 'nonce-{g.get('csp_nonce', '')}'; frame-src *; form-action *",
            )
        return response

    return app
