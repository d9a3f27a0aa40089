"""``call_after_commit`` runs callbacks after the real commit only, and savepoints keep their own."""

from __future__ import annotations

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from hits.db import call_after_commit


def _session() -> Session:
    session = Session(create_engine("sqlite://"))
    session.execute(text("select 1"))
    return session


def test_a_released_savepoint_is_not_the_commit() -> None:
    ran: list[str] = []
    session = _session()
    call_after_commit(session, lambda: ran.append("before"))
    with session.begin_nested():
        call_after_commit(session, lambda: ran.append("inside"))
    assert ran == []  # the rows may not exist for other processes yet
    session.commit()
    assert ran == ["before", "inside"]


def test_a_rolled_back_savepoint_drops_only_its_own_callbacks() -> None:
    ran: list[str] = []
    session = _session()
    call_after_commit(session, lambda: ran.append("before"))
    try:
        with session.begin_nested():
            call_after_commit(session, lambda: ran.append("failed"))
            with session.begin_nested():
                call_after_commit(session, lambda: ran.append("failed, deeper"))
            raise ValueError("the savepoint's work is undone")
    except ValueError:
        pass
    call_after_commit(session, lambda: ran.append("after"))
    session.commit()
    assert ran == ["before", "after"]


def test_a_rollback_drops_everything() -> None:
    ran: list[str] = []
    session = _session()
    call_after_commit(session, lambda: ran.append("x"))
    with session.begin_nested():
        pass
    session.rollback()
    session.execute(text("select 1"))
    session.commit()
    assert ran == []
