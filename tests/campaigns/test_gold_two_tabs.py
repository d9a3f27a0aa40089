"""Gold with two tabs: two pages one worker opens at once (two HITs) never share a gold item."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select, text

from hits.db import session_scope
from hits.requester.pages.gold import choose_gold
from hits.requester.tables.campaigns import PublishedHIT
from tests.conftest import BACKEND
from tests.helpers import launch_template_campaign


def _waiting_on_a_lock(sessions, pid: int) -> bool:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        wait = session.scalar(
            text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
        )
    return wait == "Lock"


def test_two_pages_opened_at_once_by_one_worker_get_different_gold(
    tmp_path, live_server, market, requester_sessions
) -> None:
    if BACKEND == "embedded":
        pytest.skip("PostgreSQL only: SQLite writers are serialised by BEGIN IMMEDIATE, so they cannot race")
    # Two HITs of two gold slots each, four gold items: one worker's two pages hold all four.
    campaign_id, _, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=2, name="two-tabs"
    )
    with session_scope(requester_sessions) as session:
        first_hit, second_hit = session.scalars(
            select(PublishedHIT.id).where(PublishedHIT.campaign_id == campaign_id).order_by(PublishedHIT.id)
        ).all()

    def pages(worker: str) -> tuple[list[int], list[int]]:
        """Open the worker's two pages at once; the first stays uncommitted while the second chooses."""
        first_chosen, release = threading.Event(), threading.Event()
        second_pid: list[int] = []
        second_done = threading.Event()
        chosen: dict[str, list[int]] = {}
        errors: list[BaseException] = []

        def tab(name: str, published_id: int, assignment_id: str) -> None:
            try:
                if name == "second":
                    assert first_chosen.wait(timeout=30)
                with session_scope(requester_sessions) as session:
                    if name == "second":
                        second_pid.append(session.scalar(text("SELECT pg_backend_pid()")))
                    published = session.get(PublishedHIT, published_id)
                    assert published is not None
                    gold = choose_gold(session, published, assignment_id, worker)
                    chosen[name] = sorted(g.id for g in gold.values())
                    if name == "first":
                        first_chosen.set()
                        # The first page's request is still running: its choice is not committed.
                        assert release.wait(timeout=30)
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)
                first_chosen.set()
            finally:
                if name == "second":
                    second_done.set()

        threads = [
            threading.Thread(target=tab, args=("first", first_hit, f"A1-{worker}")),
            threading.Thread(target=tab, args=("second", second_hit, f"A2-{worker}")),
        ]
        for thread in threads:
            thread.start()
        assert first_chosen.wait(timeout=30)
        # Hold the first page open until the second has chosen, or is waiting for the first.
        deadline = time.monotonic() + 30
        while not second_done.is_set() and time.monotonic() < deadline:
            if second_pid and _waiting_on_a_lock(requester_sessions, second_pid[0]):
                break
            time.sleep(0.02)
        release.set()
        for thread in threads:
            thread.join(timeout=60)
        assert not errors, errors
        return chosen["first"], chosen["second"]

    for n in range(4):
        first, second = pages(f"TWO-TABS-W{n}")
        assert len(first) == len(second) == 2
        # Four gold items, four gold slots between the two HITs: the plan deals each item once.
        assert not set(first) & set(second), (n, first, second)
