"""Policies beyond approve/reject, applied through the real API: blocks, messages, bonuses, re-posts."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import select

from demo.crowd import Profile
from hits.db import session_scope, utcnow
from hits.market.models import WorkerMessage
from hits.requester.quality import followups, outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import Campaign, OutboxEntry, Submission, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign

CONFIDENT = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2}


def review(sessions, market) -> list[int]:  # type: ignore[no-untyped-def]
    """One pass of what the sync task does (one batch of every open HIT), then apply every queued entry."""
    with session_scope(sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(sessions) as session:
        entries = pipeline.review_hits(session, fetched)
    for entry_id in entries:
        outbox.apply_entry(sessions, market, entry_id)
    return entries


def _entries(sessions, campaign_id: int) -> list[tuple[str, str, str, dict]]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        rows = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id))
        return [(e.action, e.target, e.status, dict(e.payload)) for e in rows]


def test_flagged_worker_is_blocked_told_and_their_work_reposted_within_budget(
    tmp_path, live_server, market, mturk, requester_sessions, market_sessions
) -> None:
    # Planned: 2 HITs x 2 assignments x (0.10 + 0.02 fee) = 0.48; room for one re-post only.
    quality = {
        **CONFIDENT,
        "flagged_worker": "hard_block",
        "notify_flagged": "Your answers to the check questions were mostly wrong.",
        "repost_rejected": True,
    }
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="follow-1", quality=quality
    )
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.budget = Decimal("0.60")
    bad = campaign_bot(live_server.url, "follow-bad", Profile("always-off", 0.0), truth, "follow-1")
    assert bad.run(max_hits=2).submitted == 2
    review(requester_sessions, market)
    worker = bad.result.worker_id
    by_action: dict[str, list] = {}
    for action, target, status, payload in _entries(requester_sessions, campaign_id):
        by_action.setdefault(action, []).append((target, status, payload))
    assert [s for _, s, _ in by_action["reject"]] == ["done", "done"]
    assert by_action["block"] == [(f"c{campaign_id}:{worker}", "done", by_action["block"][0][2])]
    blocked = mturk.list_worker_blocks()["WorkerBlocks"]
    assert [b["WorkerId"] for b in blocked] == [worker]
    with session_scope(market_sessions) as session:
        inbox = session.scalars(select(WorkerMessage).where(WorkerMessage.worker_id == worker)).all()
        assert [m.message for m in inbox] == [quality["notify_flagged"]]
    # One re-post fits the budget, the second does not; the refusal is on the record with figures.
    assert len(by_action["repost"]) == 1 and by_action["repost"][0][1] == "done"
    reposted_hit = by_action["repost"][0][2]["hit_id"]
    assert mturk.get_hit(HITId=reposted_hit)["HIT"]["MaxAssignments"] == 3
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        assert followups.committed_cost(session, campaign) == Decimal("0.60") <= campaign.budget
        refused = [
            s.evidence["not_reposted"]
            for s in session.scalars(select(Submission).where(Submission.worker_id == worker))
            if s.evidence and "not_reposted" in s.evidence
        ]
        assert len(refused) == 1 and "has committed 0.60 of its 0.60 budget" in refused[0]


def test_soft_block_hides_the_campaign_and_bonuses_are_paid_once(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    quality = {
        **CONFIDENT,
        "flagged_worker": "soft_block",
        "bonus": {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9},
    }
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name="follow-2", quality=quality
    )
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None and campaign.block_qualification_type_id
        qtype = campaign.block_qualification_type_id
    good = campaign_bot(live_server.url, "follow-good", Profile("perfect", 1.0), truth, "follow-2")
    bad = campaign_bot(live_server.url, "follow-wrong", Profile("always-off", 0.0), truth, "follow-2")
    assert good.run(max_hits=2).submitted == 2
    assert bad.run(max_hits=2).submitted == 2
    entries = review(requester_sessions, market)
    granted = mturk.list_workers_with_qualification_type(QualificationTypeId=qtype)["Qualifications"]
    assert [q["WorkerId"] for q in granted] == [bad.result.worker_id]
    # The flagged worker no longer finds this campaign's last HIT; the good one still does.
    assert bad.run(max_hits=3).submitted == 2
    assert good.run(max_hits=3).submitted == 3
    bonuses = [e for e in _entries(requester_sessions, campaign_id) if e[0] == "bonus"]
    assert [(b[1], b[2]) for b in bonuses] == [(f"c{campaign_id}:{good.result.worker_id}", "done")]
    paid = mturk.list_bonus_payments(AssignmentId=bonuses[0][3]["assignment_id"])["BonusPayments"]
    assert [(p["WorkerId"], p["BonusAmount"]) for p in paid] == [(good.result.worker_id, "0.05")]
    # Applying again (a redelivered task) pays nothing more.
    for entry_id in entries:
        assert outbox.apply_entry(requester_sessions, market, entry_id) == "skipped"
    assert len(mturk.list_bonus_payments(AssignmentId=bonuses[0][3]["assignment_id"])["BonusPayments"]) == 1


def test_undecided_work_is_approved_before_the_auto_approval_deadline(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    # min_gold is out of reach: nothing is decided on evidence.
    quality = {**CONFIDENT, "min_gold": 50, "confidence": 0.99}
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="follow-3", quality=quality
    )
    bot = campaign_bot(live_server.url, "follow-slow", Profile("careless", 0.6), truth, "follow-3")
    assert bot.run(max_hits=1).submitted == 1
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        assert followups.due_before_deadline(session, market.access_key_id, utcnow()) == []
        # A 3,600 s delay leaves a margin of a tenth (360 s): due once 3,240 s have passed.
        later = utcnow() + timedelta(seconds=3600 - 360 + 5)
        due = followups.due_before_deadline(session, market.access_key_id, later)
        assert len(due) == 1
        submission = session.scalar(select(Submission).where(Submission.worker_id == bot.result.worker_id))
        assert submission is not None and submission.decision == "approve"
        assert "auto-approval deadline" in (submission.evidence or {})["reason"]
        stats = session.scalar(select(WorkerStats).where(WorkerStats.worker_id == bot.result.worker_id))
        assert stats is not None and not stats.flagged
    assert outbox.apply_entry(requester_sessions, market, due[0]) == "approve"
    assert mturk.get_assignment(AssignmentId=submission.assignment_id)["Assignment"]["AssignmentStatus"] == (
        "Approved"
    )
