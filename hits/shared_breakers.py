"""Circuit breakers every process of a deployment shares: in Redis when there is one.

A heatmap provider that keeps timing out should be left alone by every
server process, not only by the one that saw it: otherwise each of N
processes on each host pays its own three timeouts before it stops, and a
worker waits out each of them. A breaker counts the failures in a row under
a key; at the threshold it *opens* for a cooldown, during which callers do
not call; one success closes it and resets the count.

Stored where the token buckets are (``hits/shared_limits.py``): Redis
(``HITFORGE_REDIS_URL``, else a Redis broker), the open state a key that
expires with the cooldown (on Redis's clock: no host's skew shortens it);
without Redis, rows of ``var/limits.sqlite`` shared by the host's
processes. A Redis that cannot be reached fails open *to the process*: the
process keeps a breaker of its own until Redis answers again, as the buckets
do, and says so in the log at most once a minute.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import redis

from hits.settings import Settings
from hits.shared_limits import REDIS_TIMEOUT, RETRY_REDIS_AFTER, WARN_EVERY, open_shared_sqlite

log = logging.getLogger(__name__)

#: Every key hitforge's breakers use in Redis starts with this.
PREFIX = "hitforge:breaker:"

# KEYS[1]: the failure count, KEYS[2]: the open flag; ARGV: threshold, cooldown (ms). Counts a
# failure; from the threshold on, each failure (the try after a cooldown, too) opens the breaker for
# the cooldown. Returns the failures in a row. The count outlives a few cooldowns, no more.
_FAILED = """
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 10)
if n >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return n
"""


class Breakers(Protocol):
    """Where a deployment's circuit breakers live."""

    def state(self, key: str) -> tuple[float, int]:
        """Seconds the breaker ``key`` stays open (0.0: closed, call), and the failures in a row."""
        ...

    def failed(self, key: str, threshold: int, cooldown: float) -> int:
        """Count a failure; from ``threshold`` in a row on, each opens the breaker for ``cooldown`` s.

        Returns the failures in a row, this one included.
        """
        ...

    def succeeded(self, key: str) -> None:
        """A call went well: the count starts again."""
        ...


class LocalBreakers:
    """Breakers in this process's memory: what a process falls back on without its shared store."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._open_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def state(self, key: str) -> tuple[float, int]:
        """Seconds the breaker ``key`` stays open (0.0: closed), and the failures in a row."""
        with self._lock:
            return max(0.0, self._open_until.get(key, 0.0) - time.monotonic()), self._count.get(key, 0)

    def failed(self, key: str, threshold: int, cooldown: float) -> int:
        """Count a failure; from ``threshold`` in a row on, each opens the breaker for ``cooldown`` s."""
        with self._lock:
            count = self._count[key] = self._count.get(key, 0) + 1
            if count >= threshold:
                self._open_until[key] = time.monotonic() + cooldown
            return count

    def succeeded(self, key: str) -> None:
        """A call went well: the count starts again."""
        with self._lock:
            self._count.pop(key, None)


class FileBreakers:
    """Breakers in a SQLite file: shared by every process of one host (the embedded default's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_shared_sqlite(
                self.path,
                "CREATE TABLE IF NOT EXISTS breakers "
                "(key TEXT PRIMARY KEY, failures INTEGER, open_until REAL)",
            )
            self._local.conn = conn
        return conn

    def state(self, key: str) -> tuple[float, int]:
        """Seconds the breaker ``key`` stays open (0.0: closed), and the failures in a row."""
        row = (
            self._connection()
            .execute("SELECT open_until, failures FROM breakers WHERE key = ?", (key,))
            .fetchone()
        )
        return (max(0.0, (row[0] or 0.0) - time.time()), int(row[1] or 0)) if row else (0.0, 0)

    def failed(self, key: str, threshold: int, cooldown: float) -> int:
        """Count a failure; from ``threshold`` in a row on, each opens the breaker for ``cooldown`` s."""
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")  # the write lock first: two processes never count as one
        try:
            row = conn.execute("SELECT failures, open_until FROM breakers WHERE key = ?", (key,)).fetchone()
            count = (row[0] if row else 0) + 1
            open_until = row[1] if row else 0.0
            if count >= threshold:
                open_until = time.time() + cooldown
            conn.execute(
                "INSERT OR REPLACE INTO breakers (key, failures, open_until) VALUES (?, ?, ?)",
                (key, count, open_until),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return count

    def succeeded(self, key: str) -> None:
        """A call went well: the count starts again."""
        self._connection().execute("UPDATE breakers SET failures = 0 WHERE key = ? AND failures > 0", (key,))


class RedisBreakers:
    """Breakers in Redis, shared by every process that uses the same Redis; local while it is down."""

    def __init__(self, url: str, client: Any | None = None) -> None:
        self._client = client or redis.Redis.from_url(
            url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self._script = self._client.register_script(_FAILED)
        self._fallback = LocalBreakers()
        self._down_until = 0.0
        self._warned_at: float | None = None

    def _down(self, exc: Exception) -> None:
        now = time.monotonic()
        self._down_until = now + RETRY_REDIS_AFTER
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY:
            self._warned_at = now
            log.warning(
                "Redis for shared breakers unreachable (%s); each process keeps its own meanwhile", exc
            )

    def _up(self) -> bool:
        return time.monotonic() >= self._down_until

    def state(self, key: str) -> tuple[float, int]:
        """Seconds the breaker ``key`` stays open (0.0: closed), and the failures in a row."""
        if self._up():
            try:
                pipe = self._client.pipeline(transaction=False)
                pipe.pttl(PREFIX + key + ":open")
                pipe.get(PREFIX + key + ":failures")
                ms, failures = pipe.execute()
                return max(0.0, int(ms) / 1000.0), int(failures or 0)
            except redis.RedisError as exc:
                self._down(exc)
        return self._fallback.state(key)

    def failed(self, key: str, threshold: int, cooldown: float) -> int:
        """Count a failure; from ``threshold`` in a row on, each opens the breaker for ``cooldown`` s."""
        if self._up():
            try:
                keys = [PREFIX + key + ":failures", PREFIX + key + ":open"]
                return int(self._script(keys=keys, args=[threshold, max(1, int(cooldown * 1000))]))
            except redis.RedisError as exc:
                self._down(exc)
        return self._fallback.failed(key, threshold, cooldown)

    def succeeded(self, key: str) -> None:
        """A call went well: the count starts again."""
        if self._up():
            try:
                self._client.delete(PREFIX + key + ":failures")
                return
            except redis.RedisError as exc:
                self._down(exc)
        self._fallback.succeeded(key)


def breakers_for(settings: Settings) -> Breakers:
    """The deployment's breakers: in its Redis, else in ``var/limits.sqlite`` on this host."""
    return _breakers(settings.redis_url, settings.var_dir)


@cache
def _breakers(redis_url: str, var_dir: Path) -> Breakers:
    # One object a store per process: its connections are made once, not on every call.
    return RedisBreakers(redis_url) if redis_url else FileBreakers(var_dir / "limits.sqlite")
