"""The worker site's guarantees: ownership, CSRF, validation that loses nothing, idempotent submits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import requests
from bs4 import BeautifulSoup
from sqlalchemy import func, select

from demo.crowd import PROFILES, Bot
from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.wire.documents import QFA_NS, xml_to_answers
from tests.helpers import hidden_fields, hit_params, launch_demo_campaign
from tests.server.worker_helpers import WorkerClient, soup


def hit_of(requester_sessions, campaign_id: int) -> str:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    assert hit_id is not None
    return hit_id


def accept(bot: Bot, base: str, hit_id: str) -> tuple[str, str]:
    """Accept ``hit_id`` from the listing; return (assignment id, framed task URL)."""
    listing = BeautifulSoup(bot.http.get(base + "/").text, "html.parser")
    form = listing.find("tr", attrs={"data-hit-id": hit_id}).find("form")  # type: ignore[union-attr]
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[union-attr,index]
    work = bot.http.post(base + form["action"], data={"csrf_token": token})  # type: ignore[index,operator]
    frame = BeautifulSoup(work.text, "html.parser").find("iframe", id="hit-frame")
    src = str(frame["src"])  # type: ignore[index]
    assignment_id = re.search(r"assignmentId=(\w+)", src).group(1)  # type: ignore[union-attr]
    return assignment_id, src


@dataclass
class AcceptedHIT:
    """A diligent bot, signed in, holding the only HIT of a rating campaign of its own."""

    bot: Bot
    campaign_id: int
    hit_id: str
    assignment_id: str
    #: The framed HIT page's URL, as the worker site gives it.
    src: str


def accept_rating_hit(tmp_path, market, requester_sessions, base: str, name: str, worker: str) -> AcceptedHIT:  # type: ignore[no-untyped-def]
    """Launch a one-HIT rating campaign called ``name``; the bot ``worker`` signs in and accepts its HIT."""
    campaign_id, truth = launch_demo_campaign(tmp_path, market, requester_sessions, base, hits=1, name=name)
    hit_id = hit_of(requester_sessions, campaign_id)
    bot = Bot(base, worker, PROFILES["diligent"], truth)
    bot.sign_in()
    assignment_id, src = accept(bot, base, hit_id)
    return AcceptedHIT(bot, campaign_id, hit_id, assignment_id, src)


def test_forms_without_csrf_token_are_refused(live_server) -> None:
    response = requests.post(live_server.url + "/signup", data={"username": "x", "password": "longenough"})
    assert response.status_code == 400


def test_a_worker_cannot_see_or_submit_another_workers_assignment(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="own-1"
    )
    alice = Bot(live_server.url, "alice-own", PROFILES["diligent"], truth)
    mallory = Bot(live_server.url, "mallory-own", PROFILES["diligent"], truth)
    alice.sign_in()
    mallory.sign_in()
    assignment_id, _ = accept(alice, live_server.url, hit_of(requester_sessions, campaign_id))
    assert mallory.http.get(f"{live_server.url}/work/{assignment_id}").status_code == 404
    stolen = mallory.http.post(
        f"{live_server.url}/mturk/externalSubmit", data={"assignmentId": assignment_id, "rating-0": "4"}
    )
    assert stolen.status_code == 404
    anonymous = requests.post(f"{live_server.url}/mturk/externalSubmit", data={"assignmentId": assignment_id})
    assert anonymous.status_code == 403
    assert alice.http.get(f"{live_server.url}/work/{assignment_id}").status_code == 200


def test_invalid_answers_are_refused_and_the_input_is_kept(
    tmp_path, live_server, market, requester_sessions
) -> None:
    hit = accept_rating_hit(tmp_path, market, requester_sessions, live_server.url, "keep-1", "keeper")
    bot, src = hit.bot, hit.src
    page = BeautifulSoup(bot.http.get(src).text, "html.parser")
    form = page.find("form", id="task-form")
    data = hidden_fields(form)
    data["rating-0"] = "3"  # the other ratings are missing
    data["rating-1"] = "7"
    response = bot.http.post(live_server.url + "/tasks/submit", data=data)
    assert response.status_code == 422
    again = BeautifulSoup(response.text, "html.parser")
    assert again.find(attrs={"role": "alert"}) is not None
    assert "Pair 2: '7' is not a rating from 1 to 4." in again.get_text()
    assert again.find("input", attrs={"name": "rating-0", "value": "3"}).has_attr("checked")  # type: ignore[union-attr]


def test_submitting_twice_stores_the_answer_once(tmp_path, live_server, market, requester_sessions) -> None:
    hit = accept_rating_hit(tmp_path, market, requester_sessions, live_server.url, "twice-1", "twice")
    bot, src, assignment_id = hit.bot, hit.src, hit.assignment_id
    campaign_id, hit_id = hit.campaign_id, hit.hit_id
    page = BeautifulSoup(bot.http.get(src).text, "html.parser")
    form = page.find("form", id="task-form")
    data = hidden_fields(form)
    data.update({f"rating-{i}": "2" for i in range(3)})
    first = bot.http.post(live_server.url + "/tasks/submit", data=data)
    data.update({f"rating-{i}": "4" for i in range(3)})
    second = bot.http.post(live_server.url + "/tasks/submit", data=data)
    assert first.status_code == second.status_code == 200
    handoff = {"assignmentId": assignment_id, **{f"rating-{i}": "2" for i in range(3)}}
    assert bot.http.post(live_server.url + "/mturk/externalSubmit", data=handoff).status_code == 200
    handoff.update({f"rating-{i}": "4" for i in range(3)})
    assert bot.http.post(live_server.url + "/mturk/externalSubmit", data=handoff).status_code == 200
    with session_scope(requester_sessions) as session:
        count = session.scalar(
            select(func.count()).select_from(Submission).where(Submission.assignment_id == assignment_id)
        )
        stored = session.scalar(select(Submission).where(Submission.assignment_id == assignment_id))
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    assert count == 1 and stored is not None and stored.answers == {"answers": [2, 2, 2]}
    (assignment,) = market.assignments_for_hit(hit_id, ["Submitted"])
    assert (
        "<FreeText>2</FreeText>" in assignment["Answer"]
        and "<FreeText>4</FreeText>" not in assignment["Answer"]
    )


def test_output_is_escaped(live_server) -> None:
    bot = Bot(live_server.url, "<script>alert(1)</script>", PROFILES["diligent"], {})
    bot.sign_in()
    html = bot.http.get(live_server.url + "/").text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def accept_external(mturk, base: str, name: str) -> tuple[WorkerClient, str, str, str]:  # type: ignore[no-untyped-def]
    """A new worker accepts a new ExternalQuestion HIT: (worker, HIT id, assignment id, turkSubmitTo)."""
    hit_id = mturk.create_hit(**hit_params("https://example.org/task", MaxAssignments=1))["HIT"]["HITId"]
    worker = WorkerClient(base, name)
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    src = str(soup(work).find("iframe", id="hit-frame")["src"])  # type: ignore[index]
    params = parse_qs(urlsplit(src).query)
    return worker, hit_id, params["assignmentId"][0], params["turkSubmitTo"][0]


def test_turk_submit_to_carries_the_right_to_submit_one_assignment_only(live_server, mturk) -> None:
    _, alice_hit, alice_assignment, alice_submit_to = accept_external(mturk, live_server.url, "alice-cap")
    _, bob_hit, bob_assignment, bob_submit_to = accept_external(mturk, live_server.url, "bob-cap")
    assert alice_submit_to.startswith(live_server.url + "/s/") and alice_submit_to != bob_submit_to
    forged = alice_submit_to[:-4] + ("AAAA" if not alice_submit_to.endswith("AAAA") else "BBBB")
    # No cookies at all: the capability in the path is the only credential.
    refused = [
        (bob_submit_to, alice_assignment),  # Bob's capability, Alice's assignment
        (alice_submit_to, bob_assignment),  # and the other way round
        (forged, alice_assignment),
        (live_server.url + "/s/x", alice_assignment),
        (alice_submit_to, "ASSIGNMENT_ID_NOT_AVAILABLE"),
        (alice_submit_to, "no-such-assignment"),
    ]
    for submit_to, assignment_id in refused:
        response = requests.post(
            submit_to + "/mturk/externalSubmit", data={"assignmentId": assignment_id, "caption": "stolen"}
        )
        assert response.status_code == 403, (submit_to, assignment_id)
    for hit_id in (alice_hit, bob_hit):
        assert mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"] == []
    done = requests.post(
        alice_submit_to + "/mturk/externalSubmit",
        data={"assignmentId": alice_assignment, "caption": "A cat", "tags": ["cat", "sofa"]},
    )
    assert done.status_code == 200 and "your work was submitted" in done.text
    # The capability of a submitted assignment is spent: refused, and the first answer stands.
    again = requests.post(
        alice_submit_to + "/mturk/externalSubmit", data={"assignmentId": alice_assignment, "caption": "A dog"}
    )
    assert again.status_code == 409 and "already submitted" in again.text
    (stored,) = mturk.list_assignments_for_hit(HITId=alice_hit)["Assignments"]
    assert stored["AssignmentId"] == alice_assignment
    answer = stored["Answer"]
    assert "<FreeText>A cat</FreeText>" in answer and "A dog" not in answer and "stolen" not in answer
    for tag in ("cat", "sofa"):  # a repeated field is one Answer a value, as MTurk stores it
        assert f"<QuestionIdentifier>tags</QuestionIdentifier><FreeText>{tag}</FreeText></Answer>" in answer
    assert mturk.list_assignments_for_hit(HITId=bob_hit)["Assignments"] == []


def test_an_answer_with_characters_xml_cannot_hold_is_stored_readable(live_server, mturk) -> None:
    """A vertical tab (pasted from a word processor) or a backspace in an answer made the stored
    QuestionFormAnswers unreadable XML: every sync, review and export reading it failed. Each
    such character is stored as U+FFFD; the rest of the answer is kept."""
    _, hit_id, assignment_id, submit_to = accept_external(mturk, live_server.url, "vt-paster")
    done = requests.post(
        submit_to + "/mturk/externalSubmit",
        data={"assignmentId": assignment_id, "caption": "A cat\x0bon a mat\x08.", "note\x1f": "fine"},
    )
    assert done.status_code == 200, done.text
    (stored,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert xml_to_answers(stored["Answer"]) == {"caption": "A cat\ufffdon a mat\ufffd.", "note\ufffd": "fine"}


def test_an_answer_stored_with_such_characters_before_is_still_read() -> None:
    raw = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<QuestionFormAnswers xmlns="'
        + QFA_NS
        + '"><Answer><QuestionIdentifier>caption</QuestionIdentifier><FreeText>a\x0bb</FreeText></Answer>'
        "</QuestionFormAnswers>"
    )
    assert xml_to_answers(raw) == {"caption": "a\ufffdb"}
