"""The JSON API as a requester's script uses it: a token, campaigns, progress, the queue, decisions.

Each token acts as its user: the same scope as the dashboard, the same audit
log. Hostile input (no token, a forged one, wrong types, huge numbers, broken
JSON) gets a clear JSON error, never a 5xx; the OpenAPI description covers
every route the API answers.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

import requests
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.api_tokens import issue_token, revoke_tokens
from hits.requester.campaigns.staff import assign_campaign, create_staff
from hits.requester.tables.campaigns import OutboxEntry, ReviewAction
from server.cli.main import main
from tests.server.test_review_queue import seed


def _user(requester_sessions, role: str = "admin") -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A new dashboard user and an API token of theirs: (username, token)."""
    name = f"api-{role}-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        create_staff(session, name, role, "!")
        token = issue_token(session, name, "tests")
    return name, token


def _api(base: str, token: str | None) -> requests.Session:
    http = requests.Session()
    if token:
        http.headers["Authorization"] = f"Bearer {token}"
    http.headers["Accept"] = "application/json"
    return http


def test_a_token_is_needed_and_a_revoked_one_stops_working(live_server, requester_sessions) -> None:
    base = live_server.url + "/api/v1"
    missing = requests.get(base + "/campaigns")
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "MissingToken"
    forged = _api(base, "hft_" + "x" * 43).get(base + "/campaigns")
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "InvalidToken"
    name, token = _user(requester_sessions)
    assert _api(base, token).get(base + "/campaigns").status_code == 200
    with session_scope(requester_sessions) as session:
        assert revoke_tokens(session, name) == 1
    assert _api(base, token).get(base + "/campaigns").status_code == 401


def test_a_token_sees_and_decides_what_its_user_may_on_the_dashboard(live_server, requester_sessions) -> None:
    base = live_server.url + "/api/v1"
    campaign_id, name, worker_id, (assignment_id,) = seed(requester_sessions)
    _, admin = _user(requester_sessions)
    qa_name, qa = _user(requester_sessions, "qa")
    listed = _api(base, admin).get(base + "/campaigns", params={"page_size": 200}).json()
    assert name in [c["name"] for c in listed["campaigns"]]
    assert _api(base, qa).get(base + "/campaigns").json() == {"total": 0, "campaigns": []}
    hidden = _api(base, qa).get(f"{base}/campaigns/{campaign_id}")
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "NotFound"
    rejected = _api(base, qa).post(f"{base}/assignments/{assignment_id}/decision", json={"action": "reject"})
    assert rejected.status_code == 404  # another's assignment is one that does not exist
    with session_scope(requester_sessions) as session:
        assign_campaign(session, qa_name, str(campaign_id))

    rows = _api(base, qa).get(base + "/review-queue").json()["rows"]
    assert [(r["campaign"]["name"], r["worker_id"]) for r in rows] == [(name, worker_id)]
    assert rows[0]["at_stake"] == "0.50" and rows[0]["gold"] == {"correct": 1, "total": 4, "accuracy": 0.25}
    decided = _api(base, qa).post(
        f"{base}/assignments/{assignment_id}/decision",
        json={"action": "reject", "feedback": "The ratings ignore the pictures.", "note": "from a script"},
    )
    assert decided.status_code == 201, decided.text
    again = _api(base, qa).post(f"{base}/assignments/{assignment_id}/decision", json={"action": "approve"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "NotHeld"
    with session_scope(requester_sessions) as session:
        entry = session.scalars(select(OutboxEntry).where(OutboxEntry.target == assignment_id)).one()
        logged = session.scalars(select(ReviewAction).where(ReviewAction.campaign_id == campaign_id)).all()
    assert (entry.action, entry.payload["feedback"]) == ("reject", "The ratings ignore the pictures.")
    assert [(a.action, a.note) for a in logged] == [("reject", "from a script")]
    # A reviewer reviews; the campaign's course and budget are its requester's (or an admin's).
    for change in ({"change": "budget", "budget": "999.00"}, {"change": "pause"}):
        refused = _api(base, qa).post(f"{base}/campaigns/{campaign_id}/control", json=change)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "NotPermitted", change


def test_bad_calls_get_a_clear_json_error(live_server, requester_sessions) -> None:
    base = live_server.url + "/api/v1"
    campaign_id, *_ = seed(requester_sessions)
    _, token = _user(requester_sessions)
    api = _api(base, token)
    cases = [
        (api.get(base + "/campaigns", params={"page": "0"}), 400, "InvalidParameter"),
        (api.get(base + "/campaigns", params={"page": "²"}), 400, "InvalidParameter"),
        (api.get(base + "/campaigns", params={"page": "9" * 40}), 400, "InvalidParameter"),
        (api.get(base + "/review-queue", params={"reason": "bored"}), 400, "InvalidParameter"),
        (api.post(f"{base}/campaigns/{campaign_id}/control", data="{not json"), 400, "InvalidJson"),
        (api.post(f"{base}/campaigns/{campaign_id}/control", json=[1, 2]), 400, "InvalidJson"),
        (api.post(f"{base}/campaigns/{campaign_id}/control", json={}), 400, "MissingParameter"),
        (api.post(f"{base}/campaigns/{campaign_id}/control", json={"change": 5}), 400, "InvalidParameter"),
        (api.post(f"{base}/campaigns/{campaign_id}/control", json={"change": "pause"}), 409, "NotApplicable"),
        (api.get(base + "/no-such-thing"), 404, "NotFound"),
        (api.delete(base + "/campaigns"), 405, "MethodNotAllowed"),
    ]
    for response, status, code in cases:
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text


def test_the_openapi_description_covers_every_route_the_api_answers(live_server, requester_sessions) -> None:
    base = live_server.url + "/api/v1"
    described = requests.get(base + "/openapi.json").json()
    assert described["openapi"].startswith("3.1")
    paths = described["paths"]
    assert {"/api/v1/campaigns", "/api/v1/campaigns/{campaign_id}", "/api/v1/review-queue"} <= set(paths)
    for path, methods in paths.items():
        for method, entry in methods.items():
            assert entry["summary"] and entry["operationId"]
            url = live_server.url + path.replace("{campaign_id}", "1").replace("{assignment_id}", "x")
            # Every described route exists: without a token it asks for one (never 404 or 405).
            assert requests.request(method.upper(), url).status_code == 401, (method, path)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    path=st.sampled_from(["/campaigns", "/campaigns/1", "/campaigns/1/results", "/review-queue"]),
    params=st.dictionaries(
        st.sampled_from(["page", "page_size", "campaign", "template", "reason"]),
        st.one_of(st.text(max_size=30), st.integers(min_value=-(2**70), max_value=2**70).map(str)),
        max_size=4,
    ),
    body=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["change", "hours", "budget", "note", "action", "feedback"]),
            st.one_of(st.text(max_size=20), st.integers(min_value=-(2**70), max_value=2**70), st.none()),
        ),
    ),
)
def test_no_input_makes_the_api_fail_with_a_5xx(live_server, requester_sessions, path, params, body) -> None:
    token = getattr(test_no_input_makes_the_api_fail_with_a_5xx, "token", None)
    if token is None:
        _, token = _user(requester_sessions)
        test_no_input_makes_the_api_fail_with_a_5xx.token = token  # type: ignore[attr-defined]
    api = _api(live_server.url + "/api/v1", token)
    got = api.get(live_server.url + "/api/v1" + path, params=params)
    assert got.status_code < 500, (path, params, got.text)
    posted = api.post(live_server.url + "/api/v1/campaigns/1/control", json=body)
    assert posted.status_code < 500, (body, posted.text)
    decided = api.post(live_server.url + "/api/v1/assignments/3Axyz/decision", json=body)
    assert decided.status_code < 500, (body, decided.text)


def test_progress_through_the_api_matches_the_campaign(live_server, requester_sessions) -> None:
    campaign_id, name, _, assignments = seed(requester_sessions, held=3, reward="0.25")
    _, token = _user(requester_sessions)
    with session_scope(requester_sessions) as session:
        from hits.requester.tables.campaigns import Campaign

        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.spec = {
            **campaign.spec,
            "name": name,
            "template": "rating",
            "title": "t",
            "description": "d",
            "budget": "10",
            "items": "items.jsonl",
            "gold": "gold.jsonl",
            "assignments_per_hit": 1,
        }
        campaign.budget = Decimal("10")
    got = _api(live_server.url + "/api/v1", token).get(f"{live_server.url}/api/v1/campaigns/{campaign_id}")
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["hits"]["total"] == len(assignments) and body["assignments"]["submitted"] == len(assignments)
    assert body["assignments"]["by_decision"] == {"held": 3}
    assert body["money"]["budget"] == "10.00"


def test_the_shell_issues_a_token_that_works_once_printed_and_revokes_it(
    live_server, settings, requester_sessions
) -> None:
    name = f"api-shell-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        create_staff(session, name, "admin", "!")
    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    issued = CliRunner().invoke(main, ["staff", "token", name, "--label", "nightly export"], env=env)
    assert issued.exit_code == 0, issued.output
    token = issued.stdout.strip()
    assert token.startswith("hft_") and "\n" not in token
    api = _api(live_server.url + "/api/v1", token)
    assert api.get(live_server.url + "/api/v1/campaigns").status_code == 200
    revoked = CliRunner().invoke(main, ["staff", "token", name, "--revoke"], env=env)
    assert revoked.exit_code == 0 and "revoked 1 token" in revoked.output
    assert api.get(live_server.url + "/api/v1/campaigns").status_code == 401
    unknown = CliRunner().invoke(main, ["staff", "token", "nobody-at-all"], env=env)
    assert unknown.exit_code == 2 and "no dashboard user nobody-at-all" in unknown.output


def test_a_flag_is_confirmed_through_the_api_once(live_server, requester_sessions) -> None:
    campaign_id, _, worker_id, assignments = seed(requester_sessions, held=2)
    _, token = _user(requester_sessions)
    api = _api(live_server.url + "/api/v1", token)
    url = f"{live_server.url}/api/v1/campaigns/{campaign_id}/workers/{worker_id}/flag"
    done = api.post(url, json={"action": "confirm", "note": "flat ratings"})
    assert done.status_code == 201 and done.json()["decided"] == 2, done.text
    again = api.post(url, json={"action": "clear"})
    assert again.status_code == 201 and again.json()["decided"] == 0  # confirmed: still flagged, nothing held
    nobody = api.post(
        f"{live_server.url}/api/v1/campaigns/{campaign_id}/workers/ANOBODY/flag", json={"action": "clear"}
    )
    assert nobody.status_code == 404
    with session_scope(requester_sessions) as session:
        rejects = session.scalars(
            select(OutboxEntry.target).where(
                OutboxEntry.action == "reject", OutboxEntry.target.in_(assignments)
            )
        ).all()
    assert sorted(rejects) == sorted(assignments)
