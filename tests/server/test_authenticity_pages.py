"""The typing record on every kind of HIT page, and on its way to the requester side (both backends).

HTMLQuestion pages (MTurk's form, a layout, crowd elements) get the script
appended by the worker site; campaign pages carry it; the marketplace keeps the
record beside the answer, which stays what MTurk would store (an oversized one
dropped); the campaign page stores a readable one and relays it; the sync
stores it apart from the answers.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import requests
from bs4 import Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.answers import counted_submissions
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.wire.authenticity import API_MEMBER, FIELD, MAX_FIELD_CHARS
from hits.wire.documents import xml_to_answers
from tests.helpers import hidden_fields, launch_template_campaign, submit_and_relay
from tests.quality.test_followups import review
from tests.server.worker_helpers import (
    MTURK_HTML,
    WorkerClient,
    accept_framed,
    create_hit,
    frame_src,
    html_question,
    soup,
)

RECORD = json.dumps(
    {"v": 1, "chars": 120, "keys": 0, "pastes": 3, "pasted": 120, "blurs": 1, "first_ms": 900}
)
CROWD_PAGE = """<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<crowd-form><crowd-text-area name="story" label="Your story"></crowd-text-area></crowd-form>"""


def _frame(base: str, html: str, mturk, name: str) -> tuple[WorkerClient, dict[str, str], requests.Response]:  # type: ignore[no-untyped-def]
    hit_id = create_hit(mturk, html_question(html))
    worker, params = accept_framed(base, hit_id, name)
    page = worker.get(f"/hits/{hit_id}/html", params=params)
    assert page.status_code == 200, page.text
    return worker, params, page


def _script_last(page: requests.Response) -> None:
    """The record's script comes after everything the requester wrote, which is left as it was."""
    tail = page.text.rstrip()
    assert tail.endswith('/static/authenticity.js"></script>'), tail[-200:]
    assert page.text.count("authenticity.js") == 1


def test_html_question_and_crowd_element_pages_get_the_script_after_the_page(live_server, mturk) -> None:
    _, _, form_page = _frame(live_server.url, MTURK_HTML, mturk, "auth-form")
    _script_last(form_page)
    assert '<input id="caption" name="caption">' in form_page.text  # the requester's markup untouched
    _, _, crowd_page = _frame(live_server.url, CROWD_PAGE, mturk, "auth-crowd")
    _script_last(crowd_page)
    assert '<crowd-text-area name="story" label="Your story"></crowd-text-area>' in crowd_page.text
    script = requests.get(live_server.url + "/static/authenticity.js", timeout=30)
    assert script.status_code == 200 and "hitforgeAuthenticity" in script.text
    assert "javascript" in script.headers["Content-Type"]


def test_the_marketplace_keeps_the_record_beside_the_answer_and_drops_an_oversized_one(
    live_server, mturk, market
) -> None:
    for record, kept in ((RECORD, True), ("x" * (MAX_FIELD_CHARS + 1), False)):
        worker, params, _ = _frame(live_server.url, MTURK_HTML, mturk, "auth-market")
        posted = worker.http.post(
            live_server.url + "/mturk/externalSubmit",
            data={
                "assignmentId": params["assignmentId"],
                "hitforgeToken": params["hitforgeToken"],
                "caption": "a cat",
                FIELD: record,
            },
        )
        assert posted.status_code == 200, posted.text
        # The answer stays exactly what MTurk would store; boto3 shows no other member.
        plain = mturk.get_assignment(AssignmentId=params["assignmentId"])["Assignment"]
        assert xml_to_answers(plain["Answer"]) == {"caption": "a cat"}
        assert API_MEMBER not in plain
        # hitforge's facade reads the record beside it, from the reply boto3 parsed.
        got = market.get_assignment(params["assignmentId"])
        assert got.get(API_MEMBER) == (record if kept else None)
        listed = list(market.assignments_for_hit(got["HITId"], ["Submitted"]))
        assert [a.get(API_MEMBER) for a in listed] == [record if kept else None]


def _campaign_page(worker: WorkerClient, hit_id: str) -> tuple[requests.Response, Tag]:
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    page = worker.get(frame_src(work))
    assert page.status_code == 200, page.text
    form = soup(page).find("form", id="task-form")
    assert isinstance(form, Tag)
    return page, form


def test_campaign_pages_store_and_relay_a_readable_record_and_the_sync_keeps_it_out_of_the_answers(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "write", hits=2, name="auth-pages"
    )
    sentences = {
        "sentence-0": "A red circle sits beside a blue square today.",
        "sentence-1": "Three green lines cross over a yellow field.",
        "sentence-2": "A small black star hangs above two grey dots.",
    }
    records = {
        "readable": (hit_ids[0], RECORD),
        "forged": (hit_ids[0], '{"v": 1, "keys": "lots", "chars": -4, "pasted": 1e300}'),
        "huge": (hit_ids[1], "9" * 100_000),
    }
    seen: dict[str, str] = {}
    for label, (hit_id, record) in records.items():
        worker = WorkerClient(live_server.url, f"auth-{label}")
        page, form = _campaign_page(worker, hit_id)
        assert soup(page).find("script", src="/static/authenticity.js") is not None
        relayed = submit_and_relay(worker, page, form, {**hidden_fields(form), **sentences, FIELD: record})
        # Relayed only when readable: the marketplace gets nothing the requester could not use.
        assert (relayed.get(FIELD) == record) if label == "readable" else FIELD not in relayed
        seen[label] = worker.worker_id
    with session_scope(requester_sessions) as session:
        stored = {s.worker_id: s.authenticity for s in session.scalars(select(Submission))}
    assert stored[seen["readable"]] == {
        "chars": 120,
        "keys": 0,
        "pastes": 3,
        "pasted": 120,
        "blurs": 1,
        "first_ms": 900,
    }
    assert stored[seen["forged"]] is None  # no count left standing: no record at all
    assert stored[seen["huge"]] is None

    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        synced = {
            s.worker_id: s
            for s in session.scalars(
                select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
            )
        }
        assert len(synced) == 3 and all(s.synced for s in synced.values())
        # The record is never an answer (templates, gold, exports and the answers frame see none).
        assert all(s.answers == {"answers": list(sentences.values())} for s in synced.values())
        assert synced[seen["readable"]].authenticity == stored[seen["readable"]]
        assert synced[seen["forged"]].authenticity is None
        # Mostly pasted: held for a person, out of the results until approved; never rejected.
        assert synced[seen["readable"]].decision == "held"
        # The others answered the same item alike: agreement, not a copy; nothing here is rejected.
        assert "reject" not in {s.decision for s in synced.values()}
        counted = {row.worker_id for row in counted_submissions(session, campaign_id)}
        assert seen["readable"] not in counted


def test_a_preview_of_a_campaign_page_carries_no_script(
    tmp_path, live_server, market, requester_sessions
) -> None:
    _, _, (hit_id,) = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "write", name="auth-preview"
    )
    worker = WorkerClient(live_server.url, "auth-preview")
    preview = worker.get(frame_src(worker.get(f"/hits/{hit_id}")))
    assert preview.status_code == 200
    assert "authenticity.js" not in preview.text
    assert parse_qs(urlsplit(preview.url).query)["assignmentId"] == ["ASSIGNMENT_ID_NOT_AVAILABLE"]
