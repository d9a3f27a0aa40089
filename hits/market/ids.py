"""Identifiers in MTurk's shapes: uppercase letters and digits."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_uppercase + string.digits
#: Random bytes below this map evenly onto the alphabet (7 x 36); the others are dropped.
_EVEN = 256 - 256 % len(_ALPHABET)


def _token(length: int) -> str:
    # One read of random bytes, not a ``secrets.choice`` (and a read) per character:
    # a 30-character id took 80 microseconds that way.
    chars: list[str] = []
    while len(chars) < length:
        chars += [_ALPHABET[b % len(_ALPHABET)] for b in secrets.token_bytes(length + 8) if b < _EVEN]
    return "".join(chars[:length])


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
