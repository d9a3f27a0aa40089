"""Participants arriving from Prolific: checked, signed in on their own account, sent back when done."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.models import Worker
from hits.requester.campaigns.recruitment import launch_study
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.tables.recruiting import RecruitAssignment, Recruitment, RecruitPlace
from server.requester.recruit_pages import RECRUITER_EXTENSION
from tests.recruit.test_launch_study import recruiting_campaign


@pytest.fixture
def study(
    tmp_path: Path,
    market: Any,
    requester_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
    prolific: ProlificClient,
    request: pytest.FixtureRequest,
) -> Iterator[Recruitment]:
    """A published recruiting campaign (3 HITs x 2, 2 HITs a participant); the app talks to the stand-in."""
    name = f"rc-entry-{request.node.name[-20:].replace('[', '-').replace(']', '')}"
    campaign_id = recruiting_campaign(tmp_path, name, market, requester_sessions, live_server.url)
    launch_study(requester_sessions, prolific, campaign_id, live_server.url)
    app = live_server.server.app
    app.extensions[RECRUITER_EXTENSION] = prolific
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None
        session.expunge(row)
    yield row
    app.extensions.pop(RECRUITER_EXTENSION, None)


def enter(url: str, browser: requests.Session, **params: str) -> requests.Response:
    return browser.get(f"{url}/recruit/prolific/enter", params=params, allow_redirects=False, timeout=10)


def accounts_named(market_sessions: Any, pid: str) -> int:
    with session_scope(market_sessions) as session:
        return int(session.scalar(select(func.count()).where(Worker.username == f"prolific:{pid}")) or 0)


def csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def work_one(url: str, browser: requests.Session, session_id: str) -> str:
    """Take the place's next HIT and submit it; the assignment's id."""
    page = browser.get(f"{url}/recruit/place/{session_id}", timeout=10)
    assert page.status_code == 200, page.text
    taken = browser.post(
        f"{url}/recruit/place/{session_id}/next",
        data={"csrf_token": csrf(page.text)},
        allow_redirects=False,
        timeout=10,
    )
    assert taken.status_code == 302 and "/work/" in taken.headers["Location"], taken.text
    assignment_id = taken.headers["Location"].rsplit("/", 1)[1]
    submitted = browser.post(
        f"{url}/mturk/externalSubmit", data={"assignmentId": assignment_id, "rating": "3"}, timeout=10
    )
    assert submitted.status_code == 200, submitted.text
    assert f"/recruit/place/{session_id}" in submitted.text  # sent back to the place, not to the group
    return assignment_id


def test_a_participant_works_their_place_and_is_sent_back_with_the_code(
    live_server: Any,
    standin: RunningStandin,
    study: Recruitment,
    requester_sessions: Any,
    market_sessions: Any,
) -> None:
    assert study.study_id is not None
    pid = "5f0c1a2b3c4d5e6f7a8b9c0d"
    session_id = standin.app.take_place(study.study_id, pid)
    browser = requests.Session()
    arrived = enter(
        live_server.url, browser, PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=session_id
    )
    assert arrived.status_code == 302, arrived.text
    assert arrived.headers["Location"].endswith(f"/recruit/place/{session_id}")
    page = browser.get(live_server.url + arrived.headers["Location"], timeout=10)
    assert "Rate how well sentences describe drawings." in page.text  # the study's instructions
    assert "0 of 2" in page.text
    done = [work_one(live_server.url, browser, session_id) for _ in range(2)]
    finished = browser.get(f"{live_server.url}/recruit/place/{session_id}", allow_redirects=False, timeout=10)
    assert finished.status_code == 302
    location = urlsplit(finished.headers["Location"])
    assert (location.netloc, location.path) == ("app.prolific.com", "/submissions/complete")
    assert parse_qs(location.query) == {"cc": [study.completion_code]}
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None and place.status == "finished"
        kept = session.scalars(select(RecruitAssignment).where(RecruitAssignment.place_id == place.id)).all()
        assert sorted(a.assignment_id for a in kept) == sorted(done)
        assert {a.session_id for a in kept} == {session_id}
    # Prolific pays them: their statement says so and offers no payout address of its own.
    earnings = browser.get(f"{live_server.url}/me/earnings", timeout=10)
    assert "Prolific pays you for this work" in earnings.text and 'name="address"' not in earnings.text
    refused = browser.post(
        f"{live_server.url}/me/payout-address",
        data={"csrf_token": csrf(earnings.text), "address": "me@example.org"},
        timeout=10,
    )
    assert refused.status_code == 400
    # The same participant again (a reload, a new browser): the same account, no other.
    again = enter(
        live_server.url, requests.Session(), PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=session_id
    )
    assert again.status_code == 302
    assert accounts_named(market_sessions, pid) == 1


@pytest.mark.parametrize(
    "case", ["missing", "forged-participant", "other-study", "unknown-session", "someone-elses-session"]
)
def test_a_bad_link_gets_a_clear_page_and_no_account(
    case: str, live_server: Any, standin: RunningStandin, study: Recruitment, market_sessions: Any
) -> None:
    assert study.study_id is not None
    owner = f"a{case.replace('-', '')[:20]:0<23}"
    session_id = standin.app.take_place(study.study_id, owner)
    if case == "someone-elses-session":
        # The owner arrived first and holds the place; another participant brings the same session id.
        assert (
            enter(
                live_server.url,
                requests.Session(),
                PROLIFIC_PID=owner,
                STUDY_ID=study.study_id,
                SESSION_ID=session_id,
            ).status_code
            == 302
        )
    intruder = f"b{case.replace('-', '')[:20]:0<23}"
    params = {
        "missing": {"PROLIFIC_PID": intruder, "STUDY_ID": study.study_id},
        "forged-participant": {
            "PROLIFIC_PID": intruder,
            "STUDY_ID": study.study_id,
            "SESSION_ID": session_id,
        },
        "other-study": {
            "PROLIFIC_PID": owner,
            "STUDY_ID": "0123456789abcdef01234567",
            "SESSION_ID": session_id,
        },
        "unknown-session": {
            "PROLIFIC_PID": intruder,
            "STUDY_ID": study.study_id,
            "SESSION_ID": "ffff0000ffff0000ffff0000",
        },
        "someone-elses-session": {
            "PROLIFIC_PID": intruder,
            "STUDY_ID": study.study_id,
            "SESSION_ID": session_id,
        },
    }[case]
    browser = requests.Session()
    reply = enter(live_server.url, browser, **params)
    assert reply.status_code in (400, 403, 404)
    assert 'id="recruit-refused"' in reply.text
    assert accounts_named(market_sessions, intruder) == 0
    if case != "someone-elses-session":
        assert accounts_named(market_sessions, owner) == 0
    # Nor is anyone signed in: the place page is not theirs.
    assert browser.get(f"{live_server.url}/recruit/place/{session_id}", timeout=10).status_code == 404


def test_a_returned_session_cannot_enter(
    live_server: Any, standin: RunningStandin, study: Recruitment, market_sessions: Any
) -> None:
    assert study.study_id is not None
    pid = "c0ffee0000000000000000aa"
    session_id = standin.app.take_place(study.study_id, pid)
    standin.app.give_back(session_id)
    reply = enter(
        live_server.url, requests.Session(), PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=session_id
    )
    assert reply.status_code == 403 and "returned" in reply.text
    assert accounts_named(market_sessions, pid) == 0


def test_a_participant_who_finds_no_task_left_is_sent_back_to_return_the_place(
    live_server: Any, market: Any, standin: RunningStandin, study: Recruitment, requester_sessions: Any
) -> None:
    from hits.db import utcnow
    from hits.requester.tables.campaigns import PublishedHIT

    assert study.study_id is not None
    with session_scope(requester_sessions) as session:
        hit_ids = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == study.campaign_id)
        ).all()
    for hit_id in hit_ids:
        market.update_expiration(hit_id, utcnow())  # every HIT taken off the list
    pid = "d00d0000000000000000beef"
    session_id = standin.app.take_place(study.study_id, pid)
    browser = requests.Session()
    assert (
        enter(
            live_server.url, browser, PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=session_id
        ).status_code
        == 302
    )
    page = browser.get(f"{live_server.url}/recruit/place/{session_id}", timeout=10)
    left = browser.post(
        f"{live_server.url}/recruit/place/{session_id}/next",
        data={"csrf_token": csrf(page.text)},
        allow_redirects=False,
        timeout=10,
    )
    assert left.status_code == 302
    assert parse_qs(urlsplit(left.headers["Location"]).query) == {"cc": [study.return_code]}
    assert study.return_code != study.completion_code
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
        assert place is not None and place.status == "no_work"
    # The study asks Prolific to request a return for that code, and nothing to approve.
    codes = standin.app.state.studies[study.study_id]["completion_codes"]
    assert [c["actions"][0]["action"] for c in codes if c["code"] == study.return_code] == ["REQUEST_RETURN"]


def test_another_participants_place_is_a_404_like_a_missing_one(
    live_server: Any, standin: RunningStandin, study: Recruitment, requester_sessions: Any
) -> None:
    assert study.study_id is not None
    browsers = {}
    sessions = {}
    for pid in ("e00000000000000000000001", "e00000000000000000000002"):
        sessions[pid] = standin.app.take_place(study.study_id, pid)
        browsers[pid] = requests.Session()
        assert (
            enter(
                live_server.url,
                browsers[pid],
                PROLIFIC_PID=pid,
                STUDY_ID=study.study_id,
                SESSION_ID=sessions[pid],
            ).status_code
            == 302
        )
    mine, theirs = browsers["e00000000000000000000001"], sessions["e00000000000000000000002"]
    token = csrf(
        mine.get(f"{live_server.url}/recruit/place/{sessions['e00000000000000000000001']}", timeout=10).text
    )
    for target in (theirs, "ffffffffffffffffffffffff", theirs + "x", "not-an-id"):
        assert mine.get(f"{live_server.url}/recruit/place/{target}", timeout=10).status_code == 404
        taken = mine.post(
            f"{live_server.url}/recruit/place/{target}/next",
            data={"csrf_token": token},
            allow_redirects=False,
            timeout=10,
        )
        assert taken.status_code == 404
    with session_scope(requester_sessions) as session:
        place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == theirs))
        assert place is not None
        assert (
            session.scalars(select(RecruitAssignment).where(RecruitAssignment.place_id == place.id)).all()
            == []
        )
