"""Throttling sign-in guesses, per account and per client address, in the database.

A failed sign-in is recorded under every key it counts against; while a key
has ``limit`` failures within the last ``WINDOW``, further attempts under it
are refused without checking the password, until the oldest of those
failures is older than the window. Refused attempts are not recorded, so
hammering a locked key does not extend its lock. A successful sign-in clears
its account's failures (not its address's: an attacker's own account must not
wipe the record of their guesses at others). Where names may differ only in
case (workers sign themselves up), an existing account is counted and cleared
by its id (``account_key``), for the same reason.

Sign-ups are counted the same way, per client address only (``signup_key``):
every attempt counts, since making accounts is what a guesser does once
sign-ins are throttled per account.

The counts live in a table, not in process memory, so every server process
(and machine) enforces the same limits: one in the marketplace's database for
the worker site, one in the requester side's for the dashboard (each half
keeps its own tables), both shaped by :class:`SignInFailureColumns`.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Integer, String, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from hits.db import UTCDateTime, utcnow

WINDOW = timedelta(minutes=15)
#: Failures in WINDOW that lock an account: enough for typos, far too few to guess a password.
ACCOUNT_LIMIT = 5
#: Failures in WINDOW that lock one client address: room for several people behind one network.
ADDRESS_LIMIT = 30
#: Sign-up attempts in WINDOW from one client address: a household or a class signing up
#: together gets through; a script making accounts (or probing which names are taken) does not.
SIGNUP_LIMIT = 10


class SignInFailureColumns:
    """The columns of a table of failed sign-ins: one row per failure and key it counts against.

    Index ``(key, failed_at)`` in the table that uses it.
    """

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(160))
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


@dataclass(frozen=True)
class Key:
    """What a sign-in attempt counts against, and how many failures that allows."""

    name: str
    limit: int


def keys_for(site: str, username: str, address: str) -> tuple[Key, Key]:
    """The account key (case and spaces folded, so variants share one count) and the address key."""
    # A NUL (no account has one) is spelled U+FFFD: PostgreSQL cannot store or compare it.
    account = " ".join(username.replace("\x00", "\ufffd").split()).casefold()
    return Key(f"{site}:account:{account}"[:160], ACCOUNT_LIMIT), Key(
        f"{site}:address:{address}"[:160], ADDRESS_LIMIT
    )


def account_key(site: str, account_id: str | int) -> Key:
    """The count of one existing account, however its name was typed.

    The folded name of :func:`keys_for` is shared by look-alike accounts ("Ann" and
    "ANN" may both sign up); a sign-in to one of them must not clear the other's
    failures, so an existing account is judged and cleared by its own id.
    """
    return Key(f"{site}:id:{account_id}"[:160], ACCOUNT_LIMIT)


def signup_key(site: str, address: str) -> Key | None:
    """The key every sign-up attempt from ``address`` counts against; None for the machine itself.

    Loopback is the operator's own tools (the simulated crowd, benchmarks, tests). A
    proxy on the same machine also shows as loopback, but only until it is declared in
    ``HITFORGE_TRUSTED_PROXIES``; counted as one address it would let ten sign-ups
    shut everyone else out.
    """
    try:
        if ipaddress.ip_address(address).is_loopback:
            return None
    except ValueError:
        pass  # not an address (a unix socket, "unknown"): counted under what it says
    return Key(f"{site}:signup:{address}"[:160], SIGNUP_LIMIT)


def locked_for(
    session: Session, table: type[SignInFailureColumns], keys: tuple[Key, ...], now: datetime | None = None
) -> timedelta | None:
    """How long until an attempt under ``keys`` may be tried again, or None when it may now."""
    now = now or utcnow()
    wait: timedelta | None = None
    for key in keys:
        # The limit-th most recent failure in the window: once it leaves the window, one may try.
        oldest_counted = session.scalar(
            select(table.failed_at)
            .where(table.key == key.name, table.failed_at > now - WINDOW)
            .order_by(table.failed_at.desc())
            .offset(key.limit - 1)
            .limit(1)
        )
        if oldest_counted is not None:
            remaining = oldest_counted + WINDOW - now
            wait = remaining if wait is None else max(wait, remaining)
    return wait


def record_failure(
    session: Session, table: type[SignInFailureColumns], keys: tuple[Key, ...], now: datetime | None = None
) -> None:
    """Count one failed attempt against each key; failures older than the window are forgotten.

    Every expired row goes, not only these keys': keys tried once (a guessed user
    name, a passing address) would otherwise stay in the table for ever.
    """
    now = now or utcnow()
    names = [key.name for key in keys]
    session.execute(delete(table).where(table.failed_at <= now - WINDOW))
    for name in names:
        failure = table()
        failure.key, failure.failed_at = name, now
        session.add(failure)
    session.flush()


def clear_account(session: Session, table: type[SignInFailureColumns], account: Key) -> None:
    """Forget an account's failures after its owner signed in."""
    session.execute(delete(table).where(table.key == account.name))


def in_minutes(wait: timedelta) -> str:
    """A wait as a person reads it, rounded up to a whole minute: ``1 minute``, ``15 minutes``."""
    minutes = max(1, math.ceil(wait.total_seconds() / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def too_many_signups(wait: timedelta) -> str:
    """What a throttled sign-up is told: why, and when to try again (rounded up to a minute)."""
    return f"Too many sign-ups from your network. Try again in {in_minutes(wait)}."


def too_many_attempts(wait: timedelta) -> str:
    """What a throttled sign-in is told: why, and when to try again (rounded up to a minute)."""
    return f"Too many failed sign-ins for this account or from your network. Try again in {in_minutes(wait)}."
