"""Other panels (Connect, SONA, a lab's list): the entry with the panel's id, no API, a completion URL."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import yaml
from pydantic import ValidationError
from sqlalchemy import func, select

from demo.data import write_rating_demo
from hits.db import session_scope
from hits.market.models import Worker
from hits.requester.campaigns.recruitment import launch_study, open_panel
from hits.requester.files.recruit import RecruitSpec
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.tables.recruiting import RecruitAssignment, Recruitment, RecruitPlace
from tests.helpers import publish_campaign_file, rating_campaign_spec
from tests.recruit.test_entry import work_one

PANEL = {
    "platform": "panel",
    "panel": "lab-list",
    "title": "Rate some drawings",
    "description": "Rate how well sentences describe drawings.",
    "hits_per_participant": 2,
    "places": 2,
    "id_parameter": "participantId",
    "completion_url": "https://panel.example/done?code={code}&who={id}",
}


def panel_campaign(
    tmp_path: Path, market: Any, requester_sessions: Any, url: str, **recruit: Any
) -> Recruitment:
    """A rating campaign of 3 HITs x 2 recruiting on a panel, its HITs published and its link open."""
    write_rating_demo(tmp_path, items=6, gold=4, seed=1)
    name = f"rc-panel-{secrets.token_hex(4)}"
    spec = rating_campaign_spec(name, recruit={**PANEL, **recruit})
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, url)
    opened = open_panel(requester_sessions, campaign_id, url)
    assert opened is not None
    link, places = opened
    with session_scope(requester_sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        assert row is not None and row.status == "published" and row.study_id is None
        assert link == f"{url}/recruit/panel/{row.internal_name}?participantId=ID" and places == 2
        session.expunge(row)
    assert open_panel(requester_sessions, campaign_id, url) == opened  # opening again changes nothing
    return row


def enter(url: str, key: str, browser: requests.Session, **params: str) -> requests.Response:
    return browser.get(f"{url}/recruit/panel/{key}", params=params, allow_redirects=False, timeout=10)


def accounts(market_sessions: Any, like: str = "panel:%") -> int:
    with session_scope(market_sessions) as session:
        return int(session.scalar(select(func.count()).where(Worker.username.like(like))) or 0)


def places(requester_sessions: Any, row: Recruitment) -> list[RecruitPlace]:
    with session_scope(requester_sessions) as session:
        found = session.scalars(select(RecruitPlace).where(RecruitPlace.recruitment_id == row.id)).all()
        for place in found:
            session.expunge(place)
        return list(found)


@pytest.mark.parametrize(
    ("recruit", "error"),
    [
        ({"reward": 100}, "only for platform: prolific"),
        ({"id_parameter": None}, "needs id_parameter"),
        ({"completion_url": "https://panel.example/done"}, "{code}"),
        ({"completion_url": "https://panel.example/{code}/{other}"}, "no other"),
        ({"completion_url": "http://panel.example/?c={code}"}, "https://"),
        ({"completion_url": "javascript:alert(1)//{code}"}, "https://"),
        ({"redirect_url": "https://panel.example/back"}, "completion_url (with {code}), or redirect_url"),
        ({"completion_url": None, "redirect_url": "https://panel.example/back"}, "needs completion_code"),
        ({"id_parameter": "participant id"}, "id_parameter"),
        ({"eligibility": {"exclude_studies": ["s0"]}}, "eligibility: only for platform: prolific"),
    ],
)
def test_a_panel_s_recruit_section_is_checked(recruit: dict[str, Any], error: str) -> None:
    with pytest.raises(ValidationError, match=error.replace("(", r"\(").replace(")", r"\)")):
        RecruitSpec.model_validate({k: v for k, v in {**PANEL, **recruit}.items() if v is not None})
    with pytest.raises(ValidationError, match="only for platform: panel"):
        RecruitSpec.model_validate(
            {**PANEL, "platform": "prolific", "reward": 100, "estimated_minutes": 5, "panel": None}
        )


def test_a_panel_participant_enters_works_and_is_sent_back_with_the_code(
    tmp_path: Path,
    market: Any,
    requester_sessions: Any,
    market_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
) -> None:
    row = panel_campaign(tmp_path, market, requester_sessions, live_server.url)
    browser = requests.Session()
    pid = "sona_4821.b-7"
    arrived = enter(live_server.url, row.internal_name, browser, participantId=pid)
    assert arrived.status_code == 302, arrived.text
    (place,) = places(requester_sessions, row)
    assert arrived.headers["Location"].endswith(f"/recruit/place/{place.session_id}")
    with session_scope(market_sessions) as session:
        worker = session.scalar(select(Worker).where(Worker.username == f"panel:lab-list:{pid}"))
        assert worker is not None and worker.id == place.worker_id
    page = browser.get(live_server.url + arrived.headers["Location"], timeout=10)
    assert "Rate how well sentences describe drawings." in page.text and "0 of 2" in page.text
    done = [work_one(live_server.url, browser, place.session_id) for _ in range(2)]
    finished = browser.get(
        f"{live_server.url}/recruit/place/{place.session_id}", allow_redirects=False, timeout=10
    )
    assert finished.status_code == 302
    location = urlsplit(finished.headers["Location"])
    assert (location.netloc, location.path) == ("panel.example", "/done")
    assert parse_qs(location.query) == {"code": [row.completion_code], "who": [pid]}
    with session_scope(requester_sessions) as session:
        kept = session.scalars(
            select(RecruitAssignment.assignment_id).where(RecruitAssignment.session_id == place.session_id)
        ).all()
        assert sorted(kept) == sorted(done)
    # A second visit with the same id: the same account, the same (finished) place, no new one.
    again = enter(live_server.url, row.internal_name, requests.Session(), participantId=pid)
    assert again.headers["Location"] == arrived.headers["Location"]
    assert [p.id for p in places(requester_sessions, row)] == [place.id]
    assert accounts(market_sessions, f"panel:lab-list:{pid}") == 1
    # The panel has no API: nothing reached Prolific's stand-in.
    assert standin.app.state.calls == []


def test_hostile_panel_entries_get_no_account_and_no_place(
    tmp_path: Path,
    market: Any,
    requester_sessions: Any,
    market_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
    prolific: Any,
) -> None:
    row = panel_campaign(tmp_path, market, requester_sessions, live_server.url)
    before = accounts(market_sessions)
    url, key = live_server.url, row.internal_name
    for params in (
        {},
        {"participantId": ""},
        {"PROLIFIC_PID": "abc123"},  # another parameter than the campaign's
        {"participantId": "a b"},
        {"participantId": "x:y"},  # the account name's separator
        {"participantId": "<script>alert(1)</script>"},
        {"participantId": "../../etc"},
        {"participantId": "-leading"},
        {"participantId": "a" * 49},
        {"participantId": "é"},
    ):
        refused = enter(url, key, requests.Session(), **params)
        assert refused.status_code == 400 and "participant id" in refused.text, params
    # A made-up key, a malformed one, and a Prolific study's internal name are not panel links.
    prolific_name = f"rc-pr-{secrets.token_hex(3)}"
    write_rating_demo(tmp_path / "p", items=6, gold=4, seed=1)
    prolific_campaign = publish_campaign_file(
        tmp_path / "p",
        rating_campaign_spec(
            prolific_name,
            recruit={k: v for k, v in PANEL.items() if k not in ("panel", "id_parameter", "completion_url")}
            | {"platform": "prolific", "reward": 100, "estimated_minutes": 5, "currency": "USD"},
        ),
        market,
        requester_sessions,
        url,
    )
    launch_study(requester_sessions, prolific, prolific_campaign, url)
    with session_scope(requester_sessions) as session:
        other = session.scalar(
            select(Recruitment.internal_name).where(Recruitment.campaign_id == prolific_campaign)
        )
    for forged in (f"hitforge-c999999-{'0' * 12}", "hitforge-c1", "x" * 300, other):
        refused = enter(url, str(forged), requests.Session(), participantId="abc")
        assert refused.status_code == 404 and "not for a study running here" in refused.text, forged
    assert accounts(market_sessions) == before and places(requester_sessions, row) == []
    # The study's places are 2: a third participant is turned away, without an account.
    for pid in ("p1", "p2"):
        assert enter(url, key, requests.Session(), participantId=pid).status_code == 302
    full = enter(url, key, requests.Session(), participantId="p3")
    assert full.status_code == 410 and "taken" in full.text
    assert accounts(market_sessions) == before + 2 and len(places(requester_sessions, row)) == 2


def test_a_panel_with_a_redirect_url_shows_its_code(
    tmp_path: Path, market: Any, requester_sessions: Any, live_server: Any
) -> None:
    row = panel_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        completion_url=None,
        redirect_url="https://connect.example/complete",
        completion_code="CONNECT42",
        hits_per_participant=1,
    )
    assert row.completion_code == "CONNECT42"
    browser = requests.Session()
    arrived = enter(live_server.url, row.internal_name, browser, participantId="cr123")
    session_id = arrived.headers["Location"].rsplit("/", 1)[1]
    work_one(live_server.url, browser, session_id)
    done = browser.get(f"{live_server.url}/recruit/place/{session_id}", allow_redirects=False, timeout=10)
    assert done.status_code == 200
    assert 'id="completion-code">CONNECT42<' in done.text
    assert 'href="https://connect.example/complete"' in done.text
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    assert spec["recruit"]["platform"] == "panel"
