"""Throttling and fault injection, per requester, for testing requesters' retry code.

Both are off unless the requester has a ``market_requester_options`` row with
``throttle_rate`` (calls per second) or ``fault_rate`` (probability of a
ServiceFault) set. The rate is a token bucket (burst = one second's worth of
calls, at least 1) shared by every server process through Redis when the
deployment has one (``hits/shared_limits.py``), so a requester is held to the
rate however many processes and hosts serve the API; without Redis, in a
file every process of the one host shares.
"""

from __future__ import annotations

import random

from hits import shared_limits
from hits.market.accounts import Caller


def bucket_key(requester_id: str) -> str:
    """The shared bucket of one requester's calls."""
    return f"mturk-throttle:{requester_id}"


def verdict(caller: Caller, buckets: shared_limits.Buckets) -> str | None:
    """ "throttle", "fault" or None (serve the call) for this caller's next call."""
    rate = caller.throttle_rate
    if (
        rate is not None
        and buckets.take(bucket_key(caller.requester_id), rate, shared_limits.burst_of(rate)) > 0
    ):
        return "throttle"
    if caller.fault_rate and random.random() < caller.fault_rate:
        return "fault"
    return None
