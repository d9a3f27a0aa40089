"""A campaign HIT's page works from the moment the HIT exists, before the requester side records its id.

Publishing creates each HIT through the API and records its id just after;
a worker polling the HIT list can accept it in between. These tests stop in
that instant (the HITs created, no id recorded) and use the pages as workers
would: preview, work page, a submit with a mistake, a submit; a made-up
token and another HIT's assignment carrying this HIT's token get nothing.
"""

from __future__ import annotations

import re
from typing import Any

import requests
import yaml
from bs4 import Tag
from sqlalchemy import select

from demo.data import write_rating_demo
from hits.db import session_scope
from hits.requester.campaigns.service import (
    PendingHIT,
    create_campaign,
    create_campaign_hit,
    plan_publishing,
    record_campaign_hit,
)
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import PublishedHIT, Submission
from tests.helpers import hidden_fields, rating_campaign_spec, submit_and_relay, with_page_token
from tests.server.test_hit_page_access import pages_elsewhere  # noqa: F401 - a fixture
from tests.server.worker_helpers import WorkerClient, accept_framed, frame_src, soup
from tests.workflows.helpers import accept_round

#: Every campaign HIT's page URL: the page and a random token, nothing else (gold or not).
QUESTION_URL = re.compile(r"<ExternalURL>(?P<page>[^<?]+)\?page=(?P<token>[0-9a-f]{32})</ExternalURL>")


def _created_not_recorded(
    folder, name: str, market, sessions, hit_page: str
) -> tuple[int, list[PendingHIT], list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    """A two-HIT rating campaign whose HITs are on the marketplace, their ids not recorded yet."""
    write_rating_demo(folder, items=4, gold=4, seed=len(name))
    spec = rating_campaign_spec(name, assignments_per_hit=1, items_per_hit=2, gold_per_hit=1)
    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with session_scope(sessions) as session:
        campaign_id = create_campaign(session, load_campaign_file(folder / "campaign.yaml")).id
    plan = plan_publishing(sessions, market, campaign_id)
    hits = [create_campaign_hit(market, plan.spec, plan.requirements, p, hit_page)[0] for p in plan.pending]
    with session_scope(sessions) as session:
        rows = select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        assert session.scalars(rows).all() == [None, None]
    return campaign_id, plan.pending, hits


def test_a_campaign_hit_page_opened_before_its_id_is_recorded_is_served_and_keeps_the_answer(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit_page = live_server.url + "/tasks/hit"
    campaign_id, pending, (first, second) = _created_not_recorded(
        tmp_path, "instant-c", market, requester_sessions, hit_page
    )
    # Each HIT's URL is the page and a random token of its own; nothing else tells the HITs apart.
    urls = [QUESTION_URL.search(market.get_hit(h["HITId"])["Question"]) for h in (first, second)]
    assert all(u is not None and u["page"] == hit_page for u in urls)
    tokens = [u["token"] for u in urls if u is not None]
    assert tokens == [p.page_token for p in pending] and tokens[0] != tokens[1]

    worker = WorkerClient(live_server.url, "instant-c-worker")
    preview = worker.get(frame_src(worker.get(f"/hits/{first['HITId']}")))
    assert preview.status_code == 200, preview.text
    _work, frame = accept_round(worker, first["HITId"])
    page = worker.get(frame)
    assert page.status_code == 200, page.text
    form = soup(page).find("form", id="task-form")
    assert isinstance(form, Tag)
    fields = hidden_fields(form)
    assert fields["page"] == tokens[0]

    # Someone else's HIT cannot borrow the token; a made-up token finds nothing.
    other = WorkerClient(live_server.url, "instant-c-other")
    _taken, own = accept_round(other, second["HITId"])
    assert other.get(own).status_code == 200
    assert other.get(with_page_token(own, tokens[0])).status_code == 404
    assert other.get(with_page_token(own, "0" * 32)).status_code == 404
    borrowed = {**hidden_fields(soup(other.get(own)).find("form", id="task-form")), "page": tokens[0]}
    borrowed.update({f"rating-{i}": "2" for i in range(3)})
    assert other.http.post(requests.compat.urljoin(own, "/tasks/submit"), data=borrowed).status_code == 404

    # A submit with a mistake comes back with what was entered; the whole one is stored and relayed.
    submit = requests.compat.urljoin(page.url, str(form["action"]))
    wrong = worker.http.post(submit, data={**fields, "rating-0": "4"})
    assert wrong.status_code == 422, wrong.text
    kept = soup(wrong).find("input", attrs={"name": "rating-0", "value": "4"})
    assert isinstance(kept, Tag) and kept.has_attr("checked")
    relayed = submit_and_relay(worker, page, form, {**fields, **{f"rating-{i}": "4" for i in range(3)}})
    with session_scope(requester_sessions) as session:
        stored = session.scalar(select(Submission).where(Submission.worker_id == worker.worker_id))
        assert stored is not None and stored.published_hit_id == pending[0].published_id

    # Once recorded, the HIT id finds the row as before; the token still names only that HIT.
    for p, hit in zip(pending, (first, second), strict=True):
        record_campaign_hit(requester_sessions, campaign_id, p.published_id, hit)
    assert other.get(own).status_code == 200
    assert other.get(with_page_token(own, tokens[0])).status_code == 200  # its own HIT id decides
    assert market.get_assignment(relayed["assignmentId"])["AssignmentStatus"] == "Submitted"


def test_with_the_marketplace_elsewhere_an_unrecorded_campaign_hit_page_is_vouched_for_by_get_hit(
    tmp_path,
    pages_elsewhere,  # noqa: F811 - the fixture imported above
    requester_sessions,
) -> None:
    market_url, pages_url, market = pages_elsewhere
    _campaign_id, pending, hits = _created_not_recorded(
        tmp_path, "far-c", market, requester_sessions, pages_url + "/tasks/hit"
    )
    _alice, mine = accept_framed(market_url, hits[0]["HITId"], "far-c-alice")
    _bob, theirs = accept_framed(market_url, hits[1]["HITId"], "far-c-bob")
    assert mine["page"] == pending[0].page_token
    assert requests.get(pages_url + "/tasks/hit", params=mine, timeout=10).status_code == 200
    # GetHIT says the other HIT was made for another row: this HIT's token does not open it.
    borrowed = {**theirs, "page": mine["page"]}
    assert requests.get(pages_url + "/tasks/hit", params=borrowed, timeout=10).status_code == 404
    assert (
        requests.get(pages_url + "/tasks/hit", params={**mine, "page": "f" * 32}, timeout=10).status_code
        == 404
    )
