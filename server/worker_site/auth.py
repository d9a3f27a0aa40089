"""Signing up, in and out."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import flash, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from hits.market import accounts
from hits.market.errors import RequestError
from server.db import market_session
from server.worker_site.base import bp


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> Any:
    """Create a worker account and sign it in."""
    if request.method == "POST":
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
        session.clear()
        session["worker_id"] = worker.id
        return redirect(url_for("worker_site.index"))
    return render_template("worker/signup.html")


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
        worker = accounts.authenticate_worker(
            market_session(), request.form.get("username", ""), request.form.get("password", "")
        )
        if worker is None:
            flash("Unknown user name or wrong password.", "error")
            return render_template("worker/signin.html"), 401
        session.clear()
        session["worker_id"] = worker.id
        return redirect(local_path(request.args.get("next", "")) or url_for("worker_site.index"))
    return render_template("worker/signin.html")


@bp.post("/signout")
def signout() -> Response:
    """Forget the signed-in worker."""
    session.clear()
    return redirect(url_for("worker_site.signin"))
