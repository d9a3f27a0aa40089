"""A sign-in kept in Flask's session cookie, for workers and staff alike, that the server can end.

Flask's session is a signed cookie, which the server cannot take back: a copy
of it would stay a valid sign-in after its owner signs out, and for as long as
the signature is accepted. So each sign-in stamps into the cookie

- the account's ``session_generation``: the cookie counts only while it
  matches, and signing out counts the generation up, ending every sign-in of
  that account issued before (on any device, a copy kept by someone included);
- when it began and when it was last used: the server refuses a cookie idle
  for longer than the kind's ``idle`` limit or older than its ``lifetime``
  (``hits.settings.SessionLimits``), whatever the browser keeps. The stamps
  are covered by the signature, so a client cannot move them.

Workers (the marketplace's database) and staff (the requester side's) differ
only in the keys' prefix, the table and the limits; both use this module.
"""

from __future__ import annotations

import time
from typing import Any

from flask import session
from sqlalchemy import update
from sqlalchemy.orm import Session

from hits.market.models import Worker
from hits.requester.tables.campaigns import StaffUser
from hits.settings import SessionLimits

#: The last-used stamp is renewed at most this often (seconds): renewing it rewrites the
#: cookie, and the idle limit is hours, so a minute's slack costs nothing.
SEEN_RESOLUTION = 60


def _keys(kind: str) -> tuple[str, str, str, str]:
    """The session keys of a ``kind`` ("worker", "staff"): id, generation, signed in at, last seen."""
    return f"{kind}_id", f"{kind}_generation", f"{kind}_signed_in_at", f"{kind}_seen_at"


def begin(kind: str, account_id: str | int, generation: int | None) -> None:
    """Sign an account in on this browser with a fresh session (nothing from before carries over)."""
    id_key, generation_key, since_key, seen_key = _keys(kind)
    now = int(time.time())
    session.clear()
    session[id_key] = account_id
    session[generation_key] = generation or 0
    session[since_key] = now
    session[seen_key] = now


def signed_in_id(kind: str, limits: SessionLimits) -> Any | None:
    """The account id this request's cookie signs in as, if its sign-in has neither idled nor aged out.

    A sign-in past either limit is dropped from the cookie. A live one has its
    last-used stamp renewed (at most every ``SEEN_RESOLUTION`` seconds). A cookie
    without the stamps (issued before they existed) is no sign-in either.
    """
    id_key, _generation, since_key, seen_key = _keys(kind)
    account_id = session.get(id_key)
    if account_id is None:
        return None
    since, seen, now = session.get(since_key), session.get(seen_key), time.time()
    if (
        not isinstance(since, int)
        or not isinstance(seen, int)
        or now - since > limits.lifetime.total_seconds()
        or now - seen > limits.idle.total_seconds()
    ):
        for key in _keys(kind):
            session.pop(key, None)
        return None
    if now - seen >= SEEN_RESOLUTION:
        session[seen_key] = int(now)
    return account_id


def is_current(kind: str, generation: int | None) -> bool:
    """Whether this request's cookie is from the account's current sign-in generation."""
    return bool(session.get(_keys(kind)[1]) == (generation or 0))


def end_everywhere(db: Session, account: Worker | StaffUser | None) -> None:
    """Sign out here and end every cookie of this account's issued before (on any device)."""
    if account is not None:
        model = type(account)
        db.execute(
            update(model)
            .where(model.id == account.id)
            .values(session_generation=model.session_generation + 1)
        )
    session.clear()
