"""Settings from ``HITFORGE_*`` environment variables.

Resolved once, by the app and worker factories and the CLI, never at import.
The embedded default keeps everything under ``var/``: SQLite databases, the
embedded broker's database and a generated secret key.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SessionLimits:
    """How long a sign-in lasts: ended after ``idle`` without a request, and ``lifetime`` after signing in."""

    idle: timedelta
    lifetime: timedelta


#: Workers sign in for a working day and come back the next; a cookie left on a shared
#: computer still ends overnight, and no sign-in outlives two weeks.
WORKER_SESSION = SessionLimits(idle=timedelta(hours=12), lifetime=timedelta(days=14))
#: Staff decide over money and workers' standing: a sign-in ends sooner.
STAFF_SESSION = SessionLimits(idle=timedelta(hours=2), lifetime=timedelta(hours=12))


@dataclass(frozen=True)
class Settings:
    """Everything hitforge reads from its environment."""

    var_dir: Path
    database_url: str
    market_database_url: str
    broker_url: str
    secret_key: str = field(repr=False)
    public_url: str = "http://127.0.0.1:5000"
    mturk_endpoint_url: str = ""
    mturk_access_key_id: str = ""
    mturk_secret_access_key: str = field(default="", repr=False)
    mturk_region: str = "us-east-1"
    sync_interval_seconds: float = 2.0
    auto_approve_check_seconds: float = 60.0
    #: Notification events may go to private, loopback and link-local addresses (receivers on the
    #: operator's own network); off, only public addresses are sent to.
    notification_allow_private: bool = False
    #: Heatmap models served over HTTP (the heatmap template) may be on private and loopback addresses.
    heatmap_allow_private: bool = False
    #: Proxies in front of the server whose X-Forwarded-For/-Proto to believe (0: none), so the
    #: sign-in throttle counts the client's address rather than the proxy's.
    trusted_proxies: int = 0
    #: The operator's extra CDN mappings (a YAML file of URL prefixes -> local files), if any.
    cdn_map_file: str = ""
    #: Where the CDN library copies are installed (empty: server/cdn/node_modules, where make puts them).
    cdn_libraries_dir: str = ""
    #: When a worker's sign-in on the worker site ends (checked by the server on every request).
    worker_session: SessionLimits = WORKER_SESSION
    #: When a staff sign-in on the dashboard ends.
    staff_session: SessionLimits = STAFF_SESSION
    #: The Prolific API token (``Authorization: Token ...``); never shown in logs, pages or errors.
    prolific_token: str = field(default="", repr=False)
    #: Prolific's API root; a stand-in's for tests and the demo (``hits.requester.recruit.prolific.standin``).
    prolific_api_url: str = "https://api.prolific.com/api/v1/"
    #: The secret Prolific signs webhook calls with (``POST /hooks/secrets/``); empty: webhooks refused.
    prolific_hook_secret: str = field(default="", repr=False)
    #: How the server logs to stderr: "json" (one object a line, with the request id), "text", or ""
    #: (leave logging as the host process set it up).
    log_format: str = ""
    #: How long the beat lease lasts unless renewed (``workers/lease.py``): how soon another host's
    #: beat takes over scheduling from one that died.
    beat_lease_seconds: float = 30.0
    #: Whether the server times requests and serves ``/metrics`` (``HITFORGE_METRICS=off`` turns it off).
    metrics_enabled: bool = True
    #: The Redis every process shares rate limits through (``hits/shared_limits.py``); empty: none,
    #: limits kept in each process's memory (right for one server process only).
    redis_url: str = ""
    #: Calls a second the requester side makes to the marketplace with one access key, across
    #: every process (``HITFORGE_MTURK_CALL_RATE``); 0: unpaced.
    mturk_call_rate: float = 0.0
    #: The bearer token a remote Prometheus scrapes ``/metrics`` with (empty: loopback scrapes only).
    metrics_token: str = field(default="", repr=False)
    #: Which half this server serves (``HITFORGE_SERVE``): "all" (the default: one app), "market"
    #: (the MTurk API and the worker site) or "requester" (HIT pages, dashboard, its API,
    #: qualification tests, recruiting): the two halves on separate machines (docs/operations.md).
    serve: str = "all"

    @property
    def serves_market(self) -> bool:
        return self.serve in ("all", "market")

    @property
    def serves_requester(self) -> bool:
        return self.serve in ("all", "requester")

    @property
    def requester_database_url_is_market(self) -> bool:
        return self.database_url == self.market_database_url

    @property
    def embedded_broker(self) -> bool:
        return self.broker_url.startswith("sqla+")

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)


def _secret_key(var_dir: Path, env: Mapping[str, str]) -> str:
    """The secret key from the environment, or one generated once and kept under var/."""
    if env.get("HITFORGE_SECRET_KEY"):
        return env["HITFORGE_SECRET_KEY"]
    path = var_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    # O_EXCL: two processes starting together must not overwrite each other's key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def var_dir_of(env: Mapping[str, str] | None = None) -> Path:
    """The var folder ``env`` names (``HITFORGE_VAR_DIR``, default ``var`` here), absolute; not created."""
    env = os.environ if env is None else env
    return Path(env.get("HITFORGE_VAR_DIR", "var")).resolve()


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build the settings from ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    var_dir = var_dir_of(env)
    var_dir.mkdir(parents=True, exist_ok=True)
    # Embedded default: one SQLite file per half, so neither half's writers
    # ever wait on the other's (they meet only at the API, as in production).
    database_url = env.get("HITFORGE_DATABASE_URL") or f"sqlite:///{var_dir / 'requester.sqlite'}"
    market_url = env.get("HITFORGE_MARKET_DATABASE_URL") or (
        env.get("HITFORGE_DATABASE_URL") or f"sqlite:///{var_dir / 'market.sqlite'}"
    )
    broker_url = env.get("HITFORGE_BROKER_URL") or f"sqla+sqlite:///{var_dir / 'broker.sqlite'}"
    public_url = env.get("HITFORGE_PUBLIC_URL", "http://127.0.0.1:5000").rstrip("/")
    return Settings(
        var_dir=var_dir,
        database_url=_normalise_db_url(database_url),
        market_database_url=_normalise_db_url(market_url),
        broker_url=broker_url,
        secret_key=_secret_key(var_dir, env),
        public_url=public_url,
        mturk_endpoint_url=env.get("HITFORGE_MTURK_ENDPOINT_URL", public_url),
        mturk_access_key_id=env.get("HITFORGE_MTURK_ACCESS_KEY_ID", ""),
        mturk_secret_access_key=env.get("HITFORGE_MTURK_SECRET_ACCESS_KEY", ""),
        mturk_region=env.get("HITFORGE_MTURK_REGION", "us-east-1"),
        sync_interval_seconds=float(env.get("HITFORGE_SYNC_INTERVAL", "2.0")),
        notification_allow_private=_flag(env.get("HITFORGE_NOTIFICATION_ALLOW_PRIVATE", "")),
        heatmap_allow_private=_flag(env.get("HITFORGE_HEATMAP_ALLOW_PRIVATE", "")),
        trusted_proxies=_count(env, "HITFORGE_TRUSTED_PROXIES"),
        cdn_map_file=env.get("HITFORGE_CDN_MAP", ""),
        cdn_libraries_dir=env.get("HITFORGE_CDN_LIBRARIES", ""),
        worker_session=_session_limits(env, "WORKER", WORKER_SESSION),
        staff_session=_session_limits(env, "STAFF", STAFF_SESSION),
        prolific_token=env.get("HITFORGE_PROLIFIC_TOKEN", ""),
        prolific_api_url=env.get("HITFORGE_PROLIFIC_API_URL") or "https://api.prolific.com/api/v1/",
        prolific_hook_secret=env.get("HITFORGE_PROLIFIC_HOOK_SECRET", ""),
        log_format=_log_format(env.get("HITFORGE_LOG_FORMAT", "")),
        metrics_token=env.get("HITFORGE_METRICS_TOKEN", ""),
        metrics_enabled=env.get("HITFORGE_METRICS", "on").strip().lower() not in ("off", "0", "no", "false"),
        beat_lease_seconds=float(_positive(env, "HITFORGE_BEAT_LEASE_SECONDS", 30)),
        redis_url=_redis_url(env, broker_url),
        mturk_call_rate=_rate(env, "HITFORGE_MTURK_CALL_RATE"),
        serve=_serve(env.get("HITFORGE_SERVE", "")),
    )


def _serve(value: str) -> str:
    """``HITFORGE_SERVE``: all, market or requester; anything else is a mistake said at start-up."""
    value = value.strip().lower() or "all"
    if value not in ("all", "market", "requester"):
        raise ValueError(f"HITFORGE_SERVE must be all, market or requester, not {value!r}")
    return value


def _log_format(value: str) -> str:
    """``HITFORGE_LOG_FORMAT``: json, text or empty; anything else is a mistake said at start-up."""
    value = value.strip().lower()
    if value not in ("", "json", "text"):
        raise ValueError(f"HITFORGE_LOG_FORMAT must be json or text, not {value!r}")
    return value


def _session_limits(env: Mapping[str, str], who: str, default: SessionLimits) -> SessionLimits:
    """``HITFORGE_<who>_SESSION_IDLE_MINUTES`` and ``..._LIFETIME_HOURS``, each a positive whole number."""
    minutes, hours = timedelta(minutes=1), timedelta(hours=1)
    idle = _positive(env, f"HITFORGE_{who}_SESSION_IDLE_MINUTES", default.idle // minutes)
    lifetime = _positive(env, f"HITFORGE_{who}_SESSION_LIFETIME_HOURS", default.lifetime // hours)
    return SessionLimits(idle=idle * minutes, lifetime=lifetime * hours)


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or int(raw) == 0:
        raise ValueError(f"{name} must be a whole number above 0, not {raw!r}")
    return int(raw)


def _rate(env: Mapping[str, str], name: str) -> float:
    """A rate a second: a number above 0, or empty for none (0.0); anything else said at start-up."""
    raw = env.get(name, "").strip()
    if not raw:
        return 0.0
    try:
        rate = float(raw)
    except ValueError:
        rate = math.nan
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError(f"{name} must be a number of calls a second above 0, not {raw!r}")
    return rate


def _redis_url(env: Mapping[str, str], broker_url: str) -> str:
    """``HITFORGE_REDIS_URL``, else the broker's URL when the broker is Redis, else "" (none).

    A deployment that already runs Celery on Redis shares its limits there without
    another setting; one whose broker is elsewhere names its Redis.
    """
    explicit = env.get("HITFORGE_REDIS_URL", "").strip()
    if explicit:
        if not explicit.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(
                f"HITFORGE_REDIS_URL must be a redis://, rediss:// or unix:// URL, not {explicit!r}"
            )
        return explicit
    return broker_url if broker_url.startswith(("redis://", "rediss://")) else ""


def _flag(value: str) -> bool:
    """A yes/no setting: ``1``, ``true``, ``yes`` or ``on`` (any case) is yes; anything else no."""
    return value.strip().lower() in ("1", "true", "yes", "on")


def _count(env: Mapping[str, str], name: str) -> int:
    raw = env.get(name, "0").strip() or "0"
    if not raw.isdigit():
        raise ValueError(f"{name} must be a whole number of proxies (0 or more), not {raw!r}")
    return int(raw)


def _normalise_db_url(url: str) -> str:
    """Use psycopg 3 for plain ``postgresql://`` URLs."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url[len("postgresql://") :]
    if url.startswith("postgres://"):
        return "postgresql+psycopg://" + url[len("postgres://") :]
    return url
