"""The dashboard's sign-in guard: throttled guesses, and cookies that end at sign-out and expire.

The same protections as the worker site (``hits.signin_limits`` and
``server/signin_session.py``), for staff accounts, kept in the requester side's
own tables, with the staff's own (shorter) session limits. The dashboard's
views call these; its roles stay its own business.
"""

from __future__ import annotations

from typing import Any

from flask import flash, render_template, request
from sqlalchemy import select

from hits import passwords, signin_limits
from hits.requester.tables.campaigns import StaffSignInFailure, StaffUser
from server import signin_session
from server.db import requester_session, runtime

KIND = "staff"


def _keys(username: str) -> tuple[signin_limits.Key, signin_limits.Key]:
    return signin_limits.keys_for("staff", username, request.remote_addr or "unknown")


def refused_while_locked(username: str) -> Any | None:
    """The 429 page when this account or address has failed too often lately, else None."""
    wait = signin_limits.locked_for(requester_session(), StaffSignInFailure, _keys(username))
    if wait is None:
        return None
    flash(signin_limits.too_many_attempts(wait), "error")
    return render_template("dashboard/signin.html"), 429


def authenticate(username: str, password: str) -> StaffUser | None:
    """The staff user with these credentials, or None (an unknown name costs a hash, as a known one does)."""
    name = passwords.name_to_look_up(username)
    user = requester_session().scalar(select(StaffUser).where(StaffUser.username == name)) if name else None
    if not passwords.matches(user.password_hash if user is not None else None, password):
        return None
    return user


def count_failure(username: str) -> None:
    """Count a failed sign-in, committed now although the request's 401 rolls back the rest."""
    db = requester_session()
    signin_limits.record_failure(db, StaffSignInFailure, _keys(username))
    db.commit()


def begin(user: StaffUser) -> None:
    """Sign ``user`` in on this browser with a fresh session; their account's failures are forgotten."""
    signin_limits.clear_account(requester_session(), StaffSignInFailure, _keys(user.username)[0])
    signin_session.begin(KIND, user.id, user.session_generation)


def signed_in_user() -> StaffUser | None:
    """The staff user this request's cookie signs in, if that sign-in is current and has not expired."""
    staff_id = signin_session.signed_in_id(KIND, runtime().settings.staff_session)
    user = requester_session().get(StaffUser, staff_id) if isinstance(staff_id, int) else None
    return user if user is not None and signin_session.is_current(KIND, user.session_generation) else None


def end_everywhere(user: StaffUser | None) -> None:
    """Sign out here and end every cookie of this user's issued before."""
    signin_session.end_everywhere(requester_session(), user)
