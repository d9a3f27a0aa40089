"""Checking a sign-in's password so that an unknown user name costs what a known one does.

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
