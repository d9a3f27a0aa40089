"""QA review: the queue, one assignment's evidence, a worker in a campaign, and the decisions.

Every decision goes through ``hits.requester.quality.qa_review`` (outbox entries
applied through the API once the request commits, and an audit row naming the
reviewer). Pages and actions outside the user's campaigns are a 404.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, cast

from flask import abort, flash, redirect, render_template, request, send_from_directory, url_for
from sqlalchemy import select

from hits.requester.campaigns.staff import scoped_campaign_ids, visible_test_ids
from hits.requester.quality import qa_review, staff_actions
from hits.requester.quality.evidence import assignment_evidence, decisions_of, digest_of, evidence_digest
from hits.requester.quality.live_copying import pairs_of
from hits.requester.quality.review_queue import REASONS, Reason, review_queue
from hits.requester.quality.worker_profile import gold_plot_data, worker_profile
from hits.requester.tables.campaigns import Campaign, PublishedHIT, Submission, WorkerStats
from server.db import requester_session
from server.requester.dashboard import plots
from server.requester.dashboard.base import (
    bp,
    campaign_or_404,
    page_number,
    row_id,
    signed_in_staff,
    staff_required,
    svg_response,
)
from server.task_queue import send_after_commit

PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
#: What each decision on one held assignment does, said on its button.
DECISION_WORDS = {"approve": "Approve and pay", "reject": "Reject (the worker reads the reason)"}


@bp.get("/queue")
@staff_required
def queue() -> Any:
    """Flagged workers and held work across the user's campaigns, most valuable decision first."""
    reason = request.args.get("reason") or None
    page = review_queue(
        requester_session(),
        scoped_campaign_ids(signed_in_staff()),
        campaign_id=row_id(request.args.get("campaign")),
        template=request.args.get("template") or None,
        reason=cast(Reason, reason) if reason in REASONS else None,
        page=page_number(request.args.get("page")),
    )
    return render_template("dashboard/queue.html", page=page, reasons=REASONS, args=request.args)


def _submission_or_404(assignment_id: str) -> Submission:
    submission = requester_session().scalar(
        select(Submission).where(Submission.assignment_id == assignment_id)
    )
    if submission is None:
        abort(404)
    campaign_or_404(submission.published_hit.campaign_id)
    return submission


@bp.get("/assignments/<assignment_id>")
@staff_required
def assignment(assignment_id: str) -> Any:
    """One assignment as its worker saw it, with the answers, gold expected against given, and signals."""
    evidence = assignment_evidence(requester_session(), _submission_or_404(assignment_id))
    return render_template(
        "dashboard/assignment.html",
        e=evidence,
        decision_words=DECISION_WORDS,
        digest=evidence_digest(evidence),
    )


@bp.get("/campaigns/<int:campaign_id>/media/<path:name>")
@staff_required
def campaign_media(campaign_id: int, name: str) -> Any:
    """A picture of the campaign's media folder, for the evidence pages (staff only)."""
    campaign_or_404(campaign_id)
    campaign = requester_session().get(Campaign, campaign_id)
    media = campaign.spec.get("media_path") if campaign is not None else None
    # Pictures only (an item's image may sit in a subfolder; send_from_directory refuses ".."
    # and absolute paths): nothing else of the folder is served on the dashboard's origin.
    if not media or not name.lower().endswith(PICTURE_SUFFIXES):
        abort(404)
    response = send_from_directory(Path(media), name, max_age=3600)
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


@bp.get("/workers/<worker_id>")
@staff_required
def worker_profile_page(worker_id: str) -> Any:
    """A worker across the user's campaigns: standing, gold over time, actions, qualification tests."""
    rs = requester_session()
    staff = signed_in_staff()
    profile = worker_profile(rs, scoped_campaign_ids(staff), worker_id, visible_test_ids(rs, staff))
    if not profile.campaigns:
        abort(404)  # a worker outside the user's campaigns is a worker that does not exist
    return render_template("dashboard/profile.html", p=profile)


@bp.get("/workers/<worker_id>/plots/gold.svg")
@staff_required
def worker_gold_plot(worker_id: str) -> Any:
    """The profile's plot: cumulative gold accuracy over time, with the campaigns' thresholds."""
    rs = requester_session()
    staff = signed_in_staff()
    profile = worker_profile(rs, scoped_campaign_ids(staff), worker_id, visible_test_ids(rs, staff))
    if not profile.campaigns:
        abort(404)
    data = gold_plot_data(profile)
    svg = plots.line_over_time(
        tuple(data["when"]), tuple(data["accuracy"]), "gold accuracy so far (%)", tuple(data["thresholds"])
    )
    return svg_response(svg)


@bp.get("/workers/<int:campaign_id>/<worker_id>")
@staff_required
def worker(campaign_id: int, worker_id: str) -> Any:
    """A worker in one campaign: standing, every assignment, actions on them, and the audit log."""
    return render_template("dashboard/worker.html", **worker_page_context(campaign_id, worker_id))


def worker_page_context(campaign_id: int, worker_id: str) -> dict[str, Any]:
    """What the worker-in-a-campaign page shows (404 outside the user's campaigns)."""
    rs = requester_session()
    campaign_or_404(campaign_id)
    stats = rs.get(WorkerStats, (campaign_id, worker_id))
    campaign = rs.get(Campaign, campaign_id)
    if stats is None or campaign is None:
        abort(404)
    submissions = rs.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker_id)
        .order_by(Submission.id)
    ).all()
    counts: dict[str, int] = {}
    for s in submissions:
        counts[s.decision or "pending"] = counts.get(s.decision or "pending", 0) + 1
    return {
        "campaign": campaign,
        "stats": stats,
        "submissions": submissions,
        "counts": counts,
        "decisions": decisions_of(rs, campaign_id, worker_id),
        "copying": pairs_of(rs, campaign_id, worker_id),
        "decision_words": DECISION_WORDS,
        "digest": digest_of(
            {
                "stats": [stats.gold_correct, stats.gold_total, stats.flagged, stats.flag_reason],
                "submissions": [
                    (s.assignment_id, s.decision, s.gold_correct, s.gold_total) for s in submissions
                ],
            }
        ),
        # The action forms: a fresh token per page shown (a form posted twice queues once).
        "request_token": uuid.uuid4().hex,
        "qualification_choices": staff_actions.qualification_choices(rs, campaign),
        "policy_bonus": staff_actions.policy_bonus_words(campaign),
        "max_bonus": staff_actions.MAX_BONUS,
        "open_form": None,
        "posted": {},
    }


def _posted_digest() -> str | None:
    """The evidence digest the page's form carried (64 hex digits), or None."""
    value = request.form.get("evidence_sha256", "")
    return value if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else None


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
    try:
        done = qa_review.review_worker(
            rs,
            campaign_id,
            worker_id,
            cast(qa_review.WorkerReview, action),
            staff.id,
            request.form.get("note", "")[:2000],
            evidence_sha256=_posted_digest(),
        )
    except qa_review.NotFlagged as exc:
        flash(f"Nothing done: {exc}.", "error")
        return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=worker_id))
    _send(done.entry_ids)
    verb = "rejected" if action == "confirm" else "approved"
    said = f"Flag {'confirmed' if action == 'confirm' else 'cleared'} for worker {worker_id}: "
    said += f"{done.decided} held assignment{'s' if done.decided != 1 else ''} {verb}"
    if action == "clear" and done.already_rejected:
        said += (
            f"; {done.already_rejected} assignment{'s' if done.already_rejected != 1 else ''} the quality "
            "model rejected earlier stay rejected"
        )
    flash(said + ".", "info")
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
    # An empty reason: the campaign's own rejection feedback (its quality policy) is sent.
    feedback = (request.form.get("feedback") or "").strip()
    try:
        entry_ids = qa_review.decide_held(
            rs,
            submission_id,
            cast(qa_review.HeldDecision, action),
            staff.id,
            request.form.get("note", "")[:2000],
            feedback=feedback[:1024] or None,
            evidence_sha256=_posted_digest(),
        )
    except qa_review.NotHeld:
        flash("That assignment is not waiting for review.", "error")
        return redirect(url_for("dashboard.queue"))
    _send(entry_ids)
    flash(f"{action.capitalize()} queued for assignment {submission.assignment_id}.", "info")
    back = request.form.get("back")
    if back == "assignment":
        return redirect(url_for("dashboard.assignment", assignment_id=submission.assignment_id))
    campaign_id = submission.published_hit.campaign_id
    return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=submission.worker_id))


def _selected() -> list[Submission]:
    """The held assignments ticked on the page, each in a campaign the user may see."""
    ids = sorted({n for n in map(row_id, request.form.getlist("submission")) if n is not None})
    # Only within the user's campaigns: another campaign's id is dropped like one that does not exist.
    return list(
        requester_session().scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(
                Submission.id.in_(ids),
                PublishedHIT.campaign_id.in_(scoped_campaign_ids(signed_in_staff())),
            )
            .order_by(Submission.id)
        )
    )


@bp.post("/bulk")
@staff_required
def bulk_confirm() -> Any:
    """Say what deciding the selection does, with the money involved, before anything is done."""
    action = request.form.get("action", "")
    if action not in DECISION_WORDS:
        abort(400)
    selected = [s for s in _selected() if s.decision == "held"]
    if not selected:
        flash("Select at least one held assignment first.", "error")
        return redirect(request.referrer or url_for("dashboard.queue"))
    return render_template(
        "dashboard/bulk.html",
        action=action,
        selected=selected,
        cost=qa_review.selection_cost(requester_session(), selected),
        back=request.form.get("back", ""),
        digest=_posted_digest() or "",
    )


@bp.post("/bulk/apply")
@staff_required
def bulk_apply() -> Any:
    """Decide the confirmed selection: each assignment once, through the outbox, each in the log."""
    action = request.form.get("action", "")
    if action not in DECISION_WORDS:
        abort(400)
    selected = _selected()
    feedback = (request.form.get("feedback") or "").strip()[:1024]
    done = qa_review.decide_many(
        requester_session(),
        [s.id for s in selected],
        cast(qa_review.HeldDecision, action),
        signed_in_staff().id,
        request.form.get("note", "")[:2000],
        feedback=feedback or None,
        evidence_sha256=_posted_digest(),
    )
    _send(done.entry_ids)
    verb = "approved" if action == "approve" else "rejected"
    said = f"{len(done.decided)} assignment{'s' if len(done.decided) != 1 else ''} {verb}"
    if done.skipped:
        said += f"; {len(done.skipped)} had been decided meanwhile and were left as they were"
    flash(said + ".", "info")
    back = request.form.get("back", "")
    first = selected[0] if selected else None
    if first is not None and back == "worker":
        return redirect(
            url_for(
                "dashboard.worker", campaign_id=first.published_hit.campaign_id, worker_id=first.worker_id
            )
        )
    return redirect(url_for("dashboard.queue"))


def _send(entry_ids: list[int]) -> None:
    """Apply the outbox entries once the request's transaction commits (one task, in order)."""
    if entry_ids:
        send_after_commit(requester_session(), "hitforge.apply_decisions", entry_ids)
