"""Leases in the requester database: one holder at a time across every host.

The beat scheduler is run on more than one host for safety, yet must schedule
once: each host's beat asks for the ``beat`` lease before every round and
schedules only while it holds it. A lease lasts ``LEASE_SECONDS`` (a setting)
and its holder renews it every third of that; a holder that dies (or loses its
database) stops renewing, and another takes the lease once it has expired.
A holder on the same host whose process has ended is taken over at once
(the kernel says it is gone; no need to wait out its lease). A database that
cannot be reached means the lease is not held: a round is skipped rather than
possibly run twice.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

from hits.db import session_scope, utcnow
from hits.requester.tables.coordination import Lease

#: How long a lease lasts unless renewed, by default (``HITFORGE_BEAT_LEASE_SECONDS``): how long a
#: dead holder's duty waits for another.
LEASE_SECONDS = 30.0


def renew_every(lease_seconds: float) -> float:
    """How often a holder renews a lease of ``lease_seconds``: a third of it, so one slow round
    (or two) never lets it lapse under a live holder."""
    return lease_seconds / 3


def holder_name() -> str:
    """This process as a lease holder: host, pid, and a random part (a pid is reused after restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def take_or_renew(
    sessions: sessionmaker[Session], name: str, holder: str, *, now: datetime | None = None,
    seconds: float = LEASE_SECONDS,
) -> bool:  # fmt: skip
    """Take lease ``name`` for ``holder`` if it is free or expired, or renew it if ``holder`` has it.

    One statement decides: of two processes asking at once, the database lets
    one write and the other then sees a lease that is held. True when
    ``holder`` holds the lease afterwards.
    """
    now = now or utcnow()
    with session_scope(sessions) as session:
        insert_for = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        stmt = insert_for(Lease).values(name=name, holder=holder, expires_at=now + timedelta(seconds=seconds))
        session.execute(
            stmt.on_conflict_do_update(
                index_elements=[Lease.name],
                set_={"holder": stmt.excluded.holder, "expires_at": stmt.excluded.expires_at},
                where=(Lease.expires_at < now) | (Lease.holder == holder),
            )
        )
        current = session.scalar(select(Lease.holder).where(Lease.name == name))
        if current != holder and current is not None and _died_on_this_host(current):
            # A holder on this very host whose process is gone (killed, crashed) cannot renew:
            # no need to wait out its lease. Taken only from that holder, as one statement.
            session.execute(
                update(Lease)
                .where(Lease.name == name, Lease.holder == current)
                .values(holder=holder, expires_at=now + timedelta(seconds=seconds))
            )
            current = session.scalar(select(Lease.holder).where(Lease.name == name))
        return current == holder


def _died_on_this_host(holder: str) -> bool:
    """Whether ``holder`` (as ``holder_name`` makes it) was a process of this host that has ended."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, under another user
        return False
    return False


def release(sessions: sessionmaker[Session], name: str, holder: str) -> None:
    """Give lease ``name`` up at once if ``holder`` has it (a clean stop: no one waits for expiry)."""
    with session_scope(sessions) as session:
        session.execute(delete(Lease).where(Lease.name == name, Lease.holder == holder))


def current_holder(sessions: sessionmaker[Session], name: str) -> str | None:
    """Who holds lease ``name`` now (None: nobody, or it has expired)."""
    with session_scope(sessions) as session:
        lease = session.get(Lease, name)
        return lease.holder if lease is not None and lease.expires_at > utcnow() else None
