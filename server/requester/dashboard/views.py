"""The dashboard's pages: home, a worker's evidence, decisions, results, item analysis.

Every page and action is limited to the campaigns the signed-in user may see
(``hits.requester.campaigns.staff``: an admin all, a requester user its own, a QA
reviewer those assigned to it). Anything outside that is a 404, exactly as if
it did not exist, so that ids cannot be probed.
"""

from __future__ import annotations

from typing import Any

from flask import (
    abort,
    flash,
    redirect,
    render_template,
    url_for,
)
from sqlalchemy import func, select

from hits.db import utcnow
from hits.requester.campaigns.staff import scoped_campaign_ids, visible_test_ids
from hits.requester.tables.campaigns import (
    BATCH_STATUS,
    Campaign,
    CampaignResult,
    OutboxEntry,
    WorkerStats,
)
from hits.requester.tables.counters import held_by_worker
from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
from qualification.analysis import MIN_FLAG_RESPONSES, item_analysis
from qualification.delivery import waiting_tests
from server.db import requester_session
from server.requester.dashboard.base import bp, campaign_or_404, signed_in_staff, staff_required
from server.requester.dashboard.unserved import unserved_api_hits
from server.task_queue import send_after_commit

#: Outbox actions that decide an assignment; the rest (blocks, bonuses, qualifications...) are apart.
ASSIGNMENT_DECISIONS = ("approve", "reject")
ACTION_WORDS = {
    "reviewing": "HITs set to Reviewing",
    "qualify": "qualification scores sent",
    "block": "workers blocked",
    "bonus": "bonuses",
    "notify": "messages to workers",
    "repost": "HITs re-posted",
    "unblock": "blocks lifted",
    "revoke": "qualifications revoked",
    "mirror": "grants mirrored to Prolific groups",
    "override": "rejections overridden",
    "retype": "HITs for trusted workers opened to everyone",
}
#: The status of the campaign row a qualification test's grading runs under (qualification.service).
QUALIFICATION_STATUS = "qualification"


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
    outbox = rs.execute(
        select(OutboxEntry.action, OutboxEntry.status, func.count())
        .where(OutboxEntry.campaign_id.in_(visible))
        .group_by(OutboxEntry.action, OutboxEntry.status)
    ).all()
    # Assignment decisions (approve, reject) apart from everything else the outbox carries.
    decisions: dict[str, dict[str, int]] = {}
    other_actions: dict[str, int] = {}
    for action, status, n in outbox:
        if action in ASSIGNMENT_DECISIONS:
            decisions.setdefault(action, {})[status] = n
        else:
            other_actions[ACTION_WORDS.get(action, action)] = (
                other_actions.get(ACTION_WORDS.get(action, action), 0) + n
            )
    # Work waiting for a person: flagged workers' and work held when a campaign ended.
    # Kept per worker as work is held and decided (``counters``): a row a worker with held work.
    kept = held_by_worker(visible).subquery()
    held = rs.execute(
        select(Campaign.id, Campaign.name, kept.c.worker_id, kept.c.n)
        .join(kept, kept.c.campaign_id == Campaign.id)
        .order_by(Campaign.name, kept.c.worker_id)
    ).all()
    names = {c.id: c.name for c in campaigns}
    tests = visible_test_ids(rs, signed_in_staff())
    listed = select(QualificationTest).order_by(QualificationTest.name)
    if tests is not None:
        listed = listed.where(QualificationTest.id.in_(tests))
    qualification_tests = rs.scalars(listed).all()
    return render_template(
        "dashboard/home.html",
        staff=signed_in_staff(),
        campaigns=[c for c in campaigns if c.status != QUALIFICATION_STATUS],
        results=results,
        flagged=flagged,
        names=names,
        decisions=decisions,
        other_actions=other_actions,
        held=held,
        qualification_tests=qualification_tests,
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
    return render_template(
        "dashboard/items.html", test=test, rows=rows, attempts=len(graded), min_answers=MIN_FLAG_RESPONSES
    )
