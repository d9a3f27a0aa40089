"""A round's HIT page works from the moment its HIT exists, before the requester side records the HIT's id."""

from __future__ import annotations

import requests
from bs4 import Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.workflows.engine import advance
from hits.requester.workflows.publish import create_round_hit, pending_rounds, record_round_hit
from tests.helpers import submit_and_relay, with_page_token
from tests.server.test_hit_page_access import pages_elsewhere  # noqa: F401 - a fixture
from tests.server.worker_helpers import WorkerClient, accept_framed, frame_src, soup
from tests.workflows.helpers import accept_round, launch_refine_workflow


def test_a_round_page_opened_before_its_hit_id_is_recorded_is_served_and_takes_the_answer(
    tmp_path, live_server, market, requester_sessions
) -> None:
    workflow_id = launch_refine_workflow(
        tmp_path, "refine-instant", market, requester_sessions, pictures=2, complete=2
    )
    with session_scope(requester_sessions) as session:
        assert len(advance(session, workflow_id).new_rounds) == 2  # texts from the items file
        pending = pending_rounds(session, workflow_id)
    hit_page = live_server.url + "/tasks/hit"
    # The HITs exist on the marketplace; their ids are not recorded yet (the instant in between).
    first, second = (create_round_hit(requester_sessions, market, p, hit_page) for p in pending)
    tokens = [p.page_token for p in pending]
    assert all(tokens) and tokens[0] != tokens[1]
    with session_scope(requester_sessions) as session:
        rows = select(PublishedHIT.mturk_hit_id).where(PublishedHIT.id.in_([p.published_id for p in pending]))
        assert session.scalars(rows).all() == [None, None]

    worker = WorkerClient(live_server.url, "instant")
    preview = worker.get(f"/hits/{first['HITId']}")
    assert worker.get(frame_src(preview)).status_code == 200  # the preview's page
    _work, frame = accept_round(worker, first["HITId"])
    page = worker.get(frame)
    assert page.status_code == 200, page.text
    form = soup(page).find("form", id="task-form")
    assert isinstance(form, Tag)
    box = form.find("textarea")
    assert isinstance(box, Tag) and box.get_text().strip()  # the round's text is there

    # Someone else's HIT cannot borrow the token: their own assignment with this round's token is refused.
    other = WorkerClient(live_server.url, "instant-other")
    _taken, own = accept_round(other, second["HITId"])
    assert other.get(own).status_code == 200
    assert other.get(with_page_token(own, str(tokens[0]))).status_code == 404
    assert other.get(with_page_token(own, "0" * 32)).status_code == 404

    # Submitted while the id is still unrecorded: stored for this round's row, and relayed to the marketplace.
    fields = {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input") if i.get("name")}
    fields["text-0"] = box.get_text() + " The shapes do not touch each other."
    relayed = submit_and_relay(worker, page, form, fields)
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.worker_id == worker.worker_id))
        assert stored is not None and stored.published_hit_id == pending[0].published_id

    # Once recorded, the HIT id finds the row as before; the token still names only that HIT.
    for p, hit in zip(pending, (first, second), strict=True):
        record_round_hit(requester_sessions, p, hit, market.access_key_id)
    assert other.get(own).status_code == 200
    assert other.get(with_page_token(own, str(tokens[0]))).status_code == 200  # its own HIT id decides
    assert market.get_assignment(relayed["assignmentId"])["AssignmentStatus"] == "Submitted"


def test_with_the_marketplace_elsewhere_an_unrecorded_round_page_is_vouched_for_by_get_hit(
    tmp_path,
    pages_elsewhere,  # noqa: F811 - the fixture imported above
    requester_sessions,
) -> None:
    market_url, pages_url, market = pages_elsewhere
    workflow_id = launch_refine_workflow(tmp_path, "refine-far", market, requester_sessions, complete=2)
    with session_scope(requester_sessions) as session:
        advance(session, workflow_id)
        pending = pending_rounds(session, workflow_id)[:2]
    hits = [create_round_hit(requester_sessions, market, p, pages_url + "/tasks/hit") for p in pending]
    _alice, mine = accept_framed(market_url, hits[0]["HITId"], "far-alice")
    _bob, theirs = accept_framed(market_url, hits[1]["HITId"], "far-bob")
    assert mine["page"] == pending[0].page_token
    assert requests.get(pages_url + "/tasks/hit", params=mine, timeout=10).status_code == 200
    # GetHIT says the other HIT was made for another row: this round's token does not open it.
    borrowed = {**theirs, "page": mine["page"]}
    assert requests.get(pages_url + "/tasks/hit", params=borrowed, timeout=10).status_code == 404
