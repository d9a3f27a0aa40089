"""Issue 15, item 11: a worker finds a published test from the worker site, and its intro tells what it holds.

Over real HTTP as a signed-in worker: the qualification list and the
qualification's page link to the test instead of offering a request, a
request posted anyway leads to the test and leaves no pending request, and
the test's intro lists the sections of its own bank.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.models import QualificationRequest
from qualification.bank import DEFAULT_BANK
from qualification.service import publish_test
from tests.qualification.conftest import small_bank_data, write_bank
from tests.server.worker_helpers import WorkerClient, csrf_of, soup


def test_the_qualification_page_links_to_the_test_and_asks_for_nothing(
    live_server, market, requester_sessions, market_sessions
) -> None:
    with session_scope(requester_sessions) as session:
        test = publish_test(
            session, market, name="Findable test", bank_path=DEFAULT_BANK, public_url=live_server.url
        )
        test_id, qtype_id = test.id, test.qualification_type_id
    worker = WorkerClient(live_server.url, "finder")

    listing = worker.get("/qualifications", params={"q": "Findable"})
    row = soup(listing).select_one(f'tr[data-qualification-type-id="{qtype_id}"]')
    assert row is not None
    assert row.select_one(f'a[href="/qualify/{test_id}"]') is not None

    page = worker.get(f"/qualifications/{qtype_id}")
    html = soup(page)
    link = html.select_one("#take-test")
    assert link is not None and link["href"] == f"/qualify/{test_id}"
    assert "Request this qualification" not in page.text
    assert f"{live_server.url}/qualify/{test_id}" in page.text  # the description names it too

    # A request posted anyway (an old page, a crafted form) goes to the test and waits for nobody.
    sent = worker.http.post(
        f"{worker.base}/qualifications/{qtype_id}/request",
        data={"csrf_token": csrf_of(page)},
        allow_redirects=False,
    )
    assert sent.status_code == 302 and sent.headers["Location"].endswith(f"/qualify/{test_id}")
    with session_scope(market_sessions) as session:
        pending = session.scalar(
            select(func.count())
            .select_from(QualificationRequest)
            .where(QualificationRequest.qualification_type_id == qtype_id)
        )
    assert pending == 0

    intro = soup(worker.get(f"/qualify/{test_id}"))
    parts = [row.select("td")[0].get_text() for row in intro.select("#test-sections tbody tr")]
    assert parts == ["Spelling", "Grammar", "Judging descriptions"]


def test_the_intro_names_the_sections_the_test_holds(
    tmp_path: Path, live_server, market, requester_sessions
) -> None:
    data = small_bank_data()
    data["sections"][0]["title"] = "Word forms"
    with session_scope(requester_sessions) as session:
        test_id = publish_test(session, market, name="Two-part test", bank_path=write_bank(tmp_path, data)).id
    worker = WorkerClient(live_server.url, "reader")
    intro = worker.get(f"/qualify/{test_id}")
    rows = [[td.get_text() for td in tr.select("td")] for tr in soup(intro).select("#test-sections tbody tr")]
    assert rows == [["Word forms", "2", "1"], ["Grammar", "2", "1"]]
    text = soup(intro).get_text()
    assert "4 questions in 2 parts" in text and "at least 50" in text
    assert "picture" not in text and "three parts" not in text
