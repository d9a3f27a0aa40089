"""The dashboard's pages: home, a worker's evidence, decisions, results, item analysis.

Every page and action is limited to the campaigns the signed-in user may see
(``hits.requester.campaigns.staff``: an admin all, a requester user its own, a QA
reviewer those assigned to it). Anything outside that is a 404, exactly as if
it did not exist, so that ids cannot be probed.
"""

from __future__ import annotations

from typing import Any, cast

from flask import (
    abort,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from sqlalchemy import func, select

from hits.db import utcnow
from hits.requester.campaigns.staff import scoped_campaign_ids, visible_test_ids
from hits.requester.quality import qa_review
from hits.requester.quality.live_copying import pairs_of
from hits.requester.tables.campaigns import (
    BATCH_STATUS,
    Campaign,
    CampaignResult,
    OutboxEntry,
    PublishedHIT,
    ReviewAction,
    Submission,
    WorkerStats,
)
from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
from qualification.analysis import item_analysis
from qualification.delivery import waiting_tests
from server.db import requester_session
from server.requester.dashboard.base import bp, campaign_or_404, signed_in_staff, staff_required
from server.requester.dashboard.unserved import unserved_api_hits
from server.task_queue import send_after_commit


@bp.get("/")
@staff_required
def home() -> Any:
    rs = requester_session()
    visible = scoped_campaign_ids(signed_in_staff())
    campaigns = rs.scalars(
        select(Campaign).where(Campaign.id.in_(visible)).order_by(Campaign.created_at.desc())
    ).all()
    results = {
        r.campaign_id: r
        for r in rs.scalars(select(CampaignResult).where(CampaignResult.campaign_id.in_(visible)))
    }
    flagged = rs.scalars(
        select(WorkerStats).where(WorkerStats.flagged.is_(True), WorkerStats.campaign_id.in_(visible))
    ).all()
    decisions = dict(
        rs.execute(
            select(OutboxEntry.action, func.count())
            .where(OutboxEntry.campaign_id.in_(visible))
            .group_by(OutboxEntry.action)
        ).all()
    )
    # Work waiting for a person: flagged workers' and work held when a campaign ended.
    held = rs.execute(
        select(PublishedHIT.campaign_id, Submission.worker_id, func.count())
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(Submission.decision == "held", PublishedHIT.campaign_id.in_(visible))
        .group_by(PublishedHIT.campaign_id, Submission.worker_id)
        .order_by(PublishedHIT.campaign_id, Submission.worker_id)
    ).all()
    return render_template(
        "dashboard/home.html",
        staff=signed_in_staff(),
        campaigns=campaigns,
        results=results,
        flagged=flagged,
        decisions=decisions,
        held=held,
        # Tests whose values wait for a worker with their publisher's keys (qualification.delivery).
        waiting_tests=_visible_waiting_tests(rs),
        unserved=_unserved_by_batch(rs, visible),
        unserved_hits=unserved_api_hits(signed_in_staff()),
    )


def _unserved_by_batch(rs: Any, visible: Any) -> dict[int, list[str]]:
    """Per batch campaign, the CDN URLs its layout loads that this site does not serve.

    The requester learns them here as well as from ``batch publish``'s warnings: a
    worker who cannot reach those hosts gets the page without them.
    """
    from hits.requester.tables.batches import Batch
    from server.cdn import unserved_urls

    layouts = rs.execute(select(Batch.campaign_id, Batch.layout).where(Batch.campaign_id.in_(visible))).all()
    found = {campaign_id: unserved_urls(layout) for campaign_id, layout in layouts}
    return {campaign_id: urls for campaign_id, urls in found.items() if urls}


def _visible_waiting_tests(rs: Any) -> list[Any]:
    """The stuck-test alerts for the tests the signed-in user may see (their access keys are shown)."""
    tests = visible_test_ids(rs, signed_in_staff())
    return [w for w in waiting_tests(rs, utcnow()) if tests is None or w.test_id in tests]


@bp.post("/campaigns/<int:campaign_id>/results")
@staff_required
def compute_results(campaign_id: int) -> Any:
    """Aggregate the campaign's labels and agreement again (a Celery task), e.g. after QA decisions."""
    rs = requester_session()
    campaign_or_404(campaign_id)
    campaign = rs.get(Campaign, campaign_id)
    if campaign is not None and campaign.status == BATCH_STATUS:
        flash("A layout batch has no labels to aggregate: use `hitforge batch results`.", "error")
        return redirect(url_for("dashboard.home"))
    send_after_commit(rs, "hitforge.store_results", campaign_id)
    flash(f"Results of campaign {campaign_id} are being computed.", "info")
    return redirect(url_for("dashboard.home"))


@bp.get("/workers/<int:campaign_id>/<worker_id>")
@staff_required
def worker(campaign_id: int, worker_id: str) -> Any:
    rs = requester_session()
    campaign_or_404(campaign_id)
    stats = rs.get(WorkerStats, (campaign_id, worker_id))
    if stats is None:
        abort(404)
    submissions = rs.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker_id)
        .order_by(Submission.id)
    ).all()
    actions = rs.scalars(
        select(ReviewAction)
        .where(ReviewAction.campaign_id == campaign_id, ReviewAction.worker_id == worker_id)
        .order_by(ReviewAction.created_at)
    ).all()
    return render_template(
        "dashboard/worker.html",
        stats=stats,
        submissions=submissions,
        actions=actions,
        copying=pairs_of(rs, campaign_id, worker_id),
    )


@bp.post("/workers/<int:campaign_id>/<worker_id>/review")
@staff_required
def review(campaign_id: int, worker_id: str) -> Any:
    """Confirm a flag (held work rejected, the policy's block applied) or clear it (held work approved)."""
    rs = requester_session()
    staff = signed_in_staff()
    campaign_or_404(campaign_id)
    if rs.get(WorkerStats, (campaign_id, worker_id)) is None:
        abort(404)
    action = request.form.get("action", "")
    if action not in ("confirm", "clear"):
        abort(400)
    action = cast(qa_review.WorkerReview, action)
    entry_ids = qa_review.review_worker(
        rs, campaign_id, worker_id, action, staff.id, request.form.get("note", "")[:2000]
    )
    _send(entry_ids)
    flash(f"Recorded: {action} for worker {worker_id} ({len(entry_ids)} actions queued).", "info")
    return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=worker_id))


@bp.post("/submissions/<int:submission_id>/decide")
@staff_required
def decide_submission(submission_id: int) -> Any:
    """A reviewer approves or rejects held work; the outbox applies it through the API."""
    rs = requester_session()
    staff = signed_in_staff()
    submission = rs.get(Submission, submission_id)
    if submission is None:
        abort(404)
    campaign_or_404(submission.published_hit.campaign_id)
    action = request.form.get("action", "")
    if action not in ("approve", "reject"):
        abort(400)
    action = cast(qa_review.HeldDecision, action)
    try:
        entry_ids = qa_review.decide_held(
            rs,
            submission_id,
            action,
            staff.id,
            request.form.get("note", "")[:2000],
            feedback=(request.form.get("feedback") or "Reviewed by our QA team.")[:1024],
        )
    except qa_review.NotHeld:
        flash("That assignment is not waiting for review.", "error")
        return redirect(url_for("dashboard.home"))
    _send(entry_ids)
    flash(f"{action.capitalize()} queued for assignment {submission.assignment_id}.", "info")
    campaign_id = submission.published_hit.campaign_id
    return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=submission.worker_id))


def _send(entry_ids: list[int]) -> None:
    """Apply the outbox entries once the request's transaction commits (one task, in order)."""
    if entry_ids:
        send_after_commit(requester_session(), "hitforge.apply_decisions", entry_ids)


@bp.get("/qualification/<int:test_id>/items")
@staff_required
def item_analysis_view(test_id: int) -> Any:
    """Item analysis of a qualification test from its graded attempts."""
    rs = requester_session()
    test = rs.get(QualificationTest, test_id)
    tests = visible_test_ids(rs, signed_in_staff())
    if test is None or (tests is not None and test_id not in tests):
        abort(404)
    graded = rs.scalars(
        select(QualificationAttempt.correct_items).where(
            QualificationAttempt.test_id == test_id, QualificationAttempt.correct_items.is_not(None)
        )
    ).all()
    rows = item_analysis([dict(c) for c in graded if c]) if graded else []
    return render_template("dashboard/items.html", test=test, rows=rows, attempts=len(graded))
