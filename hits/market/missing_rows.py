"""Rows a transaction found missing, remembered until it ends so that asking again costs no query."""

from __future__ import annotations

from sqlalchemy.orm import Session


class MissingRows:
    """The keys of one kind of row that the session's current transaction found missing.

    A row that was read sits in the identity map, so ``session.get`` finds it again
    without a query; a missing row is not there, so every ask for it is a query. A
    query that reads a parent row can read this child in the same round trip (an
    outer join) and note a miss here. What is noted holds for the current
    transaction only: the next one asks the database again.
    """

    def __init__(self, info_key: str) -> None:
        #: The ``session.info`` key holding (transaction, keys found missing in it).
        self.info_key = info_key

    def note(self, session: Session, key: str) -> None:
        """Remember that the current transaction found no row for ``key``."""
        transaction = session.get_transaction()
        if transaction is None:
            return  # nothing was read in a transaction
        known = session.info.get(self.info_key)
        if known is None or known[0] is not transaction:
            known = session.info[self.info_key] = (transaction, set[str]())
        known[1].add(key)

    def forget(self, session: Session, key: str) -> None:
        """A row for ``key`` is being created in this session: ask the database again."""
        known = session.info.get(self.info_key)
        if known is not None:
            known[1].discard(key)

    def known_missing(self, session: Session, key: str) -> bool:
        """Whether the current transaction already found no row for ``key``."""
        known = session.info.get(self.info_key)
        return known is not None and key in known[1] and known[0] is session.get_transaction()
