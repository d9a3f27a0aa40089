"""The worker site: sign up, sign in, find HITs, preview, accept, work, submit, qualify, get paid.

The routes live in modules by topic; importing them here registers them on ``bp``.
"""

from __future__ import annotations

from flask import Flask
from flask_wtf.csrf import CSRFProtect

from server import capabilities
from server.market.worker_site import (
    auth,
    dashboard,
    earnings,
    groups,
    html_question,
    invitations,
    quals,
    recruited,
    uploads,
    work,
)
from server.market.worker_site.base import NOT_AVAILABLE, bp, current_worker, worker_required

# The route modules are imported for their side effect: registering views on ``bp``.
__all__ = [
    "NOT_AVAILABLE",
    "auth",
    "bp",
    "current_worker",
    "dashboard",
    "earnings",
    "groups",
    "html_question",
    "init_app",
    "invitations",
    "quals",
    "recruited",
    "uploads",
    "work",
    "worker_required",
]


def init_app(app: Flask, csrf: CSRFProtect) -> None:
    """Register the worker site on ``app``."""
    # externalSubmit is posted by requesters' HIT pages, which cannot carry our
    # CSRF token; it is guarded by the signed-in worker owning the assignment,
    # or by a signed token bound to the worker and assignment (HTMLQuestion), or
    # by the capability in turkSubmitTo (ExternalQuestion pages on other sites).
    csrf.exempt(work.external_submit)
    csrf.exempt(work.external_submit_with_capability)
    app.register_blueprint(bp)
    capabilities.provide(
        app,
        signed_in_worker_id=_signed_in_worker_id,
        sign_in_recruited=recruited.sign_in_recruited,
        accept_next=recruited.accept_next,
        assignment_states=recruited.assignment_states,
        release_assignments=recruited.release_assignments,
    )


def _signed_in_worker_id() -> str | None:
    # current_worker checks the cookie's sign-in is still current, not just signed.
    worker = current_worker()
    return worker.id if worker is not None else None
