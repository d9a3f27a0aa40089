"""Spot checks: approved work drawn for a person, the verdicts, and what they do to the worker's record.

The draw is fixed per assignment and near the campaign's rate; each worker's
first approvals are always drawn; re-running the review draws nothing more.
Reviewers see only their campaigns' checks, record a verdict once (with an
audit row naming them), and a disagreement counts on the worker's record and
flags them at the policy's threshold, while approved work stays approved.
"""

from __future__ import annotations

import uuid
from typing import Any

import requests
from bs4 import BeautifulSoup
from sqlalchemy import func, select
from werkzeug.security import generate_password_hash

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality import spot_checks
from hits.requester.quality.review_queue import review_queue
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    ReviewAction,
    StaffCampaign,
    StaffUser,
    Submission,
    WorkerStats,
)
from hits.requester.tables.quality import SpotCheck
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_session
from tests.server.test_review_queue import seed

PASSWORD = "a-spot-check-password"


def with_rule(requester_sessions, campaign_id: int, **rule: Any) -> None:  # type: ignore[no-untyped-def]
    """Set the campaign's ``spot_checks`` policy."""
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        quality = dict(campaign.spec.get("quality", {}))
        quality["spot_checks"] = rule
        campaign.spec = {**campaign.spec, "quality": quality}


def approved_work(requester_sessions, count: int = 3, **rule: Any) -> tuple[int, str, str, list[str]]:  # type: ignore[no-untyped-def]
    """A campaign with ``count`` approved assignments of one worker, each drawn for a spot check."""
    campaign_id, name, worker_id, assignments = seed(
        requester_sessions, held=count, flagged=False, decision="approve", gold=(4, 4)
    )
    with_rule(requester_sessions, campaign_id, **({"rate": 1.0, "first_per_worker": 0} | rule))
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        work = session.scalars(select(Submission).where(Submission.assignment_id.in_(assignments))).all()
        policy = QualityPolicy.model_validate(campaign.spec["quality"])
        assert len(spot_checks.sample_approved(session, campaign, policy, work)) == count
    return campaign_id, name, worker_id, assignments


def check_ids(requester_sessions, assignments: list[str]) -> list[int]:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return list(
            session.scalars(
                select(SpotCheck.id).where(SpotCheck.assignment_id.in_(assignments)).order_by(SpotCheck.id)
            )
        )


def reviewer(base: str, requester_sessions, *campaign_ids: int) -> tuple[requests.Session, str]:  # type: ignore[no-untyped-def]
    """A signed-in QA reviewer assigned to ``campaign_ids``, and its name."""
    name = f"spot-{uuid.uuid4().hex[:6]}"
    with session_scope(requester_sessions) as session:
        user = StaffUser(username=name, password_hash=generate_password_hash(PASSWORD), role="qa")
        session.add(user)
        session.flush()
        session.add_all(StaffCampaign(staff_user_id=user.id, campaign_id=c) for c in campaign_ids)
    http = requests.Session()
    token = _token(http.get(base + "/dashboard/signin").text)
    signed = http.post(
        base + "/dashboard/signin", data={"csrf_token": token, "username": name, "password": PASSWORD}
    )
    assert signed.status_code == 200
    return http, name


def _token(page: str) -> str:
    found = BeautifulSoup(page, "html.parser").find("input", attrs={"name": "csrf_token"})
    assert found is not None
    return str(found["value"])


def post_verdict(http: requests.Session, base: str, assignment_id: str, verdict: str, note: str = "") -> str:
    """Open the assignment's evidence page and post its spot-check form; the page it lands on."""
    page = BeautifulSoup(http.get(f"{base}/dashboard/assignments/{assignment_id}").text, "html.parser")
    form = page.find("section", id="spot-check").find("form")  # type: ignore[union-attr]
    assert form is not None
    fields = {i["name"]: i["value"] for i in form.find_all("input", attrs={"type": "hidden"})}
    response = http.post(base + str(form["action"]), data={**fields, "verdict": verdict, "note": note})
    assert response.status_code == 200
    return response.text


# --- the draw -----------------------------------------------------------------------------------


def test_the_draw_is_fixed_per_assignment_and_near_the_rate() -> None:
    ids = [f"3SPOT{n:08d}" for n in range(20_000)]
    first = [spot_checks.draw(7, 0, a) for a in ids]
    assert first == [spot_checks.draw(7, 0, a) for a in ids]
    assert all(0 <= x < 1 for x in first)
    for rate in (0.02, 0.1, 0.5):
        share = sum(x < rate for x in first) / len(ids)
        # Five standard deviations of a binomial share over 20,000 draws.
        assert abs(share - rate) < 5 * (rate * (1 - rate) / len(ids)) ** 0.5
    # Another campaign (or seed) draws afresh: not the same assignments each time.
    other = [spot_checks.draw(8, 0, a) < 0.1 for a in ids]
    assert other != [x < 0.1 for x in first]


def test_sampling_over_many_approvals_keeps_the_rate_and_draws_each_once(requester_sessions) -> None:
    campaign_id, _, worker_id, _ = seed(requester_sessions, held=1, flagged=False, decision="approve")
    rule = {"rate": 0.1, "first_per_worker": 0}
    with_rule(requester_sessions, campaign_id, **rule)
    # Stand-ins for approved submissions: the draw reads their ids, assignment and worker only.
    work = [
        Submission(id=n, assignment_id=f"3M{campaign_id}x{n:06d}", worker_id=f"W{n % 40}")
        for n in range(1, 3001)
    ]
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        policy = QualityPolicy.model_validate(campaign.spec["quality"])
        drawn = spot_checks.sample_approved(session, campaign, policy, work)
        assert 0.07 < len(drawn) / len(work) < 0.13
        expected = {s.assignment_id for s in work if spot_checks.draw(campaign.id, 0, s.assignment_id) < 0.1}
        assert {c.assignment_id for c in drawn} == expected
        assert {c.reason for c in drawn} == {"sample"}
        session.flush()
        # Approved again (a retried batch, a second pass): nothing more is drawn.
        assert spot_checks.sample_approved(session, campaign, policy, work) == []
        count = session.scalar(
            select(func.count()).select_from(SpotCheck).where(SpotCheck.campaign_id == campaign.id)
        )
        assert count == len(expected)


def test_each_workers_first_approvals_are_always_drawn_and_rate_zero_draws_no_more(
    requester_sessions,
) -> None:
    campaign_id, *_ = seed(requester_sessions, held=1, flagged=False, decision="approve")
    with_rule(requester_sessions, campaign_id, rate=0, first_per_worker=2)
    work = [
        Submission(id=n, assignment_id=f"3F{campaign_id}x{n:04d}", worker_id=f"W{n % 3}")
        for n in range(1, 16)
    ]
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        policy = QualityPolicy.model_validate(campaign.spec["quality"])
        # Offered out of order, in two batches: still each worker's two lowest ids.
        drawn = spot_checks.sample_approved(session, campaign, policy, list(reversed(work[:7])))
        drawn += spot_checks.sample_approved(session, campaign, policy, work[7:])
        assert spot_checks.sample_approved(session, campaign, policy, work) == []
    by_worker: dict[str, list[int]] = {}
    for s in work:
        by_worker.setdefault(s.worker_id, []).append(s.id)
    expected = {f"3F{campaign_id}x{n:04d}" for ids in by_worker.values() for n in sorted(ids)[:2]}
    assert {c.assignment_id for c in drawn} == expected
    assert {c.reason for c in drawn} == {"first"}
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        off = QualityPolicy.model_validate({"spot_checks": {"rate": 0, "first_per_worker": 0}})
        assert spot_checks.sample_approved(session, campaign, off, work) == []


def test_the_review_pipeline_draws_its_approvals_once_and_pays_them_as_before(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    quality = {
        "accuracy_threshold": 0.6,
        "confidence": 0.8,
        "min_gold": 2,
        "spot_checks": {"rate": 0.5, "first_per_worker": 1},
    }
    name = f"spot-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=4,
        name=name,
        quality=quality,
        gold_per_hit=2,
    )
    # Every answer right: a diligent worker (95%) who misses a gold item on their last HIT has that
    # HIT held back under the worker model (work after a dip is approved on its own evidence), and
    # this test is about drawing approvals, not about the rule.
    bot = campaign_bot(live_server.url, f"{name}-good", Profile("perfect", 1.0), truth, name)
    assert bot.run(max_hits=4).submitted == 4
    review(requester_sessions, market)
    worker_id = bot.result.worker_id
    with session_scope(requester_sessions) as session:
        approved = session.scalars(
            select(Submission)
            .where(Submission.worker_id == worker_id, Submission.decision == "approve")
            .order_by(Submission.id)
        ).all()
        assert len(approved) == 4
        checks = {
            c.assignment_id: c.reason
            for c in session.scalars(select(SpotCheck).where(SpotCheck.campaign_id == campaign_id))
        }
        queued = set(
            session.scalars(
                select(OutboxEntry.target).where(
                    OutboxEntry.campaign_id == campaign_id, OutboxEntry.action == "approve"
                )
            )
        )
    expected = {approved[0].assignment_id: "first"} | {
        s.assignment_id: "sample"
        for s in approved[1:]
        if spot_checks.draw(campaign_id, 0, s.assignment_id) < 0.5
    }
    assert checks == expected
    # Not delayed: every approval, drawn or not, is queued and applied to the marketplace.
    assert queued == {s.assignment_id for s in approved}
    for s in approved:
        assert (
            mturk.get_assignment(AssignmentId=s.assignment_id)["Assignment"]["AssignmentStatus"] == "Approved"
        )
    # The review runs again (the next sync): nothing more is drawn.
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        again = session.scalar(
            select(func.count()).select_from(SpotCheck).where(SpotCheck.campaign_id == campaign_id)
        )
    assert again == len(expected)


# --- the dashboard ------------------------------------------------------------------------------


def test_the_list_shows_a_reviewer_only_the_checks_of_its_campaigns(live_server, requester_sessions) -> None:
    mine = approved_work(requester_sessions, count=2)
    theirs = approved_work(requester_sessions, count=1)
    http, _ = reviewer(live_server.url, requester_sessions, mine[0])
    page = http.get(live_server.url + "/dashboard/spot-checks")
    assert page.status_code == 200
    table = BeautifulSoup(page.text, "html.parser").find("table", id="spot-checks")
    assert table is not None
    text = table.get_text(" ")
    assert all(a in text for a in mine[3]) and mine[1] in text
    assert theirs[3][0] not in text and theirs[1] not in text
    # Another campaign's check, its evidence page and a verdict on it: as if they did not exist.
    assert http.get(f"{live_server.url}/dashboard/assignments/{theirs[3][0]}").status_code == 404
    token = _token(page.text)
    [their_check] = check_ids(requester_sessions, theirs[3])
    refused = http.post(
        f"{live_server.url}/dashboard/spot-checks/{their_check}",
        data={"csrf_token": token, "verdict": "disagree"},
    )
    assert refused.status_code == 404
    with session_scope(requester_sessions) as session:
        assert session.get(SpotCheck, their_check).verdict is None  # type: ignore[union-attr]
    # Filtered by campaign and state; an admin sees both campaigns.
    filtered = http.get(live_server.url + f"/dashboard/spot-checks?campaign={mine[0]}&state=checked").text
    assert "No spot check to show" in filtered
    admin = staff_session(live_server.url, requester_sessions)
    for campaign_id, _, _, assignments in (mine, theirs):
        listed = admin.get(live_server.url + f"/dashboard/spot-checks?campaign={campaign_id}").text
        assert all(a in listed for a in assignments)


def test_a_verdict_is_recorded_once_in_the_audit_log_and_approved_work_stays_approved(
    live_server, requester_sessions
) -> None:
    campaign_id, _, worker_id, assignments = approved_work(requester_sessions, count=2)
    http, name = reviewer(live_server.url, requester_sessions, campaign_id)
    landed = post_verdict(
        http, live_server.url, assignments[0], "disagree", note="labels do not match the picture"
    )
    assert "Spot check recorded: you disagreed" in landed
    assert "1 disagreed of 1 checked" in BeautifulSoup(landed, "html.parser").find(id="spot-tally").get_text()  # type: ignore[union-attr]
    # The same form posted again (a double click, a second tab): refused, counted once.
    [first_check, _] = check_ids(requester_sessions, assignments)
    again = http.post(
        f"{live_server.url}/dashboard/spot-checks/{first_check}",
        data={"csrf_token": _token(landed), "verdict": "agree"},
    )
    assert again.status_code == 200 and "Nothing recorded" in again.text
    with session_scope(requester_sessions) as session:
        check = session.get(SpotCheck, first_check)
        assert (
            check is not None
            and check.verdict == "disagree"
            and check.note == "labels do not match the picture"
        )
        actions = session.scalars(select(ReviewAction).where(ReviewAction.worker_id == worker_id)).all()
        assert [a.action for a in actions] == ["spot check disagree"]
        assert actions[0].assignments == [assignments[0]] and actions[0].evidence_sha256
        decisions = session.scalars(
            select(Submission.decision).where(Submission.worker_id == worker_id)
        ).all()
        assert decisions == ["approve", "approve"]
        assert session.scalar(select(OutboxEntry.id).where(OutboxEntry.target.in_(assignments))) is None
        summary = spot_checks.spot_check_summary(session, campaign_id, worker_id)
    assert (summary.drawn, summary.waiting, summary.agreed, summary.disagreed) == (2, 1, 0, 1)
    assert summary.disagreement_rate == 1.0
    log = BeautifulSoup(
        http.get(f"{live_server.url}/dashboard/audit?campaign={campaign_id}").text, "html.parser"
    )
    row = log.find("table", id="audit-log").find("tbody").find("tr").get_text(" ")  # type: ignore[union-attr]
    assert name in row and "disagreed with the approval" in row and assignments[0] in row


def test_disagreements_flag_the_worker_at_the_threshold_for_a_person(live_server, requester_sessions) -> None:
    campaign_id, _, worker_id, assignments = approved_work(requester_sessions, count=4, flag_after=2)
    http, _ = reviewer(live_server.url, requester_sessions, campaign_id)
    post_verdict(http, live_server.url, assignments[0], "disagree")
    post_verdict(http, live_server.url, assignments[1], "agree")
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker_id))
        assert stats is not None and not stats.flagged  # one disagreement: not yet
    landed = post_verdict(http, live_server.url, assignments[2], "disagree")
    assert "now flagged for a reviewer" in landed
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker_id))
        assert stats is not None and stats.flagged and stats.flag_review is None
        assert (stats.flag_reason or "").startswith(
            "spot checks: reviewers disagreed with 2 of the worker's 3"
        )
        [row] = review_queue(session, {campaign_id}).rows
        assert row.worker_id == worker_id and row.reason == "flagged"
        # Flagged, not rejected: the approvals stand and nothing is queued against them.
        assert set(session.scalars(select(Submission.decision).where(Submission.worker_id == worker_id))) == {
            "approve"
        }
        assert session.scalar(select(OutboxEntry.id).where(OutboxEntry.target.in_(assignments))) is None
    queue = http.get(live_server.url + "/dashboard/queue").text
    assert worker_id in queue and "spot checks: reviewers disagreed" in queue


def test_a_cleared_worker_is_not_flagged_again_and_flag_after_zero_never_flags(
    live_server, requester_sessions
) -> None:
    cleared = approved_work(requester_sessions, count=1, flag_after=1)
    never = approved_work(requester_sessions, count=2, flag_after=0)
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (cleared[0], cleared[2]))
        assert stats is not None
        stats.flag_review = "clear"
    http, _ = reviewer(live_server.url, requester_sessions, cleared[0], never[0])
    post_verdict(http, live_server.url, cleared[3][0], "disagree")
    for assignment_id in never[3]:
        post_verdict(http, live_server.url, assignment_id, "disagree")
    with session_scope(requester_sessions) as session:
        for campaign_id, _, worker_id, _ in (cleared, never):
            stats = session.get(WorkerStats, (campaign_id, worker_id))
            assert stats is not None and not stats.flagged
        assert spot_checks.spot_check_summary(session, never[0], never[2]).disagreed == 2


def test_hostile_input_is_answered_with_4xx(live_server, requester_sessions) -> None:
    campaign_id, _, _, assignments = approved_work(requester_sessions, count=1)
    http, _ = reviewer(live_server.url, requester_sessions, campaign_id)
    base = live_server.url
    token = _token(http.get(base + "/dashboard/spot-checks").text)
    [check] = check_ids(requester_sessions, assignments)
    for path in ("999999999", "99999999999999999999999", "-1", "abc", "0"):
        response = http.post(
            f"{base}/dashboard/spot-checks/{path}", data={"csrf_token": token, "verdict": "agree"}
        )
        assert response.status_code in (404, 405), path
    assert http.post(f"{base}/dashboard/spot-checks/{check}", data={"verdict": "agree"}).status_code == 400
    for verdict in ("", "approve", "x" * 5000):
        response = http.post(
            f"{base}/dashboard/spot-checks/{check}", data={"csrf_token": token, "verdict": verdict}
        )
        assert response.status_code == 400
    listed = http.get(
        base + "/dashboard/spot-checks",
        params={
            "campaign": "99999999999999999999",
            "page": "9" * 30,
            "state": "<script>",
            "reason": "'; drop",
        },
    )
    assert listed.status_code == 200 and "<script>" not in listed.text
    # Signed out: sent to sign in, nothing recorded.
    anonymous = requests.post(
        f"{base}/dashboard/spot-checks/{check}", data={"verdict": "agree"}, allow_redirects=False
    )
    assert anonymous.status_code in (302, 400)
    with session_scope(requester_sessions) as session:
        assert session.get(SpotCheck, check).verdict is None  # type: ignore[union-attr]


def test_req0019_creates_the_table_the_model_declares_and_downgrade_drops_it(tmp_path) -> None:
    from alembic import command
    from sqlalchemy import create_engine, inspect

    from hits.schema import alembic_config, upgrade_side

    url = f"sqlite:///{tmp_path / 'requester.sqlite'}"
    assert "req0019" in upgrade_side("requester", url).applied
    engine = create_engine(url)
    try:
        columns = {c["name"]: c for c in inspect(engine).get_columns("rq_spot_checks")}
        model = SpotCheck.__table__
        assert set(columns) == {c.name for c in model.columns}
        assert all(columns[c.name]["nullable"] == c.nullable for c in model.columns)
        uniques = inspect(engine).get_unique_constraints("rq_spot_checks")
        assert [u["column_names"] for u in uniques] == [["assignment_id"]]
        indexes = {i["name"]: i["column_names"] for i in inspect(engine).get_indexes("rq_spot_checks")}
        assert indexes["ix_rq_spot_checks_campaign_worker"] == ["campaign_id", "worker_id"]
        command.downgrade(alembic_config("requester", url), "req0018")
        assert "rq_spot_checks" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
