"""The table of API operations: each is a function of (context, params) -> response.

Adding an operation is adding a decorated function in one of the ``ops_*``
modules; the endpoint, auth and error mapping stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from hits.settings import Settings


@dataclass
class CallContext:
    """What an operation may use: the request's session and the calling requester."""

    session: Session
    requester_id: str
    settings: Settings


Operation = Callable[[CallContext, dict[str, Any]], dict[str, Any]]
OPERATIONS: dict[str, Operation] = {}


def operation(name: str) -> Callable[[Operation], Operation]:
    """Register ``fn`` as the handler of API operation ``name``."""

    def register(fn: Operation) -> Operation:
        if name in OPERATIONS:
            raise RuntimeError(f"operation {name} registered twice")
        OPERATIONS[name] = fn
        return fn

    return register
