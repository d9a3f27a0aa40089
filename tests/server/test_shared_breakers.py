"""A heatmap provider's breaker held across processes: one process's timeouts keep them all away.

The timeouts are counted in a separate process (its own memory, as on another
host): a breaker kept in process memory would let this process call the
provider on regardless, and fail the test.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
import uuid
from pathlib import Path

import pytest

from hits import shared_breakers
from hits.requester.heatmaps.lanes import Lane

REDIS_URL = os.environ.get("HITFORGE_TEST_REDIS_URL", "")
SPAWN = multiprocessing.get_context("spawn")  # a fresh interpreter: nothing in memory is shared


def _store(where: str) -> shared_breakers.Breakers:
    """A breaker store of its own (own connections, own memory): a Redis URL or a SQLite file's path."""
    if where.startswith("redis"):
        return shared_breakers.RedisBreakers(where)
    return shared_breakers.FileBreakers(Path(where))


def _time_out(where: str, name: str, times: int) -> None:
    """In another process: a lane of the provider ``name`` whose calls time out ``times`` times."""
    lane = Lane(name, breaker_timeouts=3, cooldown=1.5, breakers=_store(where))
    for _ in range(times):
        assert lane.admit() is None
        lane.release()
        lane.timed_out()


def _in_another_process(where: str, name: str, times: int) -> None:
    process = SPAWN.Process(target=_time_out, args=(where, name, times))
    process.start()
    process.join(60)
    assert process.exitcode == 0


def _stores(tmp_path: Path) -> list[str]:
    stores = [str(tmp_path / "limits.sqlite")]
    if REDIS_URL:
        stores.append(REDIS_URL)
    return stores


def test_a_provider_another_process_saw_time_out_is_not_called_here_until_its_cooldown_ends(
    tmp_path: Path,
) -> None:
    for where in _stores(tmp_path):
        name = f"model-{uuid.uuid4().hex[:8]} (threshold 0.5)"
        here = Lane(name, breaker_timeouts=3, cooldown=1.5, breakers=_store(where))
        _in_another_process(where, name, 2)
        assert here.admit() is None, where  # two in a row elsewhere: still called
        here.release()
        _in_another_process(where, name, 1)
        refused = here.admit()
        assert refused is not None and "timed out 3 times in a row" in refused, where
        time.sleep(1.7)
        assert here.admit() is None, where  # tried again after the cooldown, from any process
        here.release()
        here.answered(ok=True)  # a heatmap in time: the count starts again everywhere
        _in_another_process(where, name, 2)
        assert here.admit() is None, where
        here.release()
        other = Lane(f"{name} other", breaker_timeouts=3, cooldown=1.5, breakers=_store(where))
        assert other.admit() is None, where  # another provider's breaker is its own


def test_with_redis_away_each_process_keeps_its_own_breaker_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    away = shared_breakers.RedisBreakers("redis://127.0.0.1:1/0")  # nothing listens on port 1
    lane = Lane("model-away", breaker_timeouts=2, cooldown=30, breakers=away)
    with caplog.at_level(logging.WARNING, logger="hits.shared_breakers"):
        for _ in range(2):
            assert lane.admit() is None
            lane.release()
            lane.timed_out()
        assert "timed out 2 times in a row" in (lane.admit() or "")
    unreachable = [r for r in caplog.records if "Redis for shared breakers unreachable" in r.getMessage()]
    assert len(unreachable) == 1
