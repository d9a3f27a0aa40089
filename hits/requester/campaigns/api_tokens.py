"""API tokens of dashboard users: issued once in the clear, kept as SHA-256, revocable.

A token acts as its user: the JSON API scopes every campaign, assignment and
action exactly as the dashboard does for that user. Like all domain code this
flushes and never commits.
"""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.campaigns.staff import StaffError
from hits.requester.tables.api import ApiToken
from hits.requester.tables.campaigns import StaffUser

#: Tokens start with this, so a leaked one is recognisable (secret scanners, logs).
PREFIX = "hft_"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(session: Session, username: str, label: str = "") -> str:
    """A new token for ``username``; the only time it is seen in the clear."""
    user = session.scalar(select(StaffUser).where(StaffUser.username == username))
    if user is None:
        raise StaffError(f"no dashboard user {username}")
    token = PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(staff_user_id=user.id, token_sha256=_digest(token), label=label[:128]))
    session.flush()
    return token


def revoke_tokens(session: Session, username: str) -> int:
    """Revoke every live token of ``username``; how many there were."""
    user_id = session.scalar(select(StaffUser.id).where(StaffUser.username == username))
    if user_id is None:
        raise StaffError(f"no dashboard user {username}")
    done = session.execute(
        update(ApiToken)
        .where(ApiToken.staff_user_id == user_id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )
    return int(done.rowcount or 0)  # type: ignore[attr-defined]


def user_of_token(session: Session, token: str) -> StaffUser | None:
    """The user a live token belongs to (its last use recorded), or None."""
    if not token.startswith(PREFIX) or len(token) > 100:
        return None
    found = session.scalar(
        select(ApiToken).where(ApiToken.token_sha256 == _digest(token), ApiToken.revoked_at.is_(None))
    )
    if found is None:
        return None
    found.last_used_at = utcnow()
    return session.get(StaffUser, found.staff_user_id)
