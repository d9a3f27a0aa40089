"""Signals flag a worker for a person; only confident gold acts alone; QA's confirm and clear stick."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.answers import answers_frame, counted_submissions
from hits.requester.quality import qa_review
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review

#: Six gold answers can neither clear nor condemn anyone at 0.999 (0 of 6 gives 0.998); the policy says
#: reject and hard-block flagged workers, so anything short of holding would show.
UNDECIDED_STRICT = {
    "accuracy_threshold": 0.6,
    "confidence": 0.999,
    "min_gold": 2,
    "flagged_action": "reject",
    "flagged_worker": "hard_block",
    # Gold alone (worker_model: false): the model would count agreement and decide on its own.
    "worker_model": False,
}


def _flagged_copycat(tmp_path, live_server, market, requester_sessions, name: str, hits: int):  # type: ignore[no-untyped-def]
    """A campaign whose copycat has worked ``hits`` HITs and been reviewed: (campaign id, bot)."""
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        market,
        requester_sessions,
        live_server.url,
        hits=hits,
        name=name,
        quality=UNDECIDED_STRICT,
        gold_per_hit=2,
    )
    copycat = campaign_bot(live_server.url, f"{name}-copycat", PROFILES["copycat"], truth, name)
    assert copycat.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    return campaign_id, copycat


def _reviewer(sessions, name: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        staff = StaffUser(username=name, password_hash="-", role="qa")
        session.add(staff)
        session.flush()
        return staff.id


def _decisions(sessions, campaign_id: int, worker_id: str) -> list[str | None]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        return [
            s.decision
            for s in session.scalars(
                select(Submission).where(Submission.worker_id == worker_id).order_by(Submission.id)
            )
        ]


def _actions(sessions, campaign_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        return sorted(
            session.scalars(select(OutboxEntry.action).where(OutboxEntry.campaign_id == campaign_id))
        )


def test_a_flag_on_signals_alone_holds_the_work_and_confirming_it_rejects_and_blocks(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, copycat = _flagged_copycat(tmp_path, live_server, market, requester_sessions, "sigflag-1", 3)
    worker = copycat.result.worker_id
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker))
        assert stats is not None and stats.flagged and "straightline" in (stats.flag_reason or "")
        held = session.scalars(select(Submission).where(Submission.worker_id == worker)).all()
        assert all(s.evidence and s.evidence.get("flagged_by") == "signals" for s in held)
    # Gold was not confident: nothing rejected, nobody blocked, the work waits for a person.
    assert _decisions(requester_sessions, campaign_id, worker) == ["held"] * 3
    assert _actions(requester_sessions, campaign_id) == []
    assert mturk.list_worker_blocks()["WorkerBlocks"] == []

    with session_scope(requester_sessions) as session:
        queued = qa_review.review_worker(
            session, campaign_id, worker, "confirm", _reviewer(requester_sessions, "qa-sig1"), "flat ratings"
        )
    assert len(queued.entry_ids) == 4  # the block first, then three rejections
    assert _decisions(requester_sessions, campaign_id, worker) == ["reject"] * 3
    assert _actions(requester_sessions, campaign_id) == ["block", "reject", "reject", "reject"]
    with session_scope(requester_sessions) as session:
        audit = session.scalars(select(ReviewAction).where(ReviewAction.campaign_id == campaign_id)).all()
        assert [(a.action, a.note) for a in audit] == [("confirm", "flat ratings")]


def test_clearing_a_flag_approves_the_held_work_and_the_worker_is_not_flagged_again(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, copycat = _flagged_copycat(tmp_path, live_server, market, requester_sessions, "sigflag-2", 5)
    worker = copycat.result.worker_id
    with session_scope(requester_sessions) as session:
        queued = qa_review.review_worker(
            session, campaign_id, worker, "clear", _reviewer(requester_sessions, "qa-sig2"), "a steady rater"
        )
    assert len(queued.entry_ids) == 3 and queued.decided == 3
    assert _decisions(requester_sessions, campaign_id, worker) == ["approve"] * 3
    # The same worker comes back with the same answers: the signals that fired before are
    # not consulted again, and nothing of theirs is rejected.
    assert copycat.run(max_hits=5).submitted == 5  # a running total
    review(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        stats = session.get(WorkerStats, (campaign_id, worker))
        assert stats is not None and not stats.flagged and stats.flag_review == "clear"
    later = _decisions(requester_sessions, campaign_id, worker)[3:]
    assert len(later) == 2 and set(later) <= {None, "held"}  # waiting for gold, or for a person
    assert "reject" not in _actions(requester_sessions, campaign_id)


def test_a_held_assignment_cannot_be_decided_twice(tmp_path, live_server, market, requester_sessions) -> None:
    campaign_id, copycat = _flagged_copycat(tmp_path, live_server, market, requester_sessions, "sigflag-3", 3)
    worker = copycat.result.worker_id
    staff = _reviewer(requester_sessions, "qa-sig3")
    with session_scope(requester_sessions) as session:
        first = session.scalars(select(Submission.id).where(Submission.worker_id == worker)).first()
        assert first is not None
        assert len(qa_review.decide_held(session, first, "approve", staff, "looked fine")) == 1
    with session_scope(requester_sessions) as session, pytest.raises(qa_review.NotHeld):
        qa_review.decide_held(session, first, "reject", staff, "changed my mind")


def test_a_flagged_workers_held_answers_stay_out_of_the_results_until_cleared(
    tmp_path, live_server, market, requester_sessions
) -> None:
    campaign_id, copycat = _flagged_copycat(tmp_path, live_server, market, requester_sessions, "sigflag-4", 3)
    worker = copycat.result.worker_id
    with session_scope(requester_sessions) as session:
        assert worker not in set(answers_frame(session, campaign_id)["worker"])
    with session_scope(requester_sessions) as session:
        qa_review.review_worker(
            session, campaign_id, worker, "clear", _reviewer(requester_sessions, "qa-4"), ""
        )
    with session_scope(requester_sessions) as session:
        frame = answers_frame(session, campaign_id)
    assert (frame["worker"] == worker).sum() == 6  # three HITs of two real items


def test_work_held_on_a_flag_stays_out_of_the_results_whoever_holds_it(requester_sessions) -> None:
    """Held when the campaign ended: counts. Held on a flag, even of a worker a reviewer cleared: not."""
    with session_scope(requester_sessions) as session:
        campaign = Campaign(name="held-kinds", template="rating", spec={}, budget=1)
        session.add(campaign)
        session.flush()
        published = PublishedHIT(campaign_id=campaign.id, status="complete", mturk_hit_id="3HHELDKINDS")
        session.add(published)
        session.flush()
        kinds = {
            "approved": ("approve", {}),
            "pending": (None, {}),
            "held-at-end": ("held", {"reason": "not enough evidence either way when the campaign finished"}),
            "held-on-flag": ("held", {"held_for": "flag", "p_accuracy_below_threshold": 0.9999}),
            "rejected": ("reject", {}),
            "void": ("void", {}),
        }
        for n, (name, (decision, evidence)) in enumerate(kinds.items()):
            session.add(
                Submission(
                    assignment_id=f"3AHELDKINDS{n:04d}",
                    published_hit_id=published.id,
                    worker_id=f"AWORKER{name.upper().replace('-', '')}"[:20],
                    answers={"answers": [1]},
                    decision=decision,
                    evidence=evidence,
                )
            )
        session.flush()
        counted = {s.assignment_id for s in counted_submissions(session, campaign.id)}
    names = list(kinds)
    assert sorted(names[int(a[-4:])] for a in counted) == ["approved", "held-at-end", "pending"]
