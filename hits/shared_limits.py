"""Token buckets every process of a deployment shares: in Redis when there is one.

A rate limit kept in one process's memory is a limit per process: four
gunicorn workers on two hosts let eight times the rate through. So a bucket
lives in Redis (``HITFORGE_REDIS_URL``, else the broker when it is Redis), and
one Lua script refills and takes from it atomically, on Redis's own clock, so
neither a race between processes nor skew between hosts' clocks lets more
through than the rate.

The embedded default has no Redis, and is one host by nature (its databases
are SQLite files in ``var/``); its buckets are rows of ``var/limits.sqlite``
(:class:`FileBuckets`), which every process of that host shares. A deployment
of several hosts sets Redis (``docs/operations.md``, "Running on several hosts").

When Redis cannot be reached, a bucket *fails open to its process*: the
call is judged by a per-process bucket with the same rule, and a warning is
logged (at most once a minute). A Redis outage thus loosens a limit to what
it was before buckets were shared, never stops the API or the sign-in pages.

Callers name a bucket by a key (``mturk-throttle:<requester>``), a rate in
tokens a second and a burst (how many may be taken at once from a full bucket).
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import redis

from hits.settings import Settings

log = logging.getLogger(__name__)

#: Every key hitforge's buckets use in Redis starts with this.
PREFIX = "hitforge:bucket:"
#: How long a call waits on Redis before the bucket is judged locally instead.
REDIS_TIMEOUT = 0.5
#: How often "Redis unreachable" is logged while it lasts.
WARN_EVERY = 60.0
#: After Redis failed, how long buckets are judged locally before Redis is asked again: a Redis that
#: does not answer must not add its timeout to every API call meanwhile.
RETRY_REDIS_AFTER = 5.0

# Writing after TIME needs effect replication: Redis 5 and later (the default there, and the only way
# in 7). KEYS[1]: the bucket; ARGV: rate (tokens a second), burst. Returns the seconds to wait for a
# token as a string (a Lua number in a reply is cut to an integer); "0" when one was taken.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens, stamp = tonumber(state[1]), tonumber(state[2])
if tokens == nil or stamp == nil then tokens, stamp = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
"""


class Buckets(Protocol):
    """Where a deployment's token buckets live."""

    def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from bucket ``key``: 0.0 if taken, else the seconds until one is due."""
        ...


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class LocalBuckets:
    """Buckets in this process's memory: exact for a deployment of one server process."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from bucket ``key``: 0.0 if taken, else the seconds until one is due."""
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(tokens=burst, stamp=now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.stamp) * rate)
            bucket.stamp = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / rate


#: How long opening a shared SQLite file keeps trying to put it in WAL mode while others hold it.
OPEN_PATIENCE = 10.0


def open_shared_sqlite(path: Path, schema: str) -> sqlite3.Connection:
    """A connection to a SQLite file several processes share, in WAL mode, with ``schema`` created.

    Switching a file to WAL takes an exclusive lock, and SQLite may answer
    "database is locked" at once instead of waiting its busy timeout when two
    processes open a new file together (CI saw it: two processes sharing one rate).
    So the switch is retried, with a short random pause, for up to :data:`OPEN_PATIENCE`
    seconds; once the file is in WAL mode the pragma is a no-op for later openers.
    """
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    deadline = time.monotonic() + OPEN_PATIENCE
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(schema)
            return conn
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                conn.close()
                raise
            time.sleep(0.02 + random.random() * 0.05)


class FileBuckets:
    """Buckets in a SQLite file: shared by every process of one host (the embedded default's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()  # a connection a thread: sqlite3's are not to be shared

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_shared_sqlite(
                self.path,
                "CREATE TABLE IF NOT EXISTS buckets (key TEXT PRIMARY KEY, tokens REAL, stamp REAL)",
            )
            self._local.conn = conn
        return conn

    def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from bucket ``key``: 0.0 if taken, else the seconds until one is due."""
        conn = self._connection()
        # BEGIN IMMEDIATE takes the write lock before reading: two processes never refill one bucket twice.
        conn.execute("BEGIN IMMEDIATE")
        try:
            now = time.time()  # one host, one clock for all its processes
            row = conn.execute("SELECT tokens, stamp FROM buckets WHERE key = ?", (key,)).fetchone()
            tokens = burst if row is None else min(burst, row[0] + max(0.0, now - row[1]) * rate)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / rate
            conn.execute(
                "INSERT OR REPLACE INTO buckets (key, tokens, stamp) VALUES (?, ?, ?)", (key, tokens, now)
            )
            if random.random() < 0.01:  # now and then, forget buckets full for an hour (keys come and go)
                conn.execute("DELETE FROM buckets WHERE stamp < ?", (now - 3600,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return wait


class RedisBuckets:
    """Buckets in Redis, shared by every process that uses the same Redis; local while it is down."""

    def __init__(self, url: str, client: Any | None = None) -> None:
        self.url = url
        self._client = client or redis.Redis.from_url(
            url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self._script = self._client.register_script(_TAKE)
        # While Redis is unreachable: the same rule per process, rather than no rule or no service.
        self._fallback = LocalBuckets()
        self._warned_at: float | None = None
        self._down_until = 0.0

    def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from bucket ``key``: 0.0 if taken, else the seconds until one is due."""
        if time.monotonic() < self._down_until:
            return self._fallback.take(key, rate, burst)
        try:
            reply = self._script(keys=[PREFIX + key], args=[repr(float(rate)), repr(float(burst))])
        except redis.RedisError as exc:
            self._down_until = time.monotonic() + RETRY_REDIS_AFTER
            self._warn(exc)
            return self._fallback.take(key, rate, burst)
        return float(reply.decode() if isinstance(reply, bytes) else reply)

    def _warn(self, exc: Exception) -> None:
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY:
            self._warned_at = now
            log.warning(
                "Redis for shared rate limits unreachable (%s); limiting per process until it is back", exc
            )


def buckets_for(settings: Settings) -> Buckets:
    """The deployment's buckets: in its Redis, else in ``var/limits.sqlite`` on this host."""
    return _buckets(settings.redis_url, settings.var_dir)


@cache
def _buckets(redis_url: str, var_dir: Path) -> Buckets:
    # One object a store per process: its connections are made once, not on every call.
    return RedisBuckets(redis_url) if redis_url else FileBuckets(var_dir / "limits.sqlite")


def burst_of(rate: float) -> float:
    """The burst a rate allows: one second's worth of calls, at least one."""
    return max(1.0, rate)


def wait_for_token(buckets: Buckets, key: str, rate: float, burst: float | None = None) -> float:
    """Block until bucket ``key`` gives a token; the seconds waited (for pacing outgoing calls)."""
    waited = 0.0
    while (wait := buckets.take(key, rate, burst_of(rate) if burst is None else burst)) > 0:
        time.sleep(wait)
        waited += wait
    return waited
