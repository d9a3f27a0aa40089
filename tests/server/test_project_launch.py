"""Launching an MTurk project (a layout over a CSV) from the dashboard: checked, previewed, launched once.

A layout naming a column the CSV lacks, a CSV that is not UTF-8 and a bad
reward each get a 400 that names the file, line and field, and keeps what
was typed; a QA reviewer gets 403; another user's project is a 404; the
preview never carries a gold row's answer; a launch posted twice publishes
one HIT per row, once, and the HITs are on the marketplace as boto3 sees them.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from bs4 import BeautifulSoup

from hits.db import session_scope
from hits.requester.tables.campaigns import Campaign, ReviewAction
from tests.conftest import new_requester
from tests.server.test_launch_upload import Launcher, launching_server, sign_in, text_of

LAYOUT = b"""<p>Is this sentence about an animal? <strong>${sentence}</strong></p>
<label><input type="radio" name="animal" value="yes"> Yes</label>
<label><input type="radio" name="animal" value="no"> No</label>
"""
CSV = (
    b"sentence,Gold.animal\n"
    b"A cat sleeps on the mat.,yes\n"
    b"The bus is late again.,\n"
    b"Rain fell all afternoon.,\n"
    b"A dog barks at the door.,\n"
)


@pytest.fixture
def launcher(settings, live_server, market_sessions) -> Iterator[Launcher]:  # type: ignore[no-untyped-def]
    yield from launching_server(settings, live_server.url, new_requester(market_sessions, "100.00"))


def _form(dash, **fields: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    values = {
        "title": "Animal or not",
        "description": "Say whether a sentence is about an animal.",
        "reward": "0.05",
    }
    return {"csrf_token": dash.token("/dashboard/launch/project"), **values, **fields}


def _post(dash, layout: bytes = LAYOUT, csv: bytes = CSV, **fields: str) -> requests.Response:  # type: ignore[no-untyped-def]
    return dash.http.post(
        dash.base + "/dashboard/launch/project",
        data=_form(dash, **fields),
        files={"layout": ("layout.html", layout, "text/html"), "input_csv": ("animals.csv", csv, "text/csv")},
    )


@pytest.mark.parametrize(
    ("layout", "csv", "fields", "says"),
    [
        (LAYOUT.replace(b"${sentence}", b"${missing}"), CSV, {}, "missing"),
        (LAYOUT, b"sentence\nA caf\xe9 opens.\n", {}, "is not UTF-8"),
        (LAYOUT, CSV, {"reward": "a lot"}, "Reward per assignment"),
        (LAYOUT, CSV, {"assignments": "-2"}, "a positive number"),
    ],
)
def test_a_bad_project_gets_a_clear_400_and_keeps_what_was_typed(  # type: ignore[no-untyped-def]
    launcher, requester_sessions, layout: bytes, csv: bytes, fields: dict[str, str], says: str
) -> None:
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    name = f"bad-{uuid.uuid4().hex[:6]}"
    refused = _post(dash, layout, csv, name=name, **fields)
    assert refused.status_code == 400
    assert says in text_of(refused), text_of(refused)
    page = BeautifulSoup(refused.text, "html.parser")
    assert page.find("input", id="project-name")["value"] == name  # type: ignore[index]
    assert page.find("input", id="project-title")["value"] == "Animal or not"  # type: ignore[index]
    with session_scope(requester_sessions) as session:
        assert session.query(Campaign).filter(Campaign.name == f"batch: {name}").count() == 0


def test_a_qa_reviewer_cannot_upload_and_another_user_cannot_see_a_project(  # type: ignore[no-untyped-def]
    launcher, requester_sessions
) -> None:
    qa = sign_in(launcher.url, requester_sessions, "qa")
    assert qa.get("/dashboard/launch/project").status_code == 403
    owner = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    checked = _post(owner, name=f"mine-{uuid.uuid4().hex[:6]}")
    assert checked.status_code == 200 and "/dashboard/launch/project/" in checked.url
    other = sign_in(launcher.url, requester_sessions, "admin")
    assert other.get(checked.url.removeprefix(launcher.url)).status_code == 404
    assert other.get(checked.url.removeprefix(launcher.url) + "/preview").status_code == 404


def test_a_project_is_checked_previewed_and_launched_once(launcher, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    dash = sign_in(launcher.url, requester_sessions, "requester", launcher.key.access_key_id)
    name = f"animals-{uuid.uuid4().hex[:6]}"
    checked = _post(dash, name=name, assignments="2")
    assert checked.status_code == 200
    text = text_of(checked)
    assert "HITs 4 (one per row), 1 of them gold rows" in text and "Workers per HIT 2" in text
    assert "Launch: publish 4 HITs for $0.48" in text  # 4 x 2 x ($0.05 + 20% fee)
    preview = dash.get(checked.url.removeprefix(launcher.url) + "/preview")
    assert "sandbox" in preview.headers["Content-Security-Policy"]
    assert "The bus is late again." in preview.text  # the first row that is not gold
    assert "A cat sleeps" not in preview.text and "Gold." not in preview.text

    form = BeautifulSoup(checked.text, "html.parser").find("button", id="launch-button").find_parent("form")  # type: ignore[union-attr]
    action = launcher.url + str(form["action"])  # type: ignore[index]
    token = str(form.find("input", attrs={"name": "csrf_token"})["value"])  # type: ignore[index,union-attr]
    with ThreadPoolExecutor(2) as pool:  # a double click
        replies = list(pool.map(lambda _: dash.http.post(action, data={"csrf_token": token}), range(2)))
    assert all(r.status_code == 200 and "/dashboard/campaigns/" in r.url for r in replies)
    with session_scope(requester_sessions) as session:
        (campaign,) = session.query(Campaign).filter(Campaign.name == f"batch: {name}").all()
        launches = session.query(ReviewAction).filter(ReviewAction.campaign_id == campaign.id).count()
    assert launches == 1
    hits = [h for page in launcher.mturk.get_paginator("list_hits").paginate() for h in page["HITs"]]
    assert sum(1 for h in hits if h["Title"] == "Animal or not" and h["MaxAssignments"] == 2) == 4
    again = dash.get(checked.url.removeprefix(launcher.url))
    assert "Launched" in text_of(again)
