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
#: Operations that never write: they run without taking SQLite's write lock.
READ_ONLY_OPERATIONS: set[str] = set()


def operation(name: str, *, read_only: bool = False) -> Callable[[Operation], Operation]:
    """Register ``fn`` as the handler of API operation ``name``.

    ``read_only`` promises that the operation never writes; the database layer
    refuses a write from it (``hits.db.WriteInReadOnlyUnit``), so a broken
    promise fails loudly in the conformance suite rather than under load.
    """

    def register(fn: Operation) -> Operation:
        if name in OPERATIONS:
            raise RuntimeError(f"operation {name} registered twice")
        OPERATIONS[name] = fn
        if read_only:
            READ_ONLY_OPERATIONS.add(name)
        return fn

    return register
