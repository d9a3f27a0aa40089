"""Limits held across processes: the API throttle, the requester side's pacing, sign-in lockout.

Every test that shares a bucket runs the other party in a separate process
(its own memory, as on another host), so a limit kept in process memory
would let each process through on its own and fail the test. The buckets
need Redis (``HITFORGE_TEST_REDIS_URL``, which ``scripts/test-services.sh``
gives on both backends); the embedded backend's databases are shared files.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from botocore.config import Config
from botocore.exceptions import ClientError

from demo.runner import serve_in_thread
from hits import shared_limits
from hits.db import session_scope
from hits.market.requester_options import set_options
from hits.requester.mturk import Marketplace, Pacing
from hits.settings import Settings, load_settings
from server import create_app
from tests.server.worker_helpers import WorkerClient, csrf_of

REDIS_URL = os.environ.get("HITFORGE_TEST_REDIS_URL", "")
NO_REDIS = "needs HITFORGE_TEST_REDIS_URL (scripts/test-services.sh)"
needs_redis = pytest.mark.skipif(
    not REDIS_URL, reason="needs HITFORGE_TEST_REDIS_URL (scripts/test-services.sh)"
)
SPAWN = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing in memory is shared


def _store(where: str) -> shared_limits.Buckets:
    """A bucket store of its own (own connections, own memory): a Redis URL or a SQLite file's path."""
    return (
        shared_limits.RedisBuckets(where)
        if where.startswith("redis")
        else shared_limits.FileBuckets(Path(where))
    )


def _take_for(where: str, key: str, rate: float, seconds: float) -> int:
    """Take tokens from ``key`` as fast as possible for ``seconds``; how many were given."""
    buckets = _store(where)
    taken, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        if buckets.take(key, rate, shared_limits.burst_of(rate)) == 0:
            taken += 1
        time.sleep(0.01)  # two cores: leave Redis (or SQLite's lock holder) room to answer
    return taken


def _run_when_all_ready(results: Any, ready: Any, target: Any, args: tuple[Any, ...]) -> None:
    ready.wait()  # every process imported and started: they run at the same time
    results.put(target(*args))


def _in_processes(target: Any, args: tuple[Any, ...], count: int = 2) -> list[Any]:
    """``target(*args)`` in ``count`` separate processes at once; their results."""
    results, ready = SPAWN.Queue(), SPAWN.Barrier(count)
    processes = [
        SPAWN.Process(target=_run_when_all_ready, args=(results, ready, target, args), daemon=True)
        for _ in range(count)
    ]
    for process in processes:
        process.start()
    answers = [results.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=15)
    return answers


@pytest.mark.parametrize("store", ["redis", "file"])
def test_two_processes_share_one_rate(store: str, tmp_path: Path) -> None:
    if store == "redis" and not REDIS_URL:
        pytest.skip(NO_REDIS)
    where = REDIS_URL if store == "redis" else str(tmp_path / "limits.sqlite")
    key, rate, seconds = f"test:{uuid.uuid4().hex}", 5.0, 1.5
    taken = _in_processes(_take_for, (where, key, rate, seconds))
    # One bucket: its burst plus the rate over the time, for both together (per process: twice that).
    allowed = rate + rate * seconds
    assert sum(taken) <= allowed + 1, taken
    assert sum(taken) >= rate, taken  # and it did give: at least the full bucket


def _serve_elsewhere(settings: Settings, urls: Any, stop: Any) -> None:
    """In another process: serve the same site (same databases, same Redis) until ``stop`` is set."""
    running = serve_in_thread(create_app(settings=settings))
    urls.put(running.url)
    stop.wait(120)
    running.stop()


@pytest.fixture
def second_server(settings: Settings) -> Any:
    """A factory: the site served by another process with ``settings``; stopped after the test."""
    started: list[Any] = []

    def start(with_settings: Settings) -> str:
        urls, stop = SPAWN.Queue(), SPAWN.Event()
        process = SPAWN.Process(target=_serve_elsewhere, args=(with_settings, urls, stop), daemon=True)
        process.start()
        started.append((process, stop))
        return str(urls.get(timeout=60))

    yield start
    for process, stop in started:
        stop.set()
        process.join(timeout=15)
        if process.is_alive():
            process.kill()


def _no_retries(url: str, key: Any) -> Any:
    return boto3.client(
        "mturk",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=key.access_key_id,
        aws_secret_access_key=key.secret_access_key,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )


@pytest.mark.parametrize("store", ["redis", "file"])
def test_a_requester_is_throttled_across_two_server_processes(
    store: str, settings: Settings, requester: Any, market_sessions: Any, second_server: Any
) -> None:
    if store == "redis" and not REDIS_URL:
        pytest.skip(NO_REDIS)
    shared = settings.with_overrides(redis_url=REDIS_URL if store == "redis" else "")
    here = serve_in_thread(create_app(settings=shared))
    try:
        there = second_server(shared)
        with session_scope(market_sessions) as session:
            set_options(session, requester.requester_id, throttle_rate=0.2)  # burst 1, then one per 5 s
        clients = [_no_retries(here.url, requester), _no_retries(there, requester)]
        served, throttled = 0, 0
        for n in range(4):
            try:
                clients[n % 2].get_account_balance()
                served += 1
            except ClientError as exc:
                # The reply a boto3 client gets is unchanged: MTurk's ThrottlingException.
                assert exc.response["Error"] == {"Code": "ThrottlingException", "Message": "Rate exceeded"}
                throttled += 1
        # Per process, each server would have let its own first call through.
        assert (served, throttled) == (1, 3)
    finally:
        here.stop()


def _attempt(base: str, username: str, password: str) -> requests.Response:
    browser = requests.Session()
    page = browser.get(base + "/signin")
    return browser.post(
        base + "/signin", data={"csrf_token": csrf_of(page), "username": username, "password": password}
    )


def test_sign_in_lockout_is_counted_across_two_server_processes(
    settings: Settings, live_server: Any, second_server: Any
) -> None:
    there = second_server(settings)
    victim = WorkerClient(live_server.url, "spread")
    for n in range(5):
        # Guesses spread over both servers: each has seen fewer than the limit.
        base = live_server.url if n % 2 else there
        assert _attempt(base, victim.username, f"guess-{n}").status_code == 401
    for base in (live_server.url, there):
        locked = _attempt(base, victim.username, "a-long-password")
        assert locked.status_code == 429 and "Too many failed sign-ins" in locked.text


def test_without_redis_buckets_are_kept_in_a_file_of_the_host(settings: Settings) -> None:
    # The embedded default: one host, whose processes all open var/limits.sqlite.
    local = settings.with_overrides(redis_url="")
    buckets = shared_limits.buckets_for(local)
    assert isinstance(buckets, shared_limits.FileBuckets)
    assert buckets.path == settings.var_dir / "limits.sqlite"
    assert shared_limits.buckets_for(local) is buckets  # one store a process


def test_unreachable_redis_limits_per_process_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    buckets = shared_limits.RedisBuckets("redis://127.0.0.1:9/0")  # nothing listens on the discard port
    with caplog.at_level(logging.WARNING, logger="hits.shared_limits"):
        assert buckets.take("k", 1.0, 1.0) == 0  # fails open to this process's bucket...
        assert buckets.take("k", 1.0, 1.0) > 0  # ...which still holds the rate
        assert buckets.take("k", 1.0, 1.0) > 0
    warnings = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(warnings) == 1  # said once, not on every call


def test_redis_is_asked_again_once_it_may_be_back(monkeypatch: pytest.MonkeyPatch) -> None:
    if not REDIS_URL:
        pytest.skip(NO_REDIS)
    monkeypatch.setattr(shared_limits, "RETRY_REDIS_AFTER", 0.2)
    buckets = shared_limits.RedisBuckets(REDIS_URL)
    good = buckets._script
    calls: list[str] = []

    def down(**_: Any) -> Any:
        calls.append("down")
        raise shared_limits.redis.ConnectionError("refused")

    buckets._script = down  # type: ignore[assignment]
    key = f"test:{uuid.uuid4().hex}"
    assert buckets.take(key, 1.0, 1.0) == 0 and buckets.take(key, 1.0, 1.0) > 0
    assert calls == ["down"]  # the second call did not wait on Redis again
    buckets._script = good
    time.sleep(0.25)
    assert buckets.take(key, 1.0, 1.0) == 0  # Redis again: its own bucket for the key is full


def test_pacing_is_set_up_from_the_settings(settings: Settings) -> None:
    keyed = settings.with_overrides(mturk_access_key_id="AKTEST", mturk_secret_access_key="s")
    assert Marketplace.from_settings(keyed).pacing is None
    paced = Marketplace.from_settings(keyed.with_overrides(mturk_call_rate=3.0)).pacing
    assert paced is not None and paced.rate == 3.0 and paced.key == "mturk-calls:AKTEST"
    assert paced.buckets is shared_limits.buckets_for(keyed)


def _pace_for(url: str, key: str, rate: float, calls: int) -> float:
    """In another process: make ``calls`` paced calls; the seconds they took."""
    pacing = Pacing(shared_limits.RedisBuckets(url), key, rate)
    started = time.monotonic()
    for _ in range(calls):
        pacing.wait()
    return time.monotonic() - started


@needs_redis
def test_requester_side_pacing_is_shared_by_its_processes() -> None:
    key, rate = f"mturk-calls:test-{uuid.uuid4().hex}", 10.0
    elapsed = _in_processes(_pace_for, (REDIS_URL, key, rate, 15))
    # 30 calls at 10 a second after a burst of 10: two seconds together (per process: half a second).
    assert max(elapsed) >= (30 - rate) / rate - 0.2, elapsed


def test_settings_name_the_redis_limits_are_shared_through(tmp_path: Any) -> None:
    base = {"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_SECRET_KEY": "x" * 32}
    assert load_settings(base).redis_url == ""
    assert load_settings({**base, "HITFORGE_BROKER_URL": "redis://r:6379/0"}).redis_url == "redis://r:6379/0"
    both = {**base, "HITFORGE_BROKER_URL": "redis://r/0", "HITFORGE_REDIS_URL": "redis://limits/1"}
    assert load_settings(both).redis_url == "redis://limits/1"
    with pytest.raises(ValueError, match="HITFORGE_REDIS_URL"):
        load_settings({**base, "HITFORGE_REDIS_URL": "postgresql://x/y"})
    assert load_settings(base).mturk_call_rate == 0.0
    assert load_settings({**base, "HITFORGE_MTURK_CALL_RATE": "2.5"}).mturk_call_rate == 2.5
    with pytest.raises(ValueError, match="HITFORGE_MTURK_CALL_RATE"):
        load_settings({**base, "HITFORGE_MTURK_CALL_RATE": "-1"})


class _LockedAtFirst:
    """A sqlite3 connection whose first WAL switches answer "database is locked", as SQLite may
    at once (without its busy wait) while another process is switching a new file itself."""

    def __init__(self, real: Any, refusals: int) -> None:
        self.real, self.refusals = real, refusals

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("PRAGMA journal_mode") and self.refusals:
            self.refusals -= 1
            raise shared_limits.sqlite3.OperationalError("database is locked")
        return self.real.execute(sql, *args)

    def close(self) -> None:
        self.real.close()


def test_opening_a_shared_file_another_process_is_switching_waits_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_connect = shared_limits.sqlite3.connect
    monkeypatch.setattr(
        shared_limits.sqlite3, "connect", lambda *a, **k: _LockedAtFirst(real_connect(*a, **k), 3)
    )
    buckets = shared_limits.FileBuckets(tmp_path / "limits.sqlite")
    assert buckets.take("k", 5.0, 5.0) == 0.0  # opened after three refusals, and the bucket gave
    # A lock that never ends is still an error, after the patience (not a hang).
    monkeypatch.setattr(shared_limits, "OPEN_PATIENCE", 0.2)
    monkeypatch.setattr(
        shared_limits.sqlite3, "connect", lambda *a, **k: _LockedAtFirst(real_connect(*a, **k), 10_000)
    )
    with pytest.raises(shared_limits.sqlite3.OperationalError, match="locked"):
        shared_limits.open_shared_sqlite(tmp_path / "other.sqlite", "SELECT 1")
