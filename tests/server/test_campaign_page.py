"""A requester watching and steering a campaign on the dashboard, checked against the marketplace.

The campaign page's figures are compared with what boto3 reads from the running
marketplace; pausing, resuming, extending and cancelling go through the outbox
to the marketplace's HIT expiry, each logged with the user's name; the items
list, the plots and the downloads are read as a person (or their script) would.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from bs4 import BeautifulSoup
from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.campaigns.progress import throughput
from hits.requester.quality import outbox
from hits.requester.quality.pipeline import finish_campaigns
from hits.requester.tables.campaigns import (
    Campaign,
    CampaignResult,
    Item,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    StaffCampaign,
    StaffUser,
    Submission,
)
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session


def _csrf(page: str) -> str:
    return str(BeautifulSoup(page, "html.parser").find("input", attrs={"name": "csrf_token"})["value"])  # type: ignore[index]


def _apply(sessions, market, campaign_id: int) -> None:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        ids = list(
            session.scalars(
                select(OutboxEntry.id)
                .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status == "pending")
                .order_by(OutboxEntry.id)
            )
        )
    report = outbox.apply_entries(sessions, market, ids)
    assert not report.failures, report.failures


def _hit_states(mturk, campaign_hits: set[str]) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        h["HITId"]: h["HITStatus"]
        for h in mturk.list_hits(MaxResults=100)["HITs"]
        if h["HITId"] in campaign_hits
    }


def test_the_campaign_page_matches_the_marketplace_and_steers_the_campaign(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    name = f"page-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path / "data",
        market,
        requester_sessions,
        live_server.url,
        hits=4,
        name=name,
        assignments_per_hit=2,
    )
    bot = campaign_bot(live_server.url, f"{name}-a", PROFILES["diligent"], truth, name)
    assert bot.run(max_hits=2).submitted == 2
    review(requester_sessions, market)
    http = staff_session(live_server.url, requester_sessions)
    base = f"{live_server.url}/dashboard/campaigns/{campaign_id}"
    home = BeautifulSoup(http.get(f"{live_server.url}/dashboard/").text, "html.parser")
    assert home.find("a", string=name)["href"].endswith(f"/campaigns/{campaign_id}")  # type: ignore[index]

    page = BeautifulSoup(http.get(base).text, "html.parser")
    with session_scope(requester_sessions) as session:
        hit_ids = set(
            session.scalars(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id))
        )
    submitted = sum(
        len(
            mturk.list_assignments_for_hit(HITId=h, AssignmentStatuses=["Submitted", "Approved", "Rejected"])[
                "Assignments"
            ]
        )
        for h in hit_ids
    )
    assert submitted == 2
    bar = page.find("progress", id="progress-bar")
    assert bar is not None and (bar["value"], bar["max"]) == ("2", str(4 * 2))
    assert "2 of 8 assignments submitted" in page.get_text(" ")
    assert "4" in page.find("table", id="hits-by-state").get_text()  # type: ignore[union-attr]
    money = page.find(id="money").get_text(" ")  # type: ignore[union-attr]
    with session_scope(requester_sessions) as session:
        budget = session.get(Campaign, campaign_id).budget  # type: ignore[union-attr]
    assert f"${budget:.2f}" in money
    assert "submissions an hour" in page.find(id="finish").get_text()  # type: ignore[union-attr]
    for plot in ("throughput.svg", "gold.svg"):
        drawn = http.get(f"{base}/plots/{plot}")
        assert drawn.status_code == 200 and drawn.headers["Content-Type"].startswith("image/svg+xml")
        assert drawn.text.lstrip().startswith("<?xml") and "<script" not in drawn.text
        assert page.find("img", src=lambda s, p=plot: s and s.endswith(p)).get("alt")  # type: ignore[union-attr]

    # The items, with every answer given; downloads parse as what they say they are.
    items = BeautifulSoup(http.get(f"{base}/items").text, "html.parser")
    assert "8 items" in items.find(id="count").get_text()  # type: ignore[union-attr]
    answered = [s for s in items.select("section.slot") if s.find("table")]
    assert answered, "the worked HITs' items list their answers"
    lines = http.get(f"{base}/download/answers.jsonl").text.splitlines()
    assert len(lines) == 2 and all(json.loads(line)["worker_id"] == bot.result.worker_id for line in lines)
    rows = list(csv.DictReader(io.StringIO(http.get(f"{base}/download/batch.csv").text)))
    assert {r["AssignmentId"] for r in rows} == {json.loads(line)["assignment_id"] for line in lines}
    labels = list(csv.DictReader(io.StringIO(http.get(f"{base}/download/labels.csv").text)))
    assert labels and all(json.loads(r["label"]) is not None for r in labels)
    assert http.get(f"{base}/download/secrets.txt").status_code == 404

    # Pause: every open HIT expires on the marketplace, and no worker finds the campaign's work.
    token = _csrf(http.get(base).text)
    paused = http.post(f"{base}/control", data={"csrf_token": token, "change": "pause", "note": "checking"})
    assert "paused" in paused.text
    _apply(requester_sessions, market, campaign_id)
    assert all(state != "Assignable" for state in _hit_states(mturk, hit_ids).values())
    review(requester_sessions, market)  # the sync runs while paused: open HITs stay open
    with session_scope(requester_sessions) as session:
        assert session.get(Campaign, campaign_id).status == "paused"  # type: ignore[union-attr]
        assert finish_campaigns(session, market.access_key_id).campaigns == []
    late = campaign_bot(live_server.url, f"{name}-b", PROFILES["diligent"], truth, name)
    assert late.run(max_hits=1).submitted == 0
    # Resume: open again; the late worker finds work.
    http.post(f"{base}/control", data={"csrf_token": token, "change": "resume"})
    _apply(requester_sessions, market, campaign_id)
    assert "Assignable" in _hit_states(mturk, hit_ids).values()
    assert late.run(max_hits=1).submitted == 1
    # Extend, then a budget below what is committed is refused, one above it taken.
    http.post(f"{base}/control", data={"csrf_token": token, "change": "extend", "hours": "48"})
    _apply(requester_sessions, market, campaign_id)
    refused = http.post(f"{base}/control", data={"csrf_token": token, "change": "budget", "budget": "0.01"})
    assert "Nothing done: the campaign has committed" in refused.text
    raised = http.post(
        f"{base}/control", data={"csrf_token": token, "change": "budget", "budget": str(budget + 5)}
    )
    assert f"set to ${budget + 5:.2f}" in raised.text
    # Cancel: no new work; the submitted work is reviewed, then the campaign ends as cancelled.
    http.post(f"{base}/control", data={"csrf_token": token, "change": "cancel"})
    _apply(requester_sessions, market, campaign_id)
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        finish_campaigns(session, market.access_key_id)
    with session_scope(requester_sessions) as session:
        assert session.get(Campaign, campaign_id).status == "cancelled"  # type: ignore[union-attr]
        logged = list(
            session.scalars(
                select(ReviewAction.action)
                .where(ReviewAction.campaign_id == campaign_id)
                .order_by(ReviewAction.id)
            )
        )
    assert logged == [
        "campaign pause",
        "campaign resume",
        "campaign extend",
        "campaign budget",
        "campaign cancel",
    ]
    after = BeautifulSoup(http.get(base).text, "html.parser")
    assert "cancelled" in after.find(id="status").get_text()  # type: ignore[union-attr]
    assert not after.find("button", attrs={"value": "pause"})
    audit = http.get(f"{live_server.url}/dashboard/audit?campaign={campaign_id}").text
    assert "paused the campaign" in audit and "cancelled the campaign" in audit


def test_a_campaign_outside_the_users_scope_is_a_404_everywhere(live_server, requester_sessions) -> None:
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"hidden-{uuid.uuid4().hex[:6]}", template="rating", spec={}, budget=Decimal("1")
        )
        session.add(campaign)
        session.flush()
        campaign_id = campaign.id
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    base = f"{live_server.url}/dashboard/campaigns/{campaign_id}"
    for path in ("", "/items", "/plots/gold.svg", "/plots/throughput.svg", "/download/answers.jsonl"):
        assert qa.get(base + path).status_code == 404, path
    token = _csrf(qa.get(f"{live_server.url}/dashboard/").text)
    assert qa.post(f"{base}/control", data={"csrf_token": token, "change": "pause"}).status_code == 404
    admin = staff_session(live_server.url, requester_sessions)
    for bad in ("?page=99999999999999999999", "?page=%C2%B2", "?q=%00%27"):
        assert admin.get(f"{base}/items{bad}").status_code in (200, 400, 404), bad


def test_throughput_counts_each_submission_in_its_hour_on_either_database(requester_sessions) -> None:
    now = datetime(2026, 11, 28, 13, 40, tzinfo=UTC)
    times = [now - timedelta(minutes=m) for m in (1, 39, 41, 61, 125, 60 * 47 + 10, 60 * 60)]
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"tp-{uuid.uuid4().hex[:6]}", template="rating", spec={}, budget=Decimal("1")
        )
        session.add(campaign)
        session.flush()
        hit = PublishedHIT(campaign_id=campaign.id, status="open", mturk_hit_id="3TP" + uuid.uuid4().hex[:10])
        session.add(hit)
        session.flush()
        for n, when in enumerate(times):
            session.add(
                Submission(
                    assignment_id=f"3TA{n}{uuid.uuid4().hex[:10]}",
                    published_hit_id=hit.id,
                    worker_id="ATHROUGHPUT",
                    answers={},
                    submitted_at=when,
                )
            )
        campaign_id = campaign.id
    # Counted by the commit (hits.requester.tables.counters), read as the page would, afterwards.
    with session_scope(requester_sessions) as session:
        counted = throughput(session, campaign_id, now)
    # 13:00-14:00 holds 13:39 and 13:01; 12:00 holds 12:59 and 12:39; 11:00 holds 11:35;
    # 47 h 10 min ago is the first hour of the window; 60 h ago is before it.
    by_hour = {s.strftime("%d %H"): c for s, c in zip(counted.starts, counted.counts, strict=True)}
    assert by_hour["28 13"] == 2 and by_hour["28 12"] == 2 and by_hour["28 11"] == 1
    assert sum(counted.counts) == 6 and counted.starts[0] == datetime(2026, 11, 26, 14, tzinfo=UTC)
    assert counted.recent_rate == (1 + 2 + 2) / 3


def test_the_campaign_page_counts_the_stored_labels_without_reading_them(
    live_server, requester_sessions
) -> None:
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"labels-{uuid.uuid4().hex[:6]}",
            template="rating",
            spec={},
            budget=Decimal("1"),
            status="done",
        )
        session.add(campaign)
        session.flush()
        labels = [{"item_id": f"i{n}", "label": 3, "confidence": 0.9, "votes": 2} for n in range(3)]
        session.add(CampaignResult(campaign_id=campaign.id, method="majority", labels=labels, assignments=6))
        campaign_id = campaign.id
    http = staff_session(live_server.url, requester_sessions)
    page = BeautifulSoup(http.get(f"{live_server.url}/dashboard/campaigns/{campaign_id}").text, "html.parser")
    assert page.find(id="agreement").get_text().startswith("3 items aggregated (majority) from 6 assignments")  # type: ignore[union-attr]


def test_every_page_of_items_lists_its_own_fifty_in_order_early_and_late(
    live_server, requester_sessions
) -> None:
    # 120 items, one added after the rest (a later id): pages of 50, 50 and 20, counted from either end.
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"items-{uuid.uuid4().hex[:6]}",
            template="rating",
            spec={},
            budget=Decimal("1"),
            status="done",
        )
        session.add(campaign)
        session.flush()
        session.add_all(
            Item(campaign_id=campaign.id, position=n, external_id=f"item-{n:03d}", payload={})
            for n in range(119)
        )
        campaign_id = campaign.id
    with session_scope(requester_sessions) as session:
        session.add(Item(campaign_id=campaign_id, position=119, external_id="item-119", payload={}))
    http = staff_session(live_server.url, requester_sessions)
    base = f"{live_server.url}/dashboard/campaigns/{campaign_id}/items"
    listed = []
    for page in (1, 2, 3):
        soup = BeautifulSoup(http.get(f"{base}?page={page}").text, "html.parser")
        assert soup.find(id="count").get_text().startswith("120 items")  # type: ignore[union-attr]
        listed.append([h.get_text() for h in soup.find_all("h2")])
    assert [len(p) for p in listed] == [50, 50, 20]
    assert sum(listed, []) == [f"item-{n:03d}" for n in range(120)]
    found = BeautifulSoup(http.get(f"{base}?q=item-11").text, "html.parser")
    assert found.find(id="count").get_text().startswith("10 items matching")  # type: ignore[union-attr]


def test_a_qa_reviewer_reviews_a_campaign_but_cannot_change_its_course_or_its_money(
    live_server, requester_sessions
) -> None:
    with session_scope(requester_sessions) as session:
        campaign = Campaign(
            name=f"qa-scope-{uuid.uuid4().hex[:6]}",
            template="rating",
            spec={},
            budget=Decimal("10.00"),
            status="running",
        )
        session.add(campaign)
        session.flush()
        campaign_id = campaign.id
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    with session_scope(requester_sessions) as session:
        user = session.scalar(select(StaffUser).order_by(StaffUser.id.desc()).limit(1))
        assert user is not None and user.role == "qa"
        session.add(StaffCampaign(staff_user_id=user.id, campaign_id=campaign_id))
    base = f"{live_server.url}/dashboard/campaigns/{campaign_id}"
    page = BeautifulSoup(qa.get(base).text, "html.parser")
    assert page.find(id="manage-owners") is not None  # says who may, instead of buttons that fail
    assert not page.find("button", attrs={"value": "pause"}) and not page.find("input", id="budget")
    token = _csrf(qa.get(base).text)
    for form in ({"change": "budget", "budget": "1000000.00"}, {"change": "pause"}, {"change": "cancel"}):
        assert qa.post(f"{base}/control", data={"csrf_token": token, **form}).status_code == 403, form
    resolve = {"csrf_token": token, "relay": "1", "answer": "done"}
    assert qa.post(f"{base}/relays/resolve", data=resolve).status_code == 403
    with session_scope(requester_sessions) as session:
        kept = session.get(Campaign, campaign_id)
        assert kept is not None and kept.budget == Decimal("10.00") and kept.status == "running"
    admin = staff_session(live_server.url, requester_sessions)
    form = {"csrf_token": _csrf(admin.get(base).text), "change": "budget", "budget": "12.00"}
    raised = admin.post(f"{base}/control", data=form)
    assert raised.status_code == 200 and "set to $12.00" in raised.text
