"""Per-requester test options: throttling and fault injection for retry code.

Off unless a requester has a ``market_requester_options`` row with a rate set;
``set_options`` is how a test (or an operator) switches them on.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market.models import RequesterOptions


def set_options(
    session: Session,
    requester_id: str,
    *,
    throttle_rate: float | None = None,
    fault_rate: float | None = None,
) -> RequesterOptions:
    """Set (or with None, clear) a requester's throttle rate (calls/second) and fault rate (0..1)."""
    if throttle_rate is not None and throttle_rate <= 0:
        raise ValueError("throttle_rate must be positive (calls per second)")
    if fault_rate is not None and not 0 <= fault_rate <= 1:
        raise ValueError("fault_rate must be between 0 and 1")
    options = session.get(RequesterOptions, requester_id)
    if options is None:
        options = RequesterOptions(requester_id=requester_id)
        session.add(options)
    options.throttle_rate = throttle_rate
    options.fault_rate = fault_rate
    options.updated_at = utcnow()
    session.flush()
    return options
