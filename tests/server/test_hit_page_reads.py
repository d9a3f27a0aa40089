"""HIT pages (``/tasks/hit``) and their pictures only read, so they never wait for a writer.

The page's one write, recording the gold an assignment is shown when first
opened, still happens exactly once, in a short unit of work of its own.
"""

from __future__ import annotations

import concurrent.futures
import time
import uuid

from bs4 import BeautifulSoup
from sqlalchemy import func, select, text

from hits.db import session_scope
from hits.requester.tables.campaigns import GoldExposure
from tests.server.test_worker_site import accept_rating_hit


def _exposures(requester_sessions, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        count = session.scalar(
            select(func.count()).select_from(GoldExposure).where(GoldExposure.campaign_id == campaign_id)
        )
    return int(count or 0)


def test_a_hit_page_and_its_pictures_do_not_wait_for_a_writer(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(
        tmp_path, market, requester_sessions, live_server.url, f"reads-{uuid.uuid4().hex[:6]}", "page-reader"
    )
    bot, campaign_id, src = hit.bot, hit.campaign_id, hit.src
    first = bot.http.get(src, timeout=30)
    assert first.status_code == 200
    assert _exposures(requester_sessions, campaign_id) == 1  # the first opening recorded its gold
    pictures = [live_server.url + str(img["src"]) for img in BeautifulSoup(first.text, "html.parser")("img")]
    assert pictures
    with session_scope(requester_sessions) as writer:
        writer.execute(text("SELECT 1"))  # a write unit of work is open: on SQLite it holds the lock
        for url in (src, *pictures):
            started = time.monotonic()
            # A page that queued for the write lock would wait for this writer (60 s on SQLite);
            # 15 s leaves room for a loaded machine.
            shown = bot.http.get(url, timeout=30)
            assert shown.status_code == 200, url
            assert time.monotonic() - started < 15, url
    again = bot.http.get(src, timeout=30)
    assert again.status_code == 200
    # Reloads showed the same pictures and wrote nothing.
    assert [str(i["src"]) for i in BeautifulSoup(again.text, "html.parser")("img")] == [
        p.removeprefix(live_server.url) for p in pictures
    ]
    assert _exposures(requester_sessions, campaign_id) == 1


def test_the_first_opening_records_the_gold_once_even_opened_twice_at_once(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(
        tmp_path, market, requester_sessions, live_server.url, f"twice-{uuid.uuid4().hex[:6]}", "page-twice"
    )
    bot, campaign_id, src = hit.bot, hit.campaign_id, hit.src
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        pages = list(pool.map(lambda _: bot.http.get(src, timeout=20), range(4)))
    assert [p.status_code for p in pages] == [200] * 4
    assert len({p.text.count("<img") for p in pages}) == 1
    assert _exposures(requester_sessions, campaign_id) == 1


def test_an_sxs_page_records_its_sides_on_first_opening_and_reloads_read_them_without_the_lock(
    tmp_path, live_server, market, requester_sessions
) -> None:
    import requests

    from hits.requester.tables.templates import SlotArrangement
    from tests.server.worker_helpers import accept_framed
    from tests.templates.test_sxs_campaign import _launch_without_gold

    hit_id = _launch_without_gold(tmp_path, market, requester_sessions, live_server.url, "sxs-reads")
    _, params = accept_framed(live_server.url, hit_id, "sides-reader")

    def sides() -> tuple[str, ...]:
        page = requests.get(live_server.url + "/tasks/hit", params=params, timeout=30)
        assert page.status_code == 200, page.text[:300]
        return tuple(p.get_text() for p in BeautifulSoup(page.text, "html.parser").select("p.candidate-text"))

    first = sides()  # the first opening draws the sides and records them (a short write)
    assert first
    with session_scope(requester_sessions) as session:
        recorded = session.scalars(
            select(SlotArrangement.position).where(SlotArrangement.assignment_id == params["assignmentId"])
        ).all()
    assert sorted(recorded) == list(range(len(first) // 2))
    with session_scope(requester_sessions) as writer:
        writer.execute(text("SELECT 1"))  # a write unit of work is open: on SQLite it holds the lock
        started = time.monotonic()
        assert sides() == first  # the reload reads the recorded sides and waits for no writer
        assert time.monotonic() - started < 15
