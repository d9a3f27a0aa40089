"""Lanes: each live provider's calls run apart, so a hung provider cannot starve the others.

A provider is someone else's code (an installed package's model, a server
elsewhere); a call that never returns cannot be stopped in Python, only left
behind. So every call runs in a daemon thread of its own (never one of a
shared pool, which hung calls would fill, nor one that keeps the process
from exiting), and each provider has a lane that

* lets at most :data:`MAX_IN_FLIGHT` of its calls run at once, counting the
  ones left behind: when they are all stuck, the next call is not made;
* after :data:`BREAKER_TIMEOUTS` timeouts in a row stops calling the provider
  for :data:`COOLDOWN_SECONDS` (a circuit breaker), then tries it again: one
  heatmap in time closes the breaker, one more timeout opens it again.

A call that is not made is answered at once with why (the record the
caller logs). The calls in flight are the process's own (its threads); the
breaker is the deployment's when the lane is given the shared breakers
(``hits/shared_breakers.py``: Redis, else a file every process of the host
opens), so a provider one process saw time out is left alone by all.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from hits.shared_breakers import Breakers, LocalBreakers

#: Calls of one provider that may be running at once, hung ones included.
MAX_IN_FLIGHT = 4
#: Timeouts in a row after which a provider is left alone for a while.
BREAKER_TIMEOUTS = 3
#: How long a provider that kept timing out is not called.
COOLDOWN_SECONDS = 60.0

T = TypeVar("T")
log = logging.getLogger(__name__)


class Lane:
    """One provider's calls: how many are running, and its breaker."""

    def __init__(
        self,
        name: str,
        max_in_flight: int = MAX_IN_FLIGHT,
        breaker_timeouts: int = BREAKER_TIMEOUTS,
        cooldown: float = COOLDOWN_SECONDS,
        breakers: Breakers | None = None,
    ) -> None:
        self.name = name
        self.max_in_flight = max_in_flight
        self.breaker_timeouts = breaker_timeouts
        self.cooldown = cooldown
        self._lock = threading.Lock()
        self._in_flight = 0
        self._breakers = breakers or LocalBreakers()
        # A provider's lane name carries its settings: hashed, a short key of fixed length.
        self._key = "heatmap-provider:" + hashlib.sha256(name.encode()).hexdigest()[:24]

    def admit(self) -> str | None:
        """Take a place for one call; None when taken, else why the provider is not called now."""
        wait, timeouts = self._breakers.state(self._key)
        if wait > 0:
            return f"not called: it timed out {timeouts} times in a row; it is tried again in {wait:.0f} s"
        with self._lock:
            if self._in_flight >= self.max_in_flight:
                return f"not called: {self._in_flight} earlier calls to it are still running"
            self._in_flight += 1
            return None

    def release(self) -> None:
        """A call ended (in time or long after)."""
        with self._lock:
            self._in_flight -= 1

    def answered(self, ok: bool) -> None:
        """A call ended within the time limit; a heatmap closes the breaker."""
        if ok:
            self._breakers.succeeded(self._key)

    def timed_out(self) -> None:
        """A call outlived the time limit; too many in a row open the breaker."""
        timeouts = self._breakers.failed(self._key, self.breaker_timeouts, self.cooldown)
        if timeouts >= self.breaker_timeouts:
            log.warning(
                "heatmap provider %s timed out %d times in a row: not called for %.0f s",
                self.name,
                timeouts,
                self.cooldown,
            )


_lanes: dict[str, Lane] = {}
_lanes_lock = threading.Lock()


def lane_named(name: str, breakers: Breakers | None = None) -> Lane:
    """The process's lane for the provider called ``name`` (made on first use, never at import).

    ``breakers``: where its breaker lives (the deployment's shared ones); by default this process.
    """
    with _lanes_lock:
        lane = _lanes.get(name)
        if lane is None:
            lane = _lanes[name] = Lane(name, breakers=breakers)
        return lane


def start_call(call: Callable[[], T], lane: Lane | None) -> Future[T]:
    """Run ``call`` in a daemon thread of its own; at its end, give back its place in ``lane``."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits, as a pool would
            future.set_exception(exc)
        finally:
            if lane is not None:
                lane.release()

    threading.Thread(target=run, name=f"heatmap {lane.name if lane else 'job'}", daemon=True).start()
    return future
