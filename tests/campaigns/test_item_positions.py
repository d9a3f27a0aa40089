"""Each item's place in its campaign, and the items list read by it.

A campaign's items are numbered from 0 in the order they were added (id order),
with no gap, whether they came with the campaign or with ``campaign add`` later,
while other campaigns gain items in between. The dashboard's items list reads
page k as the positions [50(k-1), 50k): the same items, in the same order, as
paging in id order gave, but found by a range of an index instead of skipping
half a campaign's items to reach a middle page.
"""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from bs4 import BeautifulSoup
from sqlalchemy import select
from sqlalchemy.orm import Session

from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.campaigns.add_work import add_work
from hits.requester.campaigns.service import create_campaign
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import Campaign, Item, StaffUser
from tests.helpers import in_own_session, rating_campaign_spec, statements_sent
from tests.server.test_dashboard import staff_session

PER_PAGE = 50


def _created(folder: Path, sessions: Any, name: str, items: int) -> int:
    """A running rating campaign of ``items`` items (``item-0000``...), not published; its id."""
    folder.mkdir()
    write_rating_demo(folder, items=items, gold=4, seed=len(name))
    spec = rating_campaign_spec(name, budget="500.00", allow_gold_reuse=True)
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with session_scope(sessions) as session:
        campaign = create_campaign(session, load_campaign_file(folder / "campaign.yaml"))
        campaign.status = "running"
        return campaign.id


def _more(folder: Path, prefix: str) -> Path:
    """An items file of the campaign's pictures again, under new ids (``prefix-000``...)."""
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    path = folder / f"{prefix}.jsonl"
    path.write_text(
        "".join(json.dumps({**row, "id": f"{prefix}-{n:03d}"}) + "\n" for n, row in enumerate(rows))
    )
    return path


def _staff(sessions: Any) -> int:
    with session_scope(sessions) as session:
        staff = StaffUser(username=f"adder-{uuid.uuid4().hex[:6]}", password_hash="!", role="admin")
        session.add(staff)
        session.flush()
        return staff.id


def _add(session: Session, campaign_id: int, items_file: Path, staff_id: int) -> int:
    campaign = session.get(Campaign, campaign_id)
    assert campaign is not None
    return add_work(session, campaign, items_file, staff_id).items


def _by_id(sessions: Any, campaign_id: int) -> list[tuple[int, int, str]]:
    """The campaign's items as (id, position, external id), in id order."""
    with session_scope(sessions) as session:
        rows = session.execute(
            select(Item.id, Item.position, Item.external_id)
            .where(Item.campaign_id == campaign_id)
            .order_by(Item.id)
        )
        return [(i, p, e) for i, p, e in rows]


def test_every_page_lists_what_paging_in_id_order_did_for_a_campaign_added_to_in_batches(
    tmp_path, live_server, requester_sessions
) -> None:
    tag = uuid.uuid4().hex[:6]
    a = _created(tmp_path / "a", requester_sessions, f"pos-a-{tag}", 40)
    b = _created(tmp_path / "b", requester_sessions, f"pos-b-{tag}", 10)
    staff = _staff(requester_sessions)
    # Three more batches for each, one campaign's after the other's: their ids interleave.
    for batch in range(3):
        for campaign_id, folder in ((a, tmp_path / "a"), (b, tmp_path / "b")):
            with session_scope(requester_sessions) as session:
                _add(session, campaign_id, _more(folder, f"{folder.name}{batch}"), staff)
    rows_a, rows_b = _by_id(requester_sessions, a), _by_id(requester_sessions, b)
    assert len(rows_a) == 160 and len(rows_b) == 40
    assert rows_a[0][0] < rows_b[-1][0] and rows_b[0][0] < rows_a[-1][0]  # interleaved ids
    # Dense from 0, in id order, in each campaign.
    assert [p for _, p, _ in rows_a] == list(range(160))
    assert [p for _, p, _ in rows_b] == list(range(40))

    # What skipping (k - 1) x 50 in id order lists on page k: 50, 50, 50 and 10 items.
    names = [e for _, _, e in rows_a]
    by_id_order = [names[start : start + PER_PAGE] for start in range(0, len(names), PER_PAGE)]
    http = staff_session(live_server.url, requester_sessions)
    engine = live_server.server.app.extensions["hitforge"].requester_engine
    base = f"{live_server.url}/dashboard/campaigns/{a}/items"
    # The first, the middle two, the last and one past the end (shown as the last).
    for asked, shown in ((1, 1), (2, 2), (3, 3), (4, 4), (9, 4)):
        with statements_sent(engine) as sent:
            response = http.get(base, params={"page": asked})
        assert response.status_code == 200
        soup = BeautifulSoup(response.text, "html.parser")
        assert [h.get_text() for h in soup.find_all("h2")] == by_id_order[shown - 1], asked
        assert soup.find(id="count").get_text().startswith("160 items.")  # type: ignore[union-attr]
        pager = soup.find("nav", class_="pager")
        assert pager is not None and f"Page {shown} of 4" in pager.get_text()
        assert ("Previous page" in pager.get_text()) == (shown > 1)
        assert ("Next page" in pager.get_text()) == (shown < 4)
        # The page's items are a range of positions: nothing skipped, whatever the page.
        items_read = [s for s in sent if "FROM rq_items" in s and s.startswith("SELECT")]
        assert items_read, sent
        assert not any("OFFSET" in s.upper() for s in items_read), items_read
        assert any("rq_items.position >=" in s and "rq_items.position <" in s for s in items_read), items_read

    # A search still pages its matches in id order.
    found = BeautifulSoup(http.get(base, params={"q": "a1-"}).text, "html.parser")
    assert [h.get_text() for h in found.find_all("h2")] == [f"a1-{n:03d}" for n in range(40)]
    assert found.find(id="count").get_text().startswith("40 items matching")  # type: ignore[union-attr]


def test_two_adds_to_one_campaign_at_once_take_turns_and_number_on(tmp_path, requester_sessions) -> None:
    """The second add waits for the first's lock on the campaign (its row on PostgreSQL, the
    database's write lock on SQLite), then numbers its items after the first's."""
    folder = tmp_path / "c"
    campaign_id = _created(folder, requester_sessions, f"pos-c-{uuid.uuid4().hex[:6]}", 4)
    staff = _staff(requester_sessions)
    first, second = _more(folder, "first"), _more(folder, "second")
    adding = requester_sessions()
    try:
        assert _add(adding, campaign_id, first, staff) == 4  # flushed, holding its lock, not committed
        with ThreadPoolExecutor(1) as pool:
            other = pool.submit(
                in_own_session, requester_sessions, lambda s: _add(s, campaign_id, second, staff)
            )
            time.sleep(1.0)
            assert not other.done()  # waiting for the first add to end
            adding.commit()
            assert other.result(timeout=60) == 4
    finally:
        adding.close()
    rows = _by_id(requester_sessions, campaign_id)
    assert [p for _, p, _ in rows] == list(range(12))
    assert [e.split("-")[0] for _, _, e in rows] == ["item"] * 4 + ["first"] * 4 + ["second"] * 4
