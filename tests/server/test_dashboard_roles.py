"""Dashboard roles: each user sees and acts on its own campaigns only, whatever URL or id it types.

A requester user sees the campaigns published with its account's access key,
a QA reviewer those assigned to it, an admin all. Anything else answers 404,
the same as an id that does not exist, and changes nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from bs4 import BeautifulSoup
from click.testing import CliRunner
from sqlalchemy import func, select
from werkzeug.security import generate_password_hash

from hits.db import session_scope
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    StaffCampaign,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
from qualification import DEFAULT_BANK
from server.cli.main import main

PASSWORD = "a-staff-password"


@dataclass
class Seeded:
    campaign_id: int
    campaign_name: str
    submission_id: int
    worker_id: str
    test_id: int
    access_key: str


def requiring(*type_ids: str) -> dict[str, Any]:
    """A stored campaign spec that requires these qualification types of its workers."""
    return {
        "qualification_requirements": [
            {"QualificationTypeId": t, "Comparator": "GreaterThanOrEqualTo", "IntegerValues": [80]}
            for t in type_ids
        ]
    }


def seed_campaign(requester_sessions, worker_id: str | None = None, **texts: str) -> Seeded:  # type: ignore[no-untyped-def]
    """A campaign of its own requester account with one flagged worker, one held assignment, and the
    qualification test it requires of its workers."""
    tag = uuid.uuid4().hex[:10].upper()
    worker_id = worker_id or "A" + tag
    key = "AKIA" + tag
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=texts.get("name", f"roles-{tag}"),
            template="rating",
            spec=requiring("3Q" + tag),
            budget=1,
            access_key_id=key,
        )
        session.add(campaign)
        session.flush()
        published = PublishedHIT(campaign_id=campaign.id, status="complete", mturk_hit_id="3H" + tag)
        session.add(published)
        session.flush()
        submission = Submission(
            assignment_id="3A" + tag,
            published_hit_id=published.id,
            worker_id=worker_id,
            answers={"answers": [texts.get("answer", "1")]},
            decision="held",
            evidence={"gold_correct": 1, "gold_total": 4, "note": texts.get("evidence", "")},
        )
        session.add(submission)
        session.add(
            WorkerStats(
                campaign_id=campaign.id,
                worker_id=worker_id,
                gold_correct=1,
                gold_total=4,
                assignments=1,
                approved=0,
                rejected=0,
                flagged=True,
                flag_reason=texts.get("reason", "gold accuracy 1/4"),
            )
        )
        test = QualificationTest(
            name=f"roles-test-{tag}",
            bank_path=str(DEFAULT_BANK),
            qualification_type_id="3Q" + tag,
            access_key_id=key,
        )
        session.add(test)
        session.flush()
        session.add(
            QualificationAttempt(
                test_id=test.id, worker_id=worker_id, seed=1, score=50, correct_items={"a": True}
            )
        )
        session.flush()
        return Seeded(campaign.id, campaign.name, submission.id, worker_id, test.id, key)


def make_user(
    requester_sessions, role: str, access_key: str | None = None, assigned: tuple[int, ...] = ()
) -> str:  # type: ignore[no-untyped-def]
    name = f"{role}-{uuid.uuid4().hex[:8]}"
    with session_scope(requester_sessions) as session:
        user = StaffUser(
            username=name, password_hash=generate_password_hash(PASSWORD), role=role, access_key_id=access_key
        )
        session.add(user)
        session.flush()
        session.add_all(StaffCampaign(staff_user_id=user.id, campaign_id=c) for c in assigned)
    return name


class Dashboard:
    """A signed-in browser of the dashboard: follows forms with their CSRF token like a person would."""

    def __init__(self, base: str, username: str) -> None:
        self.base = base
        self.http = requests.Session()
        token = self.token("/dashboard/signin")
        signed_in = self.http.post(
            base + "/dashboard/signin", data={"csrf_token": token, "username": username, "password": PASSWORD}
        )
        assert signed_in.status_code == 200 and "Campaigns" in signed_in.text

    def token(self, path: str = "/dashboard/") -> str:
        page = BeautifulSoup(self.http.get(self.base + path).text, "html.parser")
        return str(page.find("input", attrs={"name": "csrf_token"})["value"])  # type: ignore[index]

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.base + path)

    def post(self, path: str, **data: str) -> requests.Response:
        return self.http.post(self.base + path, data={"csrf_token": self.token(), **data})

    def home(self) -> str:
        return self.get("/dashboard/").text


@pytest.fixture()
def two(requester_sessions) -> tuple[Seeded, Seeded]:  # type: ignore[no-untyped-def]
    return seed_campaign(requester_sessions), seed_campaign(requester_sessions)


def unchanged(requester_sessions, other: Seeded) -> None:  # type: ignore[no-untyped-def]
    """Nothing was decided, queued or audited in ``other``'s campaign."""
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (other.campaign_id, other.worker_id))
        submission = session.get(Submission, other.submission_id)
        assert stats is not None and stats.flagged and stats.flag_review is None
        assert submission is not None and submission.decision == "held"
        for table in (OutboxEntry, ReviewAction):
            count = session.scalar(
                select(func.count()).select_from(table).where(table.campaign_id == other.campaign_id)
            )
            assert count == 0


def tampering(dash: Dashboard, mine: Seeded, other: Seeded) -> dict[str, requests.Response]:
    """Every page and action of the dashboard, aimed at ``other``'s campaign from ``mine``'s URLs."""
    return {
        "worker page": dash.get(f"/dashboard/workers/{other.campaign_id}/{other.worker_id}"),
        "other's worker under my campaign": dash.get(
            f"/dashboard/workers/{mine.campaign_id}/{other.worker_id}"
        ),
        "my worker under other's campaign": dash.get(
            f"/dashboard/workers/{other.campaign_id}/{mine.worker_id}"
        ),
        "compute results": dash.post(f"/dashboard/campaigns/{other.campaign_id}/results"),
        "review": dash.post(
            f"/dashboard/workers/{other.campaign_id}/{other.worker_id}/review", action="confirm"
        ),
        "review, other's worker under my campaign": dash.post(
            f"/dashboard/workers/{mine.campaign_id}/{other.worker_id}/review", action="clear"
        ),
        "decide other's assignment": dash.post(
            f"/dashboard/submissions/{other.submission_id}/decide", action="reject"
        ),
        "item analysis": dash.get(f"/dashboard/qualification/{other.test_id}/items"),
    }


def assert_all_not_found(responses: dict[str, requests.Response], missing: requests.Response) -> None:
    for what, response in responses.items():
        assert response.status_code == 404, what
        # The same page as for an id that does not exist: nothing tells "not yours" from "no such".
        assert response.text == missing.text, what


def test_a_requester_sees_and_acts_on_its_own_campaigns_only(live_server, requester_sessions, two) -> None:
    mine, other = two
    dash = Dashboard(live_server.url, make_user(requester_sessions, "requester", access_key=mine.access_key))
    home = BeautifulSoup(dash.home(), "html.parser")
    assert mine.campaign_name in home.get_text() and other.campaign_name not in home.get_text()
    assert mine.worker_id in home.get_text() and other.worker_id not in home.get_text()

    missing = dash.get("/dashboard/workers/999999999/ANOBODY")
    assert_all_not_found(tampering(dash, mine, other), missing)
    unchanged(requester_sessions, other)

    # Its own campaign works as before.
    assert dash.get(f"/dashboard/workers/{mine.campaign_id}/{mine.worker_id}").status_code == 200
    assert dash.get(f"/dashboard/qualification/{mine.test_id}/items").status_code == 200
    done = dash.post(f"/dashboard/submissions/{mine.submission_id}/decide", action="reject")
    assert done.status_code == 200 and "Reject queued" in done.text


def test_a_reviewer_sees_only_assigned_campaigns(live_server, requester_sessions, two) -> None:
    assigned, other = two
    dash = Dashboard(live_server.url, make_user(requester_sessions, "qa", assigned=(assigned.campaign_id,)))
    home = dash.home()
    assert assigned.campaign_name in home and other.campaign_name not in home
    assert other.worker_id not in home

    missing = dash.get("/dashboard/qualification/999999999/items")
    assert_all_not_found(tampering(dash, assigned, other), missing)
    unchanged(requester_sessions, other)

    # The test the campaign it reviews requires is its to analyse.
    assert dash.get(f"/dashboard/qualification/{assigned.test_id}/items").status_code == 200
    done = dash.post(f"/dashboard/workers/{assigned.campaign_id}/{assigned.worker_id}/review", action="clear")
    assert done.status_code == 200 and "Flag cleared for worker" in done.text


def add_test(requester_sessions, key: str, name: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """A qualification test published with ``key``, with one graded attempt: (test id, its type id)."""
    type_id = "3Q" + uuid.uuid4().hex[:12].upper()
    with session_scope(requester_sessions) as session:
        test = QualificationTest(
            name=f"{name}-{type_id}",
            bank_path=str(DEFAULT_BANK),
            qualification_type_id=type_id,
            access_key_id=key,
        )
        session.add(test)
        session.flush()
        session.add(
            QualificationAttempt(test_id=test.id, worker_id="AW1", seed=1, score=90, correct_items={"a": 1})
        )
        return test.id, type_id


def test_a_reviewer_sees_the_tests_its_campaigns_require_not_all_of_the_account(
    live_server, requester_sessions
) -> None:
    """Two campaigns of one account (one key), one assigned: only the test that campaign requires."""
    assigned = seed_campaign(requester_sessions)  # requires its own test
    key = assigned.access_key
    sibling_test, sibling_type = add_test(requester_sessions, key, "sibling")
    unlinked_test, _ = add_test(requester_sessions, key, "unlinked")
    foreign_test, foreign_type = add_test(
        requester_sessions, "AKIAELSEWHERE" + uuid.uuid4().hex[:6], "foreign"
    )
    with session_scope(requester_sessions) as session:
        # The sibling campaign of the same key requires the sibling test.
        session.add(
            Campaign(
                name=f"sibling-{uuid.uuid4().hex[:8]}",
                template="rating",
                spec=requiring(sibling_type),
                budget=1,
                access_key_id=key,
            )
        )
        # The assigned campaign also names another account's test: naming it gives no right to see it.
        campaign = session.get(Campaign, assigned.campaign_id)
        assert campaign is not None
        campaign.spec = requiring("3Q" + assigned.campaign_name.removeprefix("roles-"), foreign_type)

    reviewer = Dashboard(
        live_server.url, make_user(requester_sessions, "qa", assigned=(assigned.campaign_id,))
    )
    missing = reviewer.get("/dashboard/qualification/999999999/items")
    assert missing.status_code == 404
    assert reviewer.get(f"/dashboard/qualification/{assigned.test_id}/items").status_code == 200
    refused = {
        "the sibling campaign's test": reviewer.get(f"/dashboard/qualification/{sibling_test}/items"),
        "a test no campaign requires": reviewer.get(f"/dashboard/qualification/{unlinked_test}/items"),
        "another account's test": reviewer.get(f"/dashboard/qualification/{foreign_test}/items"),
    }
    assert_all_not_found(refused, missing)

    # The account's own requester user sees all its tests, and not the other account's.
    owner = Dashboard(live_server.url, make_user(requester_sessions, "requester", access_key=key))
    for test_id in (assigned.test_id, sibling_test, unlinked_test):
        assert owner.get(f"/dashboard/qualification/{test_id}/items").status_code == 200
    assert_all_not_found({"foreign": owner.get(f"/dashboard/qualification/{foreign_test}/items")}, missing)
    # An admin sees every test.
    admin = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    for test_id in (assigned.test_id, sibling_test, unlinked_test, foreign_test):
        assert admin.get(f"/dashboard/qualification/{test_id}/items").status_code == 200


def test_a_reviewer_with_nothing_assigned_sees_nothing(live_server, requester_sessions, two) -> None:
    first, second = two
    dash = Dashboard(live_server.url, make_user(requester_sessions, "qa"))
    home = BeautifulSoup(dash.home(), "html.parser")
    text = home.get_text()
    for seeded in (first, second):
        assert seeded.campaign_name not in text and seeded.worker_id not in text
    assert "No worker is flagged." in text and "No work is waiting for review." in text
    assert dash.get(f"/dashboard/workers/{first.campaign_id}/{first.worker_id}").status_code == 404


def test_a_requester_user_without_the_key_does_not_see_a_campaign_with_none(
    live_server, requester_sessions
) -> None:
    # A campaign stored but never published has no access key: it is no requester user's own.
    unpublished = seed_campaign(requester_sessions)
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, unpublished.campaign_id)
        assert campaign is not None
        campaign.access_key_id = None
    dash = Dashboard(live_server.url, make_user(requester_sessions, "requester", access_key="AKIAUNRELATED"))
    assert unpublished.campaign_name not in dash.home()
    assert (
        dash.get(f"/dashboard/workers/{unpublished.campaign_id}/{unpublished.worker_id}").status_code == 404
    )


def test_an_admin_sees_and_acts_on_every_campaign(live_server, requester_sessions, two) -> None:
    first, second = two
    dash = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    home = dash.home()
    assert first.campaign_name in home and second.campaign_name in home
    for seeded in (first, second):
        assert dash.get(f"/dashboard/workers/{seeded.campaign_id}/{seeded.worker_id}").status_code == 200
        assert dash.get(f"/dashboard/qualification/{seeded.test_id}/items").status_code == 200
        done = dash.post(f"/dashboard/submissions/{seeded.submission_id}/decide", action="approve")
        assert done.status_code == 200 and "Approve queued" in done.text


def test_worker_controlled_text_is_shown_as_text(live_server, requester_sessions) -> None:
    seeded = seed_campaign(
        requester_sessions,
        worker_id="<i onmouseover=x>",
        name=f"<img src=x onerror=alert(1)>{uuid.uuid4().hex[:6]}",
        reason="<script>alert('reason')</script>",
        evidence="</td><script>alert('evidence')</script>",
        answer="<script>alert('answer')</script>",
    )
    dash = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    with session_scope(requester_sessions) as session:
        submission = session.get(Submission, seeded.submission_id)
        assert submission is not None
        evidence_path = f"/dashboard/assignments/{submission.assignment_id}"
    worker_path = f"/dashboard/workers/{seeded.campaign_id}/%3Ci%20onmouseover=x%3E"
    for path in ("/dashboard/", "/dashboard/queue", worker_path, evidence_path):
        response = dash.get(path)
        assert response.status_code == 200, path
        page = BeautifulSoup(response.text, "html.parser")
        assert page.find("script") is None and page.find("img") is None and page.find("i") is None, path
        assert "<script>" not in response.text and "<i onmouseover" not in response.text, path
    worker_page = BeautifulSoup(dash.get(worker_path).text, "html.parser")
    assert "<i onmouseover=x>" in worker_page.h1.get_text()  # type: ignore[union-attr]
    evidence_page = BeautifulSoup(dash.get(evidence_path).text, "html.parser").get_text()
    assert "alert('evidence')" in evidence_page and "alert('answer')" in evidence_page
    # A reviewer's note is stored as typed and shown as text in the audit trail.
    note = "<b>careless</b><script>alert('note')</script>"
    done = dash.post(
        f"/dashboard/workers/{seeded.campaign_id}/%3Ci%20onmouseover=x%3E/review", action="clear", note=note
    )
    assert done.status_code == 200 and "<script>alert('note')" not in done.text
    assert note in BeautifulSoup(done.text, "html.parser").get_text()


@pytest.mark.parametrize("path", ["review", "decide", "results", "signout"])
def test_every_post_needs_the_csrf_token(live_server, requester_sessions, path: str) -> None:
    seeded = seed_campaign(requester_sessions)
    dash = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    url = {
        "review": f"/dashboard/workers/{seeded.campaign_id}/{seeded.worker_id}/review",
        "decide": f"/dashboard/submissions/{seeded.submission_id}/decide",
        "results": f"/dashboard/campaigns/{seeded.campaign_id}/results",
        "signout": "/dashboard/signout",
    }[path]
    refused = dash.http.post(live_server.url + url, data={"action": "confirm"}, allow_redirects=False)
    assert refused.status_code == 400
    unchanged(requester_sessions, seeded)
    assert dash.get("/dashboard/").status_code == 200  # still signed in


def test_signing_in_needs_the_csrf_token(live_server, requester_sessions) -> None:
    name = make_user(requester_sessions, "admin")
    http = requests.Session()
    refused = http.post(live_server.url + "/dashboard/signin", data={"username": name, "password": PASSWORD})
    assert refused.status_code == 400
    assert http.get(live_server.url + "/dashboard/", allow_redirects=False).status_code == 302


def test_staff_commands_create_users_and_assign_campaigns(live_server, settings, requester_sessions) -> None:
    seeded = seed_campaign(requester_sessions)
    env = {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_PUBLIC_URL": "https://crowd.example.org",
        # Never on the command line: ``staff create`` reads it from here (or asks).
        "HITFORGE_STAFF_PASSWORD": PASSWORD,
    }
    runner = CliRunner()
    reviewer, owner = f"rev-{uuid.uuid4().hex[:6]}", f"own-{uuid.uuid4().hex[:6]}"

    def run(*args: str) -> str:
        result = runner.invoke(main, ["staff", *args], env=env)
        assert result.exit_code == 0, result.output
        return result.output

    created = run("create", reviewer, "--role", "qa")
    assert "sign in at https://crowd.example.org/dashboard/signin" in created
    run("create", owner, "--role", "requester", "--access-key", seeded.access_key)
    refused = runner.invoke(main, ["staff", "create", "x" + owner, "--role", "requester"], env=env)
    assert refused.exit_code == 2 and "--access-key" in refused.output
    assert seeded.campaign_name not in Dashboard(live_server.url, reviewer).home()
    assert seeded.campaign_name in Dashboard(live_server.url, owner).home()

    assigned = run("assign", reviewer, seeded.campaign_name)
    assert "is now assigned" in assigned and "https://crowd.example.org/dashboard/queue" in assigned
    assert "was already assigned" in run("assign", reviewer, str(seeded.campaign_id))
    dash = Dashboard(live_server.url, reviewer)
    assert seeded.campaign_name in dash.home()
    assert dash.get(f"/dashboard/workers/{seeded.campaign_id}/{seeded.worker_id}").status_code == 200

    run("unassign", reviewer, str(seeded.campaign_id))
    assert dash.get(f"/dashboard/workers/{seeded.campaign_id}/{seeded.worker_id}").status_code == 404
    missing = runner.invoke(main, ["staff", "assign", reviewer, "no-such-campaign"], env=env)
    assert missing.exit_code == 2 and "no campaign no-such-campaign" in missing.output
