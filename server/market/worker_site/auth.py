"""Signing up, in and out."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from hits import signin_limits
from hits.market import accounts
from hits.market.errors import RequestError
from hits.market.models import SignInFailure
from server.db import market_session
from server.market.worker_site import signin_state
from server.market.worker_site.base import bp, current_worker


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> Any:
    """Create a worker account and sign it in."""
    if request.method == "POST":
        if (refused := _refused_signup()) is not None:
            return refused
        try:
            worker = accounts.create_worker(
                market_session(),
                request.form.get("username", ""),
                request.form.get("password", ""),
                country=request.form.get("country", "US") or "US",
            )
        except RequestError as exc:
            flash(exc.message, "error")
            return render_template("worker/signup.html"), 400
        signin_state.begin(worker)
        return redirect(url_for("worker_site.index"))
    return render_template("worker/signup.html")


def _refused_signup() -> Any | None:
    """The 429 page when this address has tried to sign up too often lately; else count this attempt.

    Every attempt counts, made or refused (a taken name tells that the name exists), and the
    count is committed at once: a refused sign-up's 400 rolls the rest of the request back.
    """
    key = signin_limits.signup_key("worker", request.remote_addr or "unknown")
    if key is None:
        return None
    db = market_session()
    wait = signin_limits.locked_for(db, SignInFailure, (key,))
    if wait is not None:
        flash(signin_limits.too_many_signups(wait), "error")
        return render_template("worker/signup.html"), 429
    signin_limits.record_failure(db, SignInFailure, (key,))
    db.commit()
    return None


def local_path(target: str) -> str | None:
    """``target`` if a browser would read it as a path on this site, else None (never an open redirect).

    Browsers drop tabs and newlines anywhere in a URL and read a backslash as a
    slash, so a slash, a tab and ``/example.org`` (or a slash, a backslash and
    ``example.org``) mean ``//example.org``: any control character or backslash
    is refused before the parse.
    """
    if not target.startswith("/") or "\\" in target or any(ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or parts.path.startswith("//"):
        return None
    return target


@bp.route("/signin", methods=["GET", "POST"])
def signin() -> Any:
    """Sign a worker in, then go back where they were headed (local paths only)."""
    if request.method == "POST":
        db = market_session()
        username = request.form.get("username", "")
        typed, address = signin_limits.keys_for("worker", username, request.remote_addr or "unknown")
        worker = accounts.find_worker(db, username)
        # An account is judged by its own count; a name with no account by its folded spelling.
        own = signin_limits.account_key("worker", worker.id) if worker is not None else typed
        wait = signin_limits.locked_for(db, SignInFailure, (own, address))
        if wait is not None:
            flash(signin_limits.too_many_attempts(wait), "error")
            return render_template("worker/signin.html"), 429
        matched = accounts.password_matches(worker, request.form.get("password", ""))  # hashes either way
        if worker is None or not matched:
            # Counted under the typed spelling as well, so its variants are refused with the account.
            signin_limits.record_failure(db, SignInFailure, tuple(dict.fromkeys((own, typed, address))))
            db.commit()  # the failure counts although this response (a 401) rolls the request back
            flash("Unknown user name or wrong password.", "error")
            return render_template("worker/signin.html"), 401
        for key in dict.fromkeys((own, typed)):
            signin_limits.clear_account(db, SignInFailure, key)
        signin_state.begin(worker)
        return redirect(local_path(request.args.get("next", "")) or url_for("worker_site.index"))
    return render_template("worker/signin.html")


@bp.post("/signout")
def signout() -> Response:
    """Sign the worker out, ending every session cookie of theirs issued before (on any device)."""
    signin_state.end_everywhere(market_session(), current_worker())
    return redirect(url_for("worker_site.signin"))
