"""A panel's participants proving who they are: signed links, and a completion code of their own.

End to end as ``test_panel``: a real server, the entry link followed as a
browser does, the CLI run as the lab would.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from click.testing import CliRunner
from pydantic import ValidationError

from hits.db import session_scope
from hits.requester.files.recruit import RecruitSpec
from hits.requester.recruit.panel_identity import participant_code
from hits.requester.recruit.prolific.standin import RunningStandin
from hits.requester.tables.campaigns import Campaign
from server.cli.main import main
from tests.recruit.test_cli import cli_env
from tests.recruit.test_entry import work_one
from tests.recruit.test_panel import PANEL, accounts, enter, panel_campaign, places


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _name(requester_sessions: Any, row: Any) -> str:
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, row.campaign_id)
        assert campaign is not None
        return campaign.name


def test_with_signed_links_only_the_link_made_for_an_id_enters(
    tmp_path: Path,
    settings: Any,
    market: Any,
    requester: Any,
    requester_sessions: Any,
    market_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
) -> None:
    row = panel_campaign(tmp_path, market, requester_sessions, live_server.url, signed_links=True)
    env = cli_env(settings, live_server, requester, standin)
    made = CliRunner().invoke(
        main,
        ["recruit", "links", _name(requester_sessions, row), "-"],
        input="ann_01\n# a comment\n\nbob-02\nann_01\n",
        env=env,
    )
    assert made.exit_code == 0, made.output
    rows = _csv(made.stdout)
    assert [r["participant_id"] for r in rows] == ["ann_01", "bob-02"]  # once each, in order
    ann, bob = (r["link"] for r in rows)
    assert ann.startswith(f"{live_server.url}/recruit/panel/{row.internal_name}?participantId=ann_01&sig=")

    before = accounts(market_sessions)
    bob_sig = parse_qs(urlsplit(bob).query)["sig"][0]
    for params in (
        {"participantId": "ann_01"},  # the open link, as a panel would fill it in
        {"participantId": "ann_01", "sig": ""},
        {"participantId": "ann_01", "sig": bob_sig},  # someone else's link, id changed
        {"participantId": "ann_01", "sig": bob_sig[:-1]},
        {"participantId": "carol", "sig": bob_sig},
    ):
        refused = enter(live_server.url, row.internal_name, requests.Session(), **params)
        assert refused.status_code == 403 and "not yours" in refused.text, params
    assert accounts(market_sessions) == before and places(requester_sessions, row) == []

    arrived = requests.get(ann, allow_redirects=False, timeout=10)
    assert arrived.status_code == 302, arrived.text
    (place,) = places(requester_sessions, row)
    assert place.participant_id == "ann_01"

    bad = CliRunner().invoke(
        main, ["recruit", "links", _name(requester_sessions, row), "-"], input="ok\nx:y\n", env=env
    )
    assert bad.exit_code == 2 and "<stdin>, line 2: 'x:y' is not an id" in bad.output, bad.output


def test_per_participant_codes_give_each_their_own_and_the_lab_can_list_them(
    tmp_path: Path,
    settings: Any,
    market: Any,
    requester: Any,
    requester_sessions: Any,
    live_server: Any,
    standin: RunningStandin,
) -> None:
    row = panel_campaign(tmp_path, market, requester_sessions, live_server.url, per_participant_codes=True)
    codes = {}
    for pid in ("p-1", "p-2"):
        browser = requests.Session()
        arrived = enter(live_server.url, row.internal_name, browser, participantId=pid)
        assert arrived.status_code == 302, arrived.text
        session_id = arrived.headers["Location"].rsplit("/", 1)[-1]
        for _ in range(2):
            work_one(live_server.url, browser, session_id)
        finished = browser.get(
            f"{live_server.url}/recruit/place/{session_id}", allow_redirects=False, timeout=10
        )
        assert finished.status_code == 302
        codes[pid] = parse_qs(urlsplit(finished.headers["Location"]).query)["code"][0]
    assert codes["p-1"] != codes["p-2"] and row.completion_code not in codes.values()
    assert codes["p-1"] == participant_code(settings.secret_key, row.internal_name, "p-1")

    listed = CliRunner().invoke(
        main,
        ["recruit", "codes", _name(requester_sessions, row)],
        env=cli_env(settings, live_server, requester, standin),
    )
    assert listed.exit_code == 0, listed.output
    assert {r["participant_id"]: (r["code"], r["place"]) for r in _csv(listed.stdout)} == {
        pid: (code, "finished") for pid, code in codes.items()
    }


@pytest.mark.parametrize(
    ("recruit", "error"),
    [
        ({"per_participant_codes": True, "completion_code": "LAB1"}, "one code for all, or one each"),
        (
            {
                "platform": "prolific",
                "reward": 100,
                "estimated_minutes": 5,
                "currency": "USD",
                "signed_links": True,
            },
            "signed_links: only for platform: panel",
        ),
    ],
)
def test_the_guards_are_checked_in_the_file(recruit: dict[str, Any], error: str) -> None:
    section = {**PANEL, **recruit}
    if section["platform"] == "prolific":
        section = {k: v for k, v in section.items() if k not in ("panel", "id_parameter", "completion_url")}
    with pytest.raises(ValidationError, match=error):
        RecruitSpec.model_validate(section)
