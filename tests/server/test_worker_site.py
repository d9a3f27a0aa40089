"""The worker site's guarantees: ownership, CSRF, validation that loses nothing, idempotent submits."""

from __future__ import annotations

import re

import requests
from bs4 import BeautifulSoup
from sqlalchemy import func, select

from hits.campaigns.models import PublishedHIT, Submission
from hits.crowd import PROFILES, Bot
from hits.db import session_scope
from tests.helpers import launch_demo_campaign


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
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="keep-1"
    )
    bot = Bot(live_server.url, "keeper", PROFILES["diligent"], truth)
    bot.sign_in()
    _, src = accept(bot, live_server.url, hit_of(requester_sessions, campaign_id))
    page = BeautifulSoup(bot.http.get(src).text, "html.parser")
    form = page.find("form", id="task-form")
    data = {i["name"]: i.get("value", "") for i in form.find_all("input", type="hidden")}  # type: ignore[union-attr]
    data["rating-0"] = "3"  # the other ratings are missing
    data["rating-1"] = "7"
    response = bot.http.post(live_server.url + "/tasks/submit", data=data)
    assert response.status_code == 422
    again = BeautifulSoup(response.text, "html.parser")
    assert again.find(attrs={"role": "alert"}) is not None
    assert "Pair 2: '7' is not a rating from 1 to 4." in again.get_text()
    assert again.find("input", attrs={"name": "rating-0", "value": "3"}).has_attr("checked")  # type: ignore[union-attr]


def test_submitting_twice_stores_the_answer_once(tmp_path, live_server, market, requester_sessions) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="twice-1"
    )
    bot = Bot(live_server.url, "twice", PROFILES["diligent"], truth)
    bot.sign_in()
    assignment_id, src = accept(bot, live_server.url, hit_of(requester_sessions, campaign_id))
    page = BeautifulSoup(bot.http.get(src).text, "html.parser")
    form = page.find("form", id="task-form")
    data = {i["name"]: i.get("value", "") for i in form.find_all("input", type="hidden")}  # type: ignore[union-attr]
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
