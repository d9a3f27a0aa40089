"""Identifiers in MTurk's shapes: uppercase letters and digits."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_uppercase + string.digits


def _token(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def new_entity_id() -> str:
    """A 30-character id like those of HITs, HIT types, assignments and qualification types."""
    return "3" + _token(29)


def new_customer_id() -> str:
    """A worker or requester id: ``A`` followed by 13 characters, as MTurk's are."""
    return "A" + _token(13)


def new_access_key_id() -> str:
    """An access key id shaped like AWS's (``AKIA`` + 16)."""
    return "AKIA" + _token(16)


def new_secret_key() -> str:
    """A 40-character secret access key."""
    return secrets.token_urlsafe(30)[:40]
