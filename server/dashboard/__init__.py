"""The QA and requester dashboard: sign-in with roles, flagged workers, evidence, decisions."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from sqlalchemy import func, select
from werkzeug.security import check_password_hash

from hits.campaigns.models import (
    Campaign,
    OutboxEntry,
    ReviewAction,
    StaffUser,
    Submission,
    WorkerStats,
)
from qualification.analysis import item_analysis
from qualification.models import QualificationAttempt, QualificationTest
from server.db import requester_session
from server.task_queue import send_after_commit

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard")
ROLES = ("qa", "requester", "admin")


def current_staff() -> StaffUser | None:
    if "staff" not in g:
        staff_id = session.get("staff_id")
        g.staff = requester_session().get(StaffUser, staff_id) if staff_id else None
    staff: StaffUser | None = g.staff
    return staff


def staff_required(view: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_staff() is None:
            return redirect(url_for("dashboard.signin", next=request.path))
        return view(*args, **kwargs)

    return wrapped


@bp.route("/signin", methods=["GET", "POST"])
def signin() -> Any:
    if request.method == "POST":
        user = requester_session().scalar(
            select(StaffUser).where(StaffUser.username == request.form.get("username", "").strip())
        )
        if user is None or not check_password_hash(user.password_hash, request.form.get("password", "")):
            flash("Unknown user name or wrong password.", "error")
            return render_template("dashboard/signin.html"), 401
        session.clear()
        session["staff_id"] = user.id
        return redirect(url_for("dashboard.home"))
    return render_template("dashboard/signin.html")


@bp.post("/signout")
def signout() -> Any:
    session.clear()
    return redirect(url_for("dashboard.signin"))


@bp.get("/")
@staff_required
def home() -> Any:
    rs = requester_session()
    campaigns = rs.scalars(select(Campaign).order_by(Campaign.created_at.desc())).all()
    flagged = rs.scalars(select(WorkerStats).where(WorkerStats.flagged.is_(True))).all()
    decisions = dict(rs.execute(select(OutboxEntry.action, func.count()).group_by(OutboxEntry.action)).all())
    return render_template("dashboard/home.html", campaigns=campaigns, flagged=flagged, decisions=decisions)


@bp.get("/workers/<int:campaign_id>/<worker_id>")
@staff_required
def worker(campaign_id: int, worker_id: str) -> Any:
    rs = requester_session()
    stats = rs.get(WorkerStats, (campaign_id, worker_id))
    if stats is None:
        abort(404)
    submissions = rs.scalars(
        select(Submission).where(Submission.worker_id == worker_id).order_by(Submission.id)
    ).all()
    actions = rs.scalars(
        select(ReviewAction)
        .where(ReviewAction.campaign_id == campaign_id, ReviewAction.worker_id == worker_id)
        .order_by(ReviewAction.created_at)
    ).all()
    return render_template("dashboard/worker.html", stats=stats, submissions=submissions, actions=actions)


@bp.post("/workers/<int:campaign_id>/<worker_id>/review")
@staff_required
def review(campaign_id: int, worker_id: str) -> Any:
    rs = requester_session()
    staff = current_staff()
    assert staff is not None
    stats = rs.get(WorkerStats, (campaign_id, worker_id))
    action = request.form.get("action", "")
    if stats is None or action not in ("confirm", "clear"):
        abort(400)
    stats.flag_review = action
    if action == "clear":
        stats.flagged = False
    rs.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id=worker_id,
            staff_user_id=staff.id,
            action=action,
            note=request.form.get("note", "")[:2000],
        )
    )
    flash(f"Recorded: {action} for worker {worker_id}.", "info")
    return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=worker_id))


@bp.post("/submissions/<int:submission_id>/decide")
@staff_required
def decide_submission(submission_id: int) -> Any:
    """A reviewer approves or rejects held work; the outbox applies it through the API."""
    rs = requester_session()
    staff = current_staff()
    assert staff is not None
    submission = rs.get(Submission, submission_id)
    action = request.form.get("action", "")
    if submission is None or action not in ("approve", "reject"):
        abort(400)
    if submission.decision != "held":
        flash("That assignment is not waiting for review.", "error")
        return redirect(url_for("dashboard.home"))
    campaign_id = submission.published_hit.campaign_id
    payload = (
        {"feedback": request.form.get("feedback") or "Reviewed by our QA team."} if action == "reject" else {}
    )
    entry = OutboxEntry(
        campaign_id=campaign_id, action=action, target=submission.assignment_id, payload=payload
    )
    submission.decision = action
    rs.add(entry)
    rs.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id=submission.worker_id,
            staff_user_id=staff.id,
            action=f"{action} {submission.assignment_id}",
            note=request.form.get("note", "")[:2000],
        )
    )
    rs.flush()
    send_after_commit(rs, "hitforge.apply_decision", entry.id)
    flash(f"{action.capitalize()} queued for assignment {submission.assignment_id}.", "info")
    return redirect(url_for("dashboard.worker", campaign_id=campaign_id, worker_id=submission.worker_id))


@bp.get("/qualification/<int:test_id>/items")
@staff_required
def item_analysis_view(test_id: int) -> Any:
    """Item analysis of a qualification test from its graded attempts."""
    rs = requester_session()
    test = rs.get(QualificationTest, test_id)
    if test is None:
        abort(404)
    graded = rs.scalars(
        select(QualificationAttempt.correct_items).where(
            QualificationAttempt.test_id == test_id, QualificationAttempt.correct_items.is_not(None)
        )
    ).all()
    rows = item_analysis([dict(c) for c in graded if c]) if graded else []
    return render_template("dashboard/items.html", test=test, rows=rows, attempts=len(graded))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
