"""Throttling and fault injection, per requester, for testing requesters' retry code.

Both are off unless the requester has a ``market_requester_options`` row with
``throttle_rate`` (calls per second) or ``fault_rate`` (probability of a
ServiceFault) set. The rate is enforced per server process with a token bucket
(burst = one second's worth of calls, at least 1).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass

from hits.market.accounts import Caller


@dataclass
class _Bucket:
    tokens: float
    stamp: float


_buckets: dict[str, _Bucket] = {}
_lock = threading.Lock()


def _take(requester_id: str, rate: float, now: float) -> bool:
    burst = max(1.0, rate)
    with _lock:
        bucket = _buckets.get(requester_id)
        if bucket is None:
            bucket = _buckets[requester_id] = _Bucket(tokens=burst, stamp=now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return True
        return False


def verdict(caller: Caller) -> str | None:
    """ "throttle", "fault" or None (serve the call) for this caller's next call."""
    rate = caller.throttle_rate
    if rate is not None and not _take(caller.requester_id, rate, time.monotonic()):
        return "throttle"
    if caller.fault_rate and random.random() < caller.fault_rate:
        return "fault"
    return None
