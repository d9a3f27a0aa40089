"""A bonus or re-post the marketplace made but hitforge never recorded is recognised, not resent forever.

The crash is simulated exactly: the entry's call is made through the facade
with the entry's own token (what the killed attempt did), and the entry is
then applied as the resend sweep would.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import func, select

from demo.crowd import Profile
from hits.db import session_scope
from hits.market.models import BonusPayment, LedgerEntry
from hits.market.request_tokens import UNIQUE_TOKEN_WINDOW
from hits.requester.quality import outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, Submission, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign

CONFIDENT = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2}


def _sync(sessions, market) -> list[int]:  # type: ignore[no-untyped-def]
    """One sync batch over every open HIT (what the sync task does); the queued entry ids."""
    with session_scope(sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(sessions) as session:
        return pipeline.review_hits(session, fetched)


def _target(sessions, entry_id: int) -> str:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None
        return entry.target


def _entries(sessions, ids: list[int]) -> dict[int, tuple[str, str, dict]]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        rows = session.scalars(select(OutboxEntry).where(OutboxEntry.id.in_(ids)))
        return {e.id: (e.action, e.status, dict(e.payload)) for e in rows}


def _earned_bonus(tmp_path, live_server, market, requester_sessions, name: str):  # type: ignore[no-untyped-def]
    """A perfect worker does a bonus campaign's two HITs, synced once.

    Returns (campaign id, worker id, queued entry ids, the bonus entry's id, its payload).
    """
    quality = {**CONFIDENT, "bonus": {"amount": "0.05", "min_gold": 2, "min_gold_accuracy": 0.9}}
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name=name, quality=quality
    )
    good = campaign_bot(live_server.url, f"{name}-good", Profile("perfect", 1.0), truth, name)
    assert good.run(max_hits=2).submitted == 2
    ids = _sync(requester_sessions, market)
    entries = _entries(requester_sessions, ids)
    (bonus_id,) = [i for i, (action, _, _) in entries.items() if action == "bonus"]
    return campaign_id, good.result.worker_id, ids, bonus_id, entries[bonus_id][2]


def test_a_bonus_paid_but_not_recorded_is_done_and_paid_once(
    tmp_path, live_server, market, mturk, requester_sessions, market_sessions
) -> None:
    campaign_id, worker_id, ids, bonus_id, payload = _earned_bonus(
        tmp_path, live_server, market, requester_sessions, "replay-1"
    )
    for entry_id in sorted(i for i in ids if i != bonus_id):
        outbox.apply_entry(requester_sessions, market, entry_id)
    before = market.balance()
    # The killed attempt: the bonus went through, the outbox never heard of it.
    market.send_bonus(
        payload["worker_id"],
        payload["assignment_id"],
        Decimal(payload["amount"]),
        payload["reason"],
        unique_request_token=f"hitforge-bonus-{bonus_id}",
    )
    assert outbox.apply_entry(requester_sessions, market, bonus_id) == "bonus (already applied)"
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, bonus_id)
        assert entry is not None and entry.status == "done" and entry.last_error is None
    paid = mturk.list_bonus_payments(AssignmentId=payload["assignment_id"])["BonusPayments"]
    assert [(p["WorkerId"], p["BonusAmount"]) for p in paid] == [(worker_id, "0.05")]
    assert before - market.balance() == Decimal("0.06")  # one bonus and its fee
    with session_scope(market_sessions) as session:
        assert session.scalar(select(func.sum(LedgerEntry.amount))) == 0
    # Nothing is left for the resend sweep.
    with session_scope(requester_sessions) as session:
        pending = session.scalar(
            select(func.count())
            .select_from(OutboxEntry)
            .where(OutboxEntry.campaign_id == campaign_id, OutboxEntry.status == "pending")
        )
    assert pending == 0


def test_a_bonus_retried_after_the_marketplace_forgot_its_token_is_not_paid_again(
    tmp_path, live_server, market, mturk, requester_sessions, market_sessions
) -> None:
    _, worker_id, _, bonus_id, payload = _earned_bonus(
        tmp_path, live_server, market, requester_sessions, "replay-4"
    )
    # The killed attempt claimed the entry (an attempt counted) and paid; nothing was recorded.
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, bonus_id)
        assert entry is not None
        entry.attempts = 1
    token = f"hitforge-bonus-{bonus_id}"
    market.send_bonus(
        payload["worker_id"], payload["assignment_id"], Decimal(payload["amount"]), payload["reason"], token
    )
    # A day and more passes before the retry: the marketplace, as MTurk does, forgets the token.
    with session_scope(market_sessions) as session:
        payment = session.scalar(select(BonusPayment).where(BonusPayment.unique_request_token == token))
        assert payment is not None
        payment.granted_at -= UNIQUE_TOKEN_WINDOW + timedelta(hours=1)
    before = market.balance()
    outcome = outbox.apply_entry(requester_sessions, market, bonus_id)
    assert outcome == "bonus (already paid: listed by ListBonusPayments)"
    paid = mturk.list_bonus_payments(AssignmentId=payload["assignment_id"])["BonusPayments"]
    assert [(p["WorkerId"], p["BonusAmount"]) for p in paid] == [(worker_id, "0.05")]
    assert market.balance() == before
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, bonus_id)
        assert entry is not None and entry.status == "done" and entry.attempts == 2


def reposted_campaign(tmp_path, live_server, market, requester_sessions, name: str):  # type: ignore[no-untyped-def]
    """A re-posting campaign's two HITs, worked by a right and a wrong bot and synced once.

    Every decision but the two re-posts is applied. Returns (campaign id,
    the queued entries by id, the re-posts' entry ids).
    """
    quality = {**CONFIDENT, "repost_rejected": True}
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name=name, quality=quality
    )
    crowd = ((f"{name}-ok", Profile("perfect", 1.0)), (f"{name}-off", Profile("always-off", 0.0)))
    for username, profile in crowd:
        bot = campaign_bot(live_server.url, username, profile, truth, name)
        assert bot.run(max_hits=2).submitted == 2
    ids = _sync(requester_sessions, market)
    entries = _entries(requester_sessions, ids)
    reposts = sorted(i for i, (action, _, _) in entries.items() if action == "repost")
    assert len(reposts) == 2
    for entry_id in sorted(i for i in ids if i not in reposts):
        outbox.apply_entry(requester_sessions, market, entry_id)
    return campaign_id, entries, reposts


def test_a_repost_added_but_not_recorded_is_done_and_reopens_the_hit(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, entries, reposts = reposted_campaign(
        tmp_path, live_server, market, requester_sessions, "replay-2"
    )
    with session_scope(requester_sessions) as session:
        assert pipeline.finish_campaigns(session, market.access_key_id).campaigns == [campaign_id]
    repost_id = reposts[0]
    hit_id = entries[repost_id][2]["hit_id"]
    assert mturk.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Reviewing"
    # The killed attempt: the assignment was added, the outbox never heard of it.
    market.add_assignments(hit_id, 1, unique_request_token=f"hitforge-repost-{repost_id}")
    assert outbox.apply_entry(requester_sessions, market, repost_id) == "repost (already applied)"
    hit = mturk.get_hit(HITId=hit_id)["HIT"]
    assert hit["MaxAssignments"] == 3 and hit["HITStatus"] == "Assignable"  # added once
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, repost_id)
        assert entry is not None and entry.status == "done" and entry.last_error is None
        # Re-opened: the re-posted assignment will be synced and reviewed, not auto-approved unseen.
        published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
        assert published is not None and published.status == "open"
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None and campaign.status == "running"
        assert (published.campaign_id, published.mturk_hit_id) in {
            (c, h) for c, _, h in sync_queue.open_hits(session, market.access_key_id)
        }


def test_a_rejection_the_marketplace_overtook_with_an_approval_takes_the_marketplaces_decision(
    tmp_path, live_server, market, requester_sessions
) -> None:
    quality = {**CONFIDENT, "repost_rejected": True}
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="replay-3", quality=quality
    )
    bad = campaign_bot(live_server.url, "replay-bad", Profile("always-off", 0.0), truth, "replay-3")
    assert bad.run(max_hits=2).submitted == 2
    ids = _sync(requester_sessions, market)
    queued = _entries(requester_sessions, ids)
    rejections = sorted(i for i, (action, _, _) in queued.items() if action == "reject")
    assert len(rejections) == 2
    with session_scope(requester_sessions) as session:
        overtaken = session.get(OutboxEntry, rejections[0])
        assert overtaken is not None
        target = overtaken.target
    # Before hitforge's rejection is applied, the marketplace approves (its auto-approval, or a
    # person outside hitforge): it is the authority, so the entry must not fail forever.
    market.approve(target)
    outcome = outbox.apply_entry(requester_sessions, market, rejections[0])
    assert outcome == "reject (superseded: Approved on the marketplace)"
    assert outbox.apply_entry(requester_sessions, market, rejections[1]) == "reject"
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, rejections[0])
        submission = session.scalar(select(Submission).where(Submission.assignment_id == target))
        stats = session.get(WorkerStats, (campaign_id, bad.result.worker_id))
        assert entry is not None and entry.status == "done"
        assert submission is not None and submission.decision == "approve"
        assert submission.evidence is not None and submission.evidence["decided_by"] == "marketplace"
        assert stats is not None and (stats.approved, stats.rejected) == (1, 1)
    # The overtaken rejection's re-post is not needed (the work was approved and paid); the other's is.
    reposts = {
        _target(requester_sessions, i): i for i, (action, _, _) in queued.items() if action == "repost"
    }
    assert len(reposts) == 2 and target in reposts
    hits = {assignment: queued[i][2]["hit_id"] for assignment, i in reposts.items()}
    sizes = {a: market.get_hit(hit)["MaxAssignments"] for a, hit in hits.items()}
    outcomes = {a: outbox.apply_entry(requester_sessions, market, i) for a, i in reposts.items()}
    assert outcomes[target] == "repost (not needed: approved on the marketplace)"
    for assignment, hit in hits.items():
        grown = market.get_hit(hit)["MaxAssignments"] - sizes[assignment]
        assert grown == (0 if assignment == target else 1), outcomes
