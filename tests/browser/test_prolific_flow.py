"""One Prolific participant in Chromium: from the study URL, through their HITs, to the completion URL."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.recruitment import launch_study
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin, serve_standin
from hits.requester.tables.recruiting import Recruitment
from server.requester.recruit_pages import RECRUITER_EXTENSION
from tests.browser.accessibility import assert_accessible_copy
from tests.recruit.test_launch_study import recruiting_campaign

pytestmark = pytest.mark.browser


@pytest.fixture
def standin() -> Iterator[RunningStandin]:
    running = serve_standin(f"tok-{secrets.token_hex(8)}")
    yield running
    running.stop()


def test_a_participant_goes_from_the_study_url_to_the_completion_url(
    tmp_path: Path, page: Any, live_server: Any, market: Any, requester_sessions: Any, standin: RunningStandin
) -> None:
    prolific = ProlificClient(standin.api_url, standin.app.token, backoff=0, sleep=lambda _: None)
    campaign_id = recruiting_campaign(tmp_path, "rc-browser", market, requester_sessions, live_server.url)
    report = launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    assert report is not None
    app = live_server.server.app
    app.extensions[RECRUITER_EXTENSION] = prolific
    try:
        with session_scope(requester_sessions) as session:
            code = session.scalar(
                select(Recruitment.completion_code).where(Recruitment.campaign_id == campaign_id)
            )
        pid = secrets.token_hex(12)
        session_id = standin.app.take_place(report.study_id, pid)
        # What Prolific does: fill the study URL's placeholders and open it.
        study_url = standin.app.state.studies[report.study_id]["external_study_url"]
        opened = (
            study_url.replace("{{%PROLIFIC_PID%}}", pid)
            .replace("{{%STUDY_ID%}}", report.study_id)
            .replace("{{%SESSION_ID%}}", session_id)
        )
        # Prolific's completion page is not reachable from here: answer it locally.
        page.route(
            "https://app.prolific.com/**",
            lambda route: route.fulfill(status=200, content_type="text/html", body="<h1>Prolific</h1>"),
        )
        page.goto(opened)
        assert "Rate how well sentences describe drawings." in page.inner_text("#instructions")
        assert_accessible_copy(page, "a participant's place")
        for number in (1, 2):
            assert f"done {number - 1} of 2" in page.inner_text("#progress")
            page.get_by_role(
                "button", name="Start the first task" if number == 1 else "Start the next task"
            ).click()
            page.wait_for_url("**/work/**")
            frame = page.frame_locator("#hit-frame")
            groups = frame.get_by_role("radiogroup")
            groups.first.wait_for()
            for k in range(groups.count()):
                groups.nth(k).get_by_role("radio").first.check()
            frame.get_by_role("button", name="Submit").click()
            page.locator("#continue-place").click()
            page.wait_for_url(lambda url: "/work/" not in url and "externalSubmit" not in url)
        page.wait_for_url("https://app.prolific.com/**")
        done = urlsplit(page.url)
        assert done.path == "/submissions/complete" and parse_qs(done.query) == {"cc": [code]}
    finally:
        app.extensions.pop(RECRUITER_EXTENSION, None)
