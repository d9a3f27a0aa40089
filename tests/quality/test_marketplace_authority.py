"""The marketplace is the authority: work it decided itself is recorded, and the campaign still finishes."""

from __future__ import annotations

import io

from sqlalchemy import delete, select

from demo.crowd import Profile
from hits.db import session_scope
from hits.requester.answers import answers_frame
from hits.requester.campaigns.export import write_batch_csv
from hits.requester.quality import outbox, pipeline, sync_queue
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, Submission, WorkerStats
from tests.helpers import campaign_bot, launch_demo_campaign

#: The gold-only rule (worker_model: false), which approves on 2 of 2 gold at this confidence.
CONFIDENT = {"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "worker_model": False}


def test_work_decided_on_the_marketplace_is_recorded_and_the_campaign_reaches_review(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="authority", quality=CONFIDENT
    )
    good = campaign_bot(live_server.url, "authority-good", Profile("perfect", 1.0), truth, "authority")
    bad = campaign_bot(live_server.url, "authority-bad", Profile("always-off", 0.0), truth, "authority")
    assert good.run(max_hits=2).submitted == 2
    assert bad.run(max_hits=2).submitted == 2
    with session_scope(requester_sessions) as session:
        first_hit, second_hit = session.scalars(
            select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id).order_by(PublishedHIT.id)
        ).all()
    by_worker = {
        a["WorkerId"]: a["AssignmentId"]
        for a in mturk.list_assignments_for_hit(HITId=first_hit.mturk_hit_id)["Assignments"]
    }
    auto_approved, rejected_outside = by_worker[good.result.worker_id], by_worker[bad.result.worker_id]
    # While the review workers were down: the marketplace approved one assignment (its
    # auto-approval), and someone rejected another outside hitforge, whose page's copy is lost.
    market.approve(auto_approved)
    market.reject(rejected_outside, "Rejected by hand.")
    with session_scope(requester_sessions) as session:
        session.execute(delete(Submission).where(Submission.assignment_id == rejected_outside))
        # Answers a page stored for an assignment its worker then returned: never confirmed.
        session.add(
            Submission(
                assignment_id="RETURNEDASSIGNMENT00000000000001",
                published_hit_id=second_hit.id,
                worker_id="AWORKERWHORETURNED1",
                answers={"answers": [3, 3, 3]},
                source="page",
                synced=False,
            )
        )

    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    assert len(targets) == 2
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(requester_sessions) as session:
        entries = pipeline.review_hits(session, fetched)
    for entry_id in entries:
        outbox.apply_entry(requester_sessions, market, entry_id)

    with session_scope(requester_sessions) as session:
        decided = {
            s.assignment_id: s
            for s in session.scalars(select(Submission).where(Submission.published_hit_id == first_hit.id))
        }
        for assignment_id, decision in ((auto_approved, "approve"), (rejected_outside, "reject")):
            submission = decided[assignment_id]
            assert submission.synced and submission.graded and submission.gold_total == 1
            assert submission.decision == decision
            assert submission.evidence is not None and submission.evidence["decided_by"] == "marketplace"
        # Nothing to apply for them: the marketplace has.
        targets_queued = set(session.scalars(select(OutboxEntry.target).where(OutboxEntry.id.in_(entries))))
        assert not targets_queued & {auto_approved, rejected_outside}
        stats = {
            s.worker_id: s
            for s in session.scalars(select(WorkerStats).where(WorkerStats.campaign_id == campaign_id))
        }
        # Graded as evidence: each worker's two gold answers; both decisions counted.
        assert (stats[good.result.worker_id].gold_total, stats[good.result.worker_id].approved) == (2, 2)
        assert (stats[bad.result.worker_id].gold_total, stats[bad.result.worker_id].rejected) == (2, 2)
        hits = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)).all()
        assert {h.status for h in hits} == {"complete"}

    with session_scope(requester_sessions) as session:
        assert pipeline.finish_campaigns(session, market.access_key_id).campaigns == [campaign_id]
    with session_scope(requester_sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None and campaign.status == "review"
        decisions = {
            s.assignment_id: s.decision
            for s in session.scalars(
                select(Submission)
                .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
                .where(PublishedHIT.campaign_id == campaign_id)
            )
        }
    # The returned assignment's answers are void, not held for a QA approval that would fail.
    assert decisions.pop("RETURNEDASSIGNMENT00000000000001") == "void"
    assert sorted(decisions.values()) == ["approve", "approve", "reject", "reject"]
    for assignment_id, decision in decisions.items():
        wanted = {"approve": "Approved", "reject": "Rejected"}[str(decision)]
        assert market.get_assignment(assignment_id)["AssignmentStatus"] == wanted
    # Void answers are no result: neither the batch CSV nor the aggregation counts them.
    with session_scope(requester_sessions) as session:
        out = io.StringIO()
        assert write_batch_csv(session, campaign_id, out) == 4
        frame = answers_frame(session, campaign_id)
    assert "RETURNEDASSIGNMENT00000000000001" not in out.getvalue()
    assert len(frame) == 2 * 2  # the two approved assignments, of two real items each
