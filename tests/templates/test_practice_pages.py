"""Practice pages: a campaign's training items, judged on the server and explained only after an answer."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from bs4 import BeautifulSoup
from PIL import Image
from sqlalchemy import func, select

from hits.db import session_scope
from hits.requester.tables.campaigns import GoldExposure, PublishedHIT, Submission
from tests.helpers import launch_template_campaign, publish_campaign_file
from tests.server.worker_helpers import WorkerClient, accept_framed, frame_src

EXPLANATION = "The sentence names a *purple giraffe*; the picture shows neither colour nor animal."
TRAINING: list[dict[str, Any]] = [
    {
        "id": "practice-giraffe",
        "item": {
            "image": "practice.png",
            "sentence": "A purple giraffe reads a newspaper.",
            "alt": "A street",
        },
        "answer": {"rating": 1},
        "explanation": EXPLANATION,
    },
    {
        "id": "practice-second",
        "item": {"image": "https://example.org/elsewhere.png", "sentence": "An empty street at night."},
        "answer": {"rating": 4},
        "explanation": "All of it is there.",
        "right_answer": "4, fully right",
    },
]


def _publish(folder: Path, live_server, market, requester_sessions, name: str, training: list[Any]) -> str:  # type: ignore[no-untyped-def]
    """A rating campaign with ``training``, published; the id of its first HIT."""
    folder.mkdir(parents=True, exist_ok=True)
    launch_template_campaign(
        folder, market, requester_sessions, live_server.url, "rating", name=f"{name}-setup"
    )
    spec = yaml.safe_load((folder / "campaign.yaml").read_text())
    Image.new("RGB", (40, 30), "teal").save(folder / "media" / "practice.png")
    spec.update(name=name, title=f"Practised {name}", training=training)
    campaign_id = publish_campaign_file(folder, spec, market, requester_sessions, live_server.url)
    with session_scope(requester_sessions) as session:
        hit_id = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        ).first()
    assert hit_id is not None
    return str(hit_id)


def _practice_link(page: str) -> str:
    section = BeautifulSoup(page, "html.parser").find("section", class_="guidance-practice")
    assert section is not None, page[:3000]
    link = section.find("a")
    assert link is not None
    return str(link["href"])


def _form(page: str) -> dict[str, str]:
    form = BeautifulSoup(page, "html.parser").find("form", id="task-form")
    assert form is not None
    return {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", type="hidden")}


def _stored(requester_sessions, params: dict[str, str]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Submissions of the assignment, and the gold exposures recorded for it."""
    with session_scope(requester_sessions) as session:
        mine = Submission.assignment_id == params["assignmentId"]
        submissions = session.scalar(select(func.count()).select_from(Submission).where(mine))
        shown = GoldExposure.assignment_id == params["assignmentId"]
        exposures = session.scalar(select(func.count()).select_from(GoldExposure).where(shown))
    return int(submissions or 0), int(exposures or 0)


@pytest.fixture
def practised(tmp_path: Path, live_server, market, requester_sessions) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Campaign "one" (two training items) with an accepted assignment, and campaign "other" (three)."""
    run = uuid.uuid4().hex[:8]  # the app and its databases outlive one test
    hit = _publish(tmp_path / "one", live_server, market, requester_sessions, f"one-{run}", TRAINING[:2])
    third = {**TRAINING[0], "id": "p3", "item": {"image": "x.png", "sentence": "A red kite."}}
    other_hit = _publish(
        tmp_path / "other", live_server, market, requester_sessions, f"other-{run}", [*TRAINING, third]
    )
    _, preview = _previewed(live_server.url, hit, f"looking-{run}")
    _, params = accept_framed(live_server.url, hit, f"practising-{run}")
    _, other_params = accept_framed(live_server.url, other_hit, f"other-{run}")
    return {"url": live_server.url, "params": params, "other": other_params, "preview": preview}


def _previewed(base: str, hit_id: str, name: str) -> tuple[WorkerClient, str]:
    """A new worker looks at ``hit_id`` without accepting it: the worker, and the preview frame's URL."""
    worker = WorkerClient(base, name)
    return worker, frame_src(worker.get(f"/hits/{hit_id}"))


def test_a_worker_may_practise_from_a_preview_before_accepting(practised) -> None:  # type: ignore[no-untyped-def]
    base = practised["url"]
    http = requests.Session()
    hit_page = http.get(practised["preview"])  # the frame's URL is absolute
    assert hit_page.status_code == 200 and "This is a preview" in hit_page.text
    link = _practice_link(hit_page.text)
    assert "hitforgePreview=" in link and "ASSIGNMENT_ID_NOT_AVAILABLE" in link
    first = http.get(base + link)
    assert first.status_code == 200 and "Check my answer" in first.text  # answerable, unlike the preview
    fields = _form(first.text)
    assert fields["hitforgePreview"] and fields["assignmentId"] == "ASSIGNMENT_ID_NOT_AVAILABLE"
    judged = http.post(base + "/tasks/practice/0", data={**fields, "rating-0": "1"})
    assert judged.status_code == 200 and "Right: your answer counts as correct." in judged.text
    without = {k: v for k, v in fields.items() if k != "hitforgePreview"}
    assert http.post(base + "/tasks/practice/0", data={**without, "rating-0": "1"}).status_code == 403


def test_the_right_answer_reaches_the_page_only_after_an_answer(practised, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    base, params = practised["url"], practised["params"]
    http = requests.Session()
    hit_page = http.get(base + "/tasks/hit", params=params)
    assert hit_page.status_code == 200
    link = _practice_link(hit_page.text)
    before = _stored(requester_sessions, params)
    assert "2 practice items" in BeautifulSoup(hit_page.text, "html.parser").get_text(" ")

    first = http.get(base + link)
    assert first.status_code == 200
    assert "Practice item 1 of 2" in first.text
    assert "neither colour nor animal" not in first.text and "right answer:" not in first.text.lower()
    picture = BeautifulSoup(first.text, "html.parser").find("img", alt="A street")
    assert picture is not None and "practice.png" not in str(picture["src"])
    assert http.get(base + str(picture["src"])).status_code == 200
    fields = _form(first.text)
    action = str(BeautifulSoup(first.text, "html.parser").find("form", id="task-form")["action"])  # type: ignore[index]
    assert action.startswith("/tasks/practice/0")

    wrong = http.post(base + action, data={**fields, "rating-0": "3"})
    assert wrong.status_code == 200
    verdict = BeautifulSoup(wrong.text, "html.parser").find("div", class_="practice-feedback")
    assert verdict is not None
    text = " ".join(verdict.get_text(" ").split())
    assert (
        "Not quite" in text
        and "The right answer: 1: Does not describe the image at all." in text
        and "neither colour nor animal" in text
    )
    assert verdict.find("em") is not None  # the explanation's Markdown, rendered
    assert 'value="3"' in wrong.text and "checked" in wrong.text  # the worker's answer stays
    assert "Next practice item" in wrong.text

    right = http.post(base + action, data={**fields, "rating-0": "1"})
    assert right.status_code == 200 and "Right: your answer counts as correct." in right.text

    second = http.post(base + "/tasks/practice/1", data={**fields, "rating-0": "4"})
    assert second.status_code == 200 and "4, fully right" in second.text
    assert "Practice done: go to the task" in second.text
    back = BeautifulSoup(second.text, "html.parser").find("a", string="Practice done: go to the task")
    assert back is not None and http.get(base + str(back["href"])).status_code == 200

    # Judged, never stored: no submission, no more gold shown than the HIT page's own.
    assert _stored(requester_sessions, params) == before


def test_a_malformed_answer_is_a_clear_400(practised) -> None:  # type: ignore[no-untyped-def]
    base, params = practised["url"], practised["params"]
    http = requests.Session()
    first = http.get(base + "/tasks/practice/0", params=params)
    fields = _form(first.text)
    for answer in ({}, {"rating-0": "seven"}, {"rating-0": "9", "rating-5": "1"}):
        refused = http.post(base + "/tasks/practice/0", data={**fields, **answer})
        assert refused.status_code == 400, (answer, refused.status_code)
        summary = BeautifulSoup(refused.text, "html.parser").find("div", class_="error-summary")
        assert summary is not None and "rating from 1 to 4" in summary.get_text()
        assert "neither colour nor animal" not in refused.text


def test_another_campaigns_training_index_and_forged_parameters_are_refused(practised) -> None:  # type: ignore[no-untyped-def]
    base, params, other = practised["url"], practised["params"], practised["other"]
    http = requests.Session()
    # Campaign "other" has a third item; through campaign "one"'s HIT there is none.
    assert http.get(base + "/tasks/practice/2", params=other).status_code == 200
    assert http.get(base + "/tasks/practice/2", params=params).status_code == 404
    fields = _form(http.get(base + "/tasks/practice/0", params=params).text)
    assert http.post(base + "/tasks/practice/2", data={**fields, "rating-0": "1"}).status_code == 404
    forged = [
        {**params, "workerId": other["workerId"]},
        {**params, "hitId": other["hitId"]},
        {**params, "turkSubmitTo": other["turkSubmitTo"]},
        {**params, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"},  # a preview without its capability
        {k: v for k, v in params.items() if k != "hitId"},
    ]
    for made in forged:
        assert http.get(base + "/tasks/practice/0", params=made).status_code == 403, made
        posted = http.post(
            base + "/tasks/practice/0", data={"csrf_token": fields["csrf_token"], **made, "rating-0": "1"}
        )
        assert posted.status_code == 403 and "neither colour nor animal" not in posted.text, made
