"""UniqueRequestToken bookkeeping for operations that have no row of their own to carry it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import validation as v
from hits.market.errors import RequestError
from hits.market.models import RequestToken

# MTurk remembers a token for 24 hours; later, the same token is a new request.
UNIQUE_TOKEN_WINDOW = timedelta(hours=24)
DUPLICATE_REQUEST = "AWS.MechanicalTurk.DuplicateRequest"


def already_processed(token: str) -> RequestError:
    """MTurk's answer to a token it has already processed."""
    return RequestError(f'The idempotency token "{token}" has already been processed.', DUPLICATE_REQUEST)


def claim(session: Session, requester_id: str, operation: str, token: Any) -> None:
    """Record ``token`` for ``operation``, or refuse if it was processed within the window."""
    if token is None:
        return
    token = v.text(token, "UniqueRequestToken", 64, required=True)
    row = session.scalar(
        select(RequestToken).where(
            RequestToken.requester_id == requester_id,
            RequestToken.operation == operation,
            RequestToken.token == token,
        )
    )
    now = utcnow()
    if row is not None:
        if now - row.created_at < UNIQUE_TOKEN_WINDOW:
            raise already_processed(token)
        row.created_at = now
    else:
        session.add(RequestToken(requester_id=requester_id, operation=operation, token=token, created_at=now))
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent call with the same token won the race
        raise already_processed(token) from exc
