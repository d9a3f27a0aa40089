"""The QA dashboard: sign-in required, flagged workers with evidence, audited decisions on held work."""

from __future__ import annotations

import uuid

import requests
from bs4 import BeautifulSoup
from sqlalchemy import select
from werkzeug.security import generate_password_hash

from hits.db import session_scope
from hits.requester.quality.aggregation import store_results
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)


def staff_session(  # type: ignore[no-untyped-def]
    base: str, requester_sessions, role: str = "admin", access_key_id: str | None = None
) -> requests.Session:
    # An admin sees every campaign (roles and what each sees: test_dashboard_roles.py).
    name = f"{role}-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        password_hash = generate_password_hash("qa-password")
        session.add(
            StaffUser(username=name, password_hash=password_hash, role=role, access_key_id=access_key_id)
        )
    http = requests.Session()
    form = BeautifulSoup(http.get(base + "/dashboard/signin").text, "html.parser")
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[index]
    response = http.post(
        base + "/dashboard/signin", data={"csrf_token": token, "username": name, "password": "qa-password"}
    )
    assert response.status_code == 200 and "Campaigns" in response.text
    return http


def staff_in_browser(page, base: str, requester_sessions) -> requests.Session:  # type: ignore[no-untyped-def]
    """Sign a new admin in (``staff_session``) and give the Playwright ``page`` the same cookies."""
    http = staff_session(base, requester_sessions)
    page.context.add_cookies([{"name": c.name, "value": c.value or "", "url": base} for c in http.cookies])
    return http


def seed_held_work(requester_sessions) -> tuple[int, int, str]:  # type: ignore[no-untyped-def]
    worker_id = "A" + uuid.uuid4().hex[:13].upper()
    with session_scope(requester_sessions) as session:
        campaign = Campaign(name=f"dash-{worker_id}", template="rating", spec={}, budget=1)
        session.add(campaign)
        session.flush()
        published = PublishedHIT(campaign_id=campaign.id, status="complete", mturk_hit_id="3H" + worker_id)
        session.add(published)
        session.flush()
        submission = Submission(
            assignment_id="3A" + worker_id,
            published_hit_id=published.id,
            worker_id=worker_id,
            answers={"answers": [1]},
            decision="held",
            evidence={"gold_correct": 1, "gold_total": 4},
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
                flag_reason="gold accuracy 1/4",
            )
        )
        session.flush()
        return campaign.id, submission.id, worker_id


def test_the_dashboard_requires_a_staff_sign_in(live_server) -> None:
    response = requests.get(live_server.url + "/dashboard/", allow_redirects=False)
    assert response.status_code == 302 and "/dashboard/signin" in response.headers["Location"]


def test_reviewers_see_evidence_and_their_decisions_are_queued_and_audited(
    live_server, requester_sessions
) -> None:
    campaign_id, submission_id, worker_id = seed_held_work(requester_sessions)
    http = staff_session(live_server.url, requester_sessions)
    home = http.get(live_server.url + "/dashboard/").text
    assert worker_id in home and "gold accuracy 1/4" in home
    page = BeautifulSoup(
        http.get(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}").text, "html.parser"
    )
    form = page.find("form", action=f"/dashboard/submissions/{submission_id}/decide")
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[union-attr,index]
    done = http.post(
        f"{live_server.url}/dashboard/submissions/{submission_id}/decide",
        data={"csrf_token": token, "action": "reject", "note": "random answers"},
    )
    assert done.status_code == 200 and "Reject queued" in done.text
    # A second decision on the same work is refused.
    again = http.post(
        f"{live_server.url}/dashboard/submissions/{submission_id}/decide",
        data={"csrf_token": token, "action": "approve"},
    )
    assert "not waiting for review" in again.text
    with session_scope(requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
        audit = session.scalars(select(ReviewAction).where(ReviewAction.campaign_id == campaign_id)).all()
    assert [(e.action, e.target) for e in entries] == [("reject", "3A" + worker_id)]
    assert [a.note for a in audit] == ["random answers"]


def test_item_analysis_view_flags_items_from_graded_attempts(live_server, requester_sessions) -> None:
    from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
    from qualification import DEFAULT_BANK

    with session_scope(requester_sessions) as session:
        test = QualificationTest(
            name=f"items-{uuid.uuid4().hex[:6]}",
            bank_path=str(DEFAULT_BANK),
            qualification_type_id="3Q",
            access_key_id="AKIA",
        )
        session.add(test)
        session.flush()
        for n in range(10):  # "easy" everyone gets right; "tricky" only the weak workers get right
            strong = n < 5
            session.add(
                QualificationAttempt(
                    test_id=test.id,
                    worker_id=f"AW{n}",
                    seed=n,
                    score=90 if strong else 30,
                    correct_items={"easy": True, "tricky": not strong, "a": strong, "b": strong, "c": strong},
                )
            )
        test_id = test.id
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(
        http.get(f"{live_server.url}/dashboard/qualification/{test_id}/items").text, "html.parser"
    )
    rows = {tr.find_all("td")[0].text: tr.find_all("td")[4].text for tr in page.select("#items tbody tr")}
    assert "too easy" in rows["easy"].replace("_", " ")
    assert rows["tricky"] != "" and rows["a"] == ""


def test_clearing_a_flag_on_the_dashboard_approves_the_held_work_and_lists_nothing_held(
    live_server, requester_sessions
) -> None:
    campaign_id, submission_id, worker_id = seed_held_work(requester_sessions)
    http = staff_session(live_server.url, requester_sessions)
    home = BeautifulSoup(http.get(live_server.url + "/dashboard/").text, "html.parser")
    held = home.find("table", id="held")
    assert held is not None and worker_id in held.get_text()
    page_url = f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}"
    page = BeautifulSoup(http.get(page_url).text, "html.parser")
    form = page.find("form", action=f"/dashboard/workers/{campaign_id}/{worker_id}/review")
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[union-attr,index]
    # Without the CSRF token nothing is recorded.
    refused = http.post(form_url := page_url + "/review", data={"action": "clear"})
    assert refused.status_code == 400
    done = http.post(
        form_url, data={"csrf_token": token, "action": "clear", "note": "gold items were unclear"}
    )
    assert done.status_code == 200 and "Flag cleared for worker" in done.text and "Not flagged." in done.text
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker_id))
        submission = session.get(Submission, submission_id)
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
        assert stats is not None and not stats.flagged and stats.flag_review == "clear"
        assert submission is not None and submission.decision == "approve"
        assert submission.evidence is not None and submission.evidence["decided_by"] == "qa"
    assert [(e.action, e.target) for e in entries] == [("approve", "3A" + worker_id)]
    home_after = BeautifulSoup(http.get(live_server.url + "/dashboard/").text, "html.parser")
    held_after = home_after.find("table", id="held")
    assert held_after is None or worker_id not in held_after.get_text()


def test_stored_results_show_on_the_dashboard_and_can_be_asked_for_again(
    live_server, requester_sessions
) -> None:
    campaign_id, _, worker_id = seed_held_work(requester_sessions)
    with session_scope(requester_sessions) as session:
        # The seeded work is held from a flagged worker: nothing counts yet.
        row = store_results(session, campaign_id)
        assert (row.assignments, row.labels, row.agreement) == (0, [], None)
    http = staff_session(live_server.url, requester_sessions)
    home = BeautifulSoup(http.get(live_server.url + "/dashboard/").text, "html.parser")
    cell = next(
        tr for tr in home.find("table", id="campaigns").find_all("tr") if f"dash-{worker_id}" in tr.get_text()
    )
    assert "0 items by" in cell.get_text() and "alpha n/a" in cell.get_text()
    form = cell.find("form")
    token = form.find("input", attrs={"name": "csrf_token"})["value"]
    done = http.post(live_server.url + form["action"], data={"csrf_token": token})
    assert done.status_code == 200 and "are being computed" in done.text
    assert http.post(live_server.url + form["action"], data={}).status_code == 400  # no CSRF token
