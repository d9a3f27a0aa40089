"""Checking a sign-in: which name to look up, and a password check that costs the same for every name.

Skipping the hash for a name with no account answers sooner, and that
difference tells an attacker which names exist. So a missing account's
attempt is checked against a stand-in hash of the same method and cost.
"""

from __future__ import annotations

import secrets
from functools import cache

from werkzeug.security import check_password_hash, generate_password_hash


@cache
def _stand_in_hash() -> str:
    # Made on first use (nothing at import time), with the library's current default method
    # and cost, which is what every account's hash is made with. Its password is thrown away.
    return generate_password_hash(secrets.token_urlsafe(24))


def matches(stored_hash: str | None, password: str) -> bool:
    """Whether ``password`` is the one ``stored_hash`` was made from; None (no account) is never a match.

    Either way one full password hash is computed.
    """
    if stored_hash is None:
        check_password_hash(_stand_in_hash(), password)
        return False
    return check_password_hash(stored_hash, password)


def name_to_look_up(username: str) -> str | None:
    """The account name a sign-in form's ``username`` means, or None when no account can have it.

    Spaces around it are dropped. A NUL is in no account's name (sign-up refuses
    control characters) and PostgreSQL cannot even compare one, so it is no name.
    """
    name = username.strip()
    return name if name and "\x00" not in name else None
