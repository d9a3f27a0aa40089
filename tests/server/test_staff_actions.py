"""A reviewer's actions on a worker, from the dashboard to the marketplace and back.

Override a rejection, send a bonus with a reason, block and unblock, grant,
revoke and restore a qualification, send a message: each posted on the
dashboard as a person would, applied through the outbox to the running
marketplace (real boto3 reads what it did), once however often the form is
posted, with one audit row naming the reviewer. Refusals keep what was typed.
"""

from __future__ import annotations

import uuid
from decimal import Decimal

from bs4 import BeautifulSoup
from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.quality import outbox, qa_review
from hits.requester.quality.followups import committed_cost
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session

SOFT_BLOCK_STRICT = {
    "accuracy_threshold": 0.6,
    "confidence": 0.999,
    "min_gold": 2,
    "flagged_action": "reject",
    "flagged_worker": "soft_block",
}


def _form(page: str, name: str) -> dict[str, str]:
    """The hidden fields of the worker page's action form ``name`` (token, request token, form)."""
    soup = BeautifulSoup(page, "html.parser")
    marker = soup.find("input", attrs={"name": "form", "value": name})
    assert marker is not None, f"no {name} form on the page"
    form = marker.find_parent("form")
    return {str(i["name"]): str(i.get("value", "")) for i in form.find_all("input", attrs={"type": "hidden"})}


def _apply_pending(sessions, market, campaign_id: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Apply every pending outbox entry of the campaign (what the Celery task does); outcomes by action."""
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
    with session_scope(sessions) as session:
        return {
            e.action: e.target for e in session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(ids)))
        }


def _launch_worked(tmp_path, market, requester_sessions, live_server, quality=SOFT_BLOCK_STRICT):  # type: ignore[no-untyped-def]
    name = f"act-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path / "data",
        market,
        requester_sessions,
        live_server.url,
        hits=3,
        name=name,
        quality=quality,
        gold_per_hit=2,
    )
    bot = campaign_bot(live_server.url, f"{name}-w", PROFILES["copycat"], truth, name, seed=1)
    assert bot.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    return campaign_id, name, bot


def test_every_action_reaches_the_marketplace_once_and_the_log_names_the_reviewer(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, name, bot = _launch_worked(tmp_path, market, requester_sessions, live_server)
    worker_id = bot.result.worker_id
    base = f"{live_server.url}/dashboard"
    http = staff_session(live_server.url, requester_sessions)
    with session_scope(requester_sessions) as session:
        held = session.scalars(
            select(Submission.id).where(Submission.worker_id == worker_id, Submission.decision == "held")
        ).all()
        assert held, "the strict policy holds the flat worker's work for a person"
        admin = session.scalars(select(StaffUser).order_by(StaffUser.id.desc())).first()
        assert admin is not None
        qa_review.decide_held(session, held[0], "reject", admin.id, "flat", feedback="Flat ratings.")
        rejected = session.get(Submission, held[0])
        assert rejected is not None
        rejected_id, assignment_id = rejected.id, rejected.assignment_id
        block_type = session.get(Campaign, campaign_id).block_qualification_type_id  # type: ignore[union-attr]
    _apply_pending(requester_sessions, market, campaign_id)
    assert mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]["AssignmentStatus"] == "Rejected"

    # Override the rejection from the evidence page: paid, and the record counts it approved.
    page = http.get(f"{base}/assignments/{assignment_id}").text
    assert "Override the rejection: approve and pay this 1 assignment" in page
    token = BeautifulSoup(page, "html.parser").find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[index]
    for _ in range(2):  # a double click queues once
        done = http.post(
            f"{base}/submissions/{rejected_id}/override", data={"csrf_token": token, "note": "n"}
        )
        assert done.status_code == 200
    with session_scope(requester_sessions) as session:
        before = session.get(WorkerStats, (campaign_id, worker_id))
        assert before is not None
        rejected_before = before.rejected
    _apply_pending(requester_sessions, market, campaign_id)
    stored = mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]
    assert stored["AssignmentStatus"] == "Approved"
    with session_scope(requester_sessions) as session:
        record = session.get(WorkerStats, (campaign_id, worker_id))
        assert record is not None and record.rejected == rejected_before - 1

    # A bonus with a reason, posted twice with the same form: paid once.
    page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
    fields = _form(page, "bonus")
    data = {
        **fields,
        "amount": "0.75",
        "assignment": str(rejected_id),
        "reason": "Thanks for the extra care.",
    }
    assert "Pay this bonus to " + worker_id in page
    for _ in range(2):
        assert http.post(f"{base}/workers/{campaign_id}/{worker_id}/act", data=data).status_code == 200
    _apply_pending(requester_sessions, market, campaign_id)
    paid = mturk.list_bonus_payments(AssignmentId=assignment_id)["BonusPayments"]
    assert [(p["BonusAmount"], p["Reason"]) for p in paid] == [("0.75", "Thanks for the extra care.")]

    # Block, then unblock (which lifts the campaign's soft block too).
    page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
    blocked = {**_form(page, "block"), "reason": "Copied answers."}
    assert http.post(f"{base}/workers/{campaign_id}/{worker_id}/act", data=blocked).status_code == 200
    _apply_pending(requester_sessions, market, campaign_id)
    blocks = mturk.list_worker_blocks()["WorkerBlocks"]
    assert any(b["WorkerId"] == worker_id for b in blocks)
    page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
    assert "lift the block and this campaign's own block" in BeautifulSoup(page, "html.parser").get_text()
    assert (
        http.post(f"{base}/workers/{campaign_id}/{worker_id}/act", data=_form(page, "unblock")).status_code
        == 200
    )
    _apply_pending(requester_sessions, market, campaign_id)
    assert not any(b["WorkerId"] == worker_id for b in mturk.list_worker_blocks()["WorkerBlocks"])

    # Grant a score, revoke it, restore it: the marketplace holds the same score again.
    def change(how: str, value: str = "") -> None:
        page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
        data = {
            **_form(page, "qualification"),
            "qualification_type_id": block_type,
            "change": how,
            "value": value,
        }
        assert http.post(f"{base}/workers/{campaign_id}/{worker_id}/act", data=data).status_code == 200
        _apply_pending(requester_sessions, market, campaign_id)

    change("grant", "7")
    score = mturk.get_qualification_score(QualificationTypeId=block_type, WorkerId=worker_id)["Qualification"]
    assert (score["IntegerValue"], score["Status"]) == (7, "Granted")
    change("revoke")
    try:
        mturk.get_qualification_score(QualificationTypeId=block_type, WorkerId=worker_id)
        raise AssertionError("a revoked qualification is shown to no one")
    except mturk.exceptions.RequestError as exc:
        assert "the qualification is Revoked" in str(exc)
    change("restore")
    score = mturk.get_qualification_score(QualificationTypeId=block_type, WorkerId=worker_id)["Qualification"]
    assert (score["IntegerValue"], score["Status"]) == (7, "Granted")

    # A message the worker reads on the worker site.
    page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
    message = {
        **_form(page, "message"),
        "subject": "About the ratings",
        "message": "Please read each sentence.",
    }
    assert http.post(f"{base}/workers/{campaign_id}/{worker_id}/act", data=message).status_code == 200
    outcomes = _apply_pending(requester_sessions, market, campaign_id)
    assert "notify" in outcomes

    # The log names the reviewer once per action, and the profile lists what was done.
    with session_scope(requester_sessions) as session:
        logged = [
            (a.action, user)
            for a, user in session.execute(
                select(ReviewAction, StaffUser.username)
                .join(StaffUser, StaffUser.id == ReviewAction.staff_user_id)
                .where(ReviewAction.campaign_id == campaign_id, ReviewAction.worker_id == worker_id)
                .order_by(ReviewAction.id)
            )
        ]
    actions = [a for a, _ in logged]
    assert actions == [
        "reject",
        "override",
        "bonus",
        "block",
        "unblock",
        "grant qualification",
        "revoke qualification",
        "restore qualification",
        "message",
    ]
    assert all(user.startswith("admin-") for _, user in logged[1:])
    profile = BeautifulSoup(http.get(f"{base}/workers/{worker_id}").text, "html.parser")
    listed = profile.find("table", id="actions").get_text(" ")  # type: ignore[union-attr]
    for words in ("rejection overridden", "block lifted", "qualification revoked", "(score was 7)"):
        assert words in listed
    assert "$0.75 in bonuses paid" in profile.find(id="summary").get_text()  # type: ignore[union-attr]
    audit = http.get(f"{base}/audit?campaign={campaign_id}").text
    assert "approved a rejected assignment after all" in audit and "sent a bonus" in audit


def test_a_refused_action_says_why_keeps_what_was_typed_and_queues_nothing(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _, bot = _launch_worked(tmp_path, market, requester_sessions, live_server)
    worker_id = bot.result.worker_id
    base = f"{live_server.url}/dashboard"
    http = staff_session(live_server.url, requester_sessions)
    with session_scope(requester_sessions) as session:
        pending = session.scalar(select(OutboxEntry.id).order_by(OutboxEntry.id.desc()))
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        # Fifty cents left in the budget: a dollar's bonus does not fit.
        campaign.budget = committed_cost(session, campaign) + Decimal("0.50")
        some = session.scalars(select(Submission.id).where(Submission.worker_id == worker_id)).first()
    page = http.get(f"{base}/workers/{campaign_id}/{worker_id}").text
    url = f"{base}/workers/{campaign_id}/{worker_id}/act"
    cases = [
        ({"amount": "lots", "reason": "Kept text"}, "the amount is a sum in dollars"),
        ({"amount": "0.001", "reason": "Kept text"}, "dollars and cents"),
        ({"amount": "-1.00", "reason": "Kept text"}, "a bonus is between"),
        ({"amount": "NaN", "reason": "Kept text"}, "dollars and cents"),
        ({"amount": "50.00", "reason": "   "}, "The reason for the bonus is required"),
        ({"amount": "1.00", "reason": "Kept text", "assignment": "999999999"}, "choose one of this worker"),
        ({"amount": "1.00", "reason": "Kept text"}, "budget"),
    ]
    for fields, said in cases:
        data = {**_form(page, "bonus"), "assignment": str(some), **fields}
        refused = http.post(url, data=data)
        assert refused.status_code == 422, fields
        assert said in refused.text, (fields, said)
        kept = BeautifulSoup(refused.text, "html.parser")
        assert kept.find("textarea", id="bonus-reason").get_text() == fields["reason"]  # type: ignore[union-attr]
        assert kept.find("details", id="act-bonus").has_attr("open")  # type: ignore[union-attr]
    empty = http.post(url, data={**_form(page, "message"), "subject": "Hello", "message": ""})
    assert empty.status_code == 422 and "The message is required" in empty.text
    assert 'value="Hello"' in empty.text
    # Forged or broken posts: a clear 4xx, never a server error.
    assert http.post(url, data={**_form(page, "bonus"), "request_token": "x"}).status_code == 400
    assert http.post(url, data={**_form(page, "bonus"), "form": "pay-everyone"}).status_code == 400
    grant = {
        **_form(page, "qualification"),
        "qualification_type_id": "NOT-OURS",
        "change": "grant",
        "value": "1",
    }
    assert "not one of this campaign" in http.post(url, data=grant).text
    assert (
        http.post(f"{base}/workers/{campaign_id}/ANOBODY/act", data=_form(page, "bonus")).status_code == 404
    )
    assert http.post(f"{base}/submissions/99999999/override", data=_form(page, "bonus")).status_code == 404
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(OutboxEntry.id).order_by(OutboxEntry.id.desc())) == pending
    # Overriding work that is not rejected does nothing, and says so.
    with session_scope(requester_sessions) as session:
        held = session.scalars(
            select(Submission).where(Submission.worker_id == worker_id, Submission.decision == "held")
        ).first()
        assert held is not None
        held_id, held_assignment = held.id, held.assignment_id
    page = http.get(f"{base}/assignments/{held_assignment}").text
    assert "Override the rejection" not in page
    token = BeautifulSoup(page, "html.parser").find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[index]
    said = http.post(f"{base}/submissions/{held_id}/override", data={"csrf_token": token}).text
    assert "is not rejected: nothing to override" in said


def test_a_reviewer_cannot_act_on_a_campaign_not_assigned_to_them(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, _, bot = _launch_worked(tmp_path, market, requester_sessions, live_server)
    worker_id = bot.result.worker_id
    admin = staff_session(live_server.url, requester_sessions)
    fields = _form(
        admin.get(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}").text, "message"
    )
    qa = staff_session(live_server.url, requester_sessions, role="qa")
    page = BeautifulSoup(qa.get(f"{live_server.url}/dashboard/").text, "html.parser")
    token = page.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[index]
    data = {**fields, "csrf_token": str(token), "subject": "Hi", "message": "Not allowed."}
    assert qa.get(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}").status_code == 404
    assert (
        qa.post(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}/act", data=data).status_code
        == 404
    )
