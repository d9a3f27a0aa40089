"""Invitation links: ``/invite/<token>`` signs a new worker up, or a signed-in one accepts.

Either way the invitation's qualification is granted in the request's unit of
work that counts the use (``hits/market/invitations.py``); a link that is
unknown, expired or used up gets a page saying which, and nothing is made.
"""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for

from hits import signin_limits
from hits.market import invitations
from hits.market.errors import RequestError
from hits.market.models import SignInFailure
from server.db import market_session
from server.market.worker_site import signin_state
from server.market.worker_site.base import bp, current_worker, worker_required

#: The status of the page for a link that cannot be taken: a made-up token is simply not found,
#: an expired or used-up one is gone for good.
REFUSED_STATUS = {invitations.UNKNOWN: 404, invitations.EXPIRED: 410, invitations.USED_UP: 410}


def _refused(reason: str) -> Any:
    return (
        render_template("worker/invitation_refused.html", message=invitations.REFUSALS[reason]),
        REFUSED_STATUS[reason],
    )


def _form(token: str, status: int = 200) -> Any:
    """The invitation's page: a sign-up form, or for a signed-in worker an accept button."""
    db = market_session()
    invitation = invitations.find(db, token)
    worker = current_worker()
    already = (
        worker is not None and invitation is not None and invitations.has_used(db, invitation, worker.id)
    )
    reason = invitations.refusal(invitation)
    if reason is not None and not (already and reason == invitations.USED_UP):
        return _refused(reason)
    assert invitation is not None  # noqa: S101 - refusal() is UNKNOWN for None
    page = render_template(
        "worker/invitation.html",
        token=token,
        qualification=invitations.qualification_name(db, invitation),
        already=already,
        form=request.form if request.method == "POST" else {},
    )
    return page, status


@bp.get("/invite/<token>")
def invitation(token: str) -> Any:
    """An invitation: what it grants, and how to take it."""
    return _form(token)


@bp.post("/invite/<token>")
def sign_up_with_invitation(token: str) -> Any:
    """Create a worker account through the invitation and grant its qualification, then sign in."""
    if (throttled := _throttled()) is not None:
        return throttled
    db = market_session()
    try:
        worker = invitations.sign_up(
            db,
            token,
            request.form.get("username", ""),
            request.form.get("password", ""),
            country=request.form.get("country", "US") or "US",
        )
    except invitations.InvitationRefused as refused:
        return _refused(refused.reason)
    except RequestError as exc:
        flash(exc.message, "error")
        return _form(token, 400)
    signin_state.begin(worker)
    flash(f"Welcome, {worker.username}. You now hold the qualification of your invitation.", "info")
    return redirect(url_for("worker_site.dashboard"))


@bp.post("/invite/<token>/accept")
@worker_required
def accept_invitation(token: str) -> Any:
    """A signed-in worker takes the invitation: its qualification is granted, one use counted."""
    worker = current_worker()
    assert worker is not None  # noqa: S101 - worker_required
    try:
        _, newly = invitations.redeem(market_session(), token, worker.id)
    except invitations.InvitationRefused as refused:
        return _refused(refused.reason)
    flash(
        "Invitation accepted: you now hold its qualification."
        if newly
        else "You have already accepted this invitation.",
        "info",
    )
    return redirect(url_for("worker_site.dashboard"))


def _throttled() -> Any | None:
    """The 429 page when this address has signed up too often lately (shared with ``/signup``); else count."""
    key = signin_limits.signup_key("worker", request.remote_addr or "unknown")
    if key is None:
        return None
    db = market_session()
    wait = signin_limits.locked_for(db, SignInFailure, (key,))
    if wait is not None:
        return render_template(
            "worker/invitation_refused.html", message=signin_limits.too_many_signups(wait)
        ), 429
    signin_limits.record_failure(db, SignInFailure, (key,))
    db.commit()  # counted although a refused sign-up's 400 rolls the rest of the request back
    return None
