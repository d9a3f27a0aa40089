"""The worker site: sign up, sign in, find HITs, preview, accept, work, submit."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

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
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import func, select
from werkzeug.wrappers import Response

from hits.market import accounts, assignment_ops, ledger
from hits.market.errors import RequestError
from hits.market.hit_ops import refresh_status
from hits.market.models import HIT, Assignment, HITType, Requester, Worker
from hits.market.models.work import ACCEPTED, ASSIGNABLE
from hits.market.qualification_ops import unmet_requirements
from hits.market.questions import answers_to_xml, parse_question
from server.db import market_session, runtime

bp = Blueprint("worker_site", __name__)
NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE"


def current_worker() -> Worker | None:
    if "worker" not in g:
        worker_id = session.get("worker_id")
        g.worker = market_session().get(Worker, worker_id) if worker_id else None
    worker: Worker | None = g.worker
    return worker


def worker_required(view: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_worker() is None:
            return redirect(url_for("worker_site.signin", next=request.path))
        return view(*args, **kwargs)

    return wrapped


@bp.app_context_processor
def _inject_worker() -> dict[str, Any]:
    return {"worker": current_worker()}


@bp.route("/signup", methods=["GET", "POST"])
def signup() -> Any:
    if request.method == "POST":
        try:
            worker = accounts.create_worker(
                market_session(),
                request.form.get("username", ""),
                request.form.get("password", ""),
                country=request.form.get("country", "US") or "US",
            )
        except RequestError as exc:
            flash(exc.message, "error")
            return render_template("worker/signup.html"), 400
        session.clear()
        session["worker_id"] = worker.id
        return redirect(url_for("worker_site.index"))
    return render_template("worker/signup.html")


@bp.route("/signin", methods=["GET", "POST"])
def signin() -> Any:
    if request.method == "POST":
        worker = accounts.authenticate_worker(
            market_session(), request.form.get("username", ""), request.form.get("password", "")
        )
        if worker is None:
            flash("Unknown user name or wrong password.", "error")
            return render_template("worker/signin.html"), 401
        session.clear()
        session["worker_id"] = worker.id
        target = request.args.get("next", "")
        # Only local paths: never an open redirect.
        return redirect(
            target if target.startswith("/") and not target.startswith("//") else url_for("worker_site.index")
        )
    return render_template("worker/signin.html")


@bp.post("/signout")
def signout() -> Response:
    session.clear()
    return redirect(url_for("worker_site.signin"))


@bp.get("/")
def index() -> Any:
    worker = current_worker()
    if worker is None:
        return redirect(url_for("worker_site.signin"))
    ms = market_session()
    hits = ms.scalars(select(HIT).where(HIT.status == ASSIGNABLE).order_by(HIT.created_at)).all()
    done = set(ms.scalars(select(Assignment.hit_id).where(Assignment.worker_id == worker.id)))
    groups: dict[str, dict[str, Any]] = {}
    for hit in hits:
        refresh_status(ms, hit)
        if hit.status != ASSIGNABLE or hit.id in done:
            continue
        hit_type: HITType = hit.hit_type
        if unmet_requirements(ms, worker, hit_type.qualification_requirements, "Discover"):
            continue
        group = groups.setdefault(
            hit_type.id, {"type": hit_type, "hits": 0, "first": hit, "requester": hit.requester_id}
        )
        group["hits"] += 1
    names = dict(ms.execute(select(Requester.id, Requester.name)).all())
    return render_template("worker/index.html", groups=list(groups.values()), requester_names=names)


def _frame_url(hit: HIT, assignment_id: str, worker_id: str | None) -> str | None:
    question = parse_question(hit.question)
    if question.external_url is None:
        return None
    params = {"assignmentId": assignment_id, "hitId": hit.id}
    if worker_id:
        params["workerId"] = worker_id
        params["turkSubmitTo"] = runtime().settings.public_url
    joiner = "&" if "?" in question.external_url else "?"
    return question.external_url + joiner + urlencode(params)


@bp.get("/hits/<hit_id>")
@worker_required
def preview(hit_id: str) -> Any:
    hit = market_session().get(HIT, hit_id)
    if hit is None:
        abort(404)
    worker = current_worker()
    assert worker is not None
    if unmet_requirements(market_session(), worker, hit.hit_type.qualification_requirements, "Preview"):
        abort(403)
    return render_template(
        "worker/frame.html", hit=hit, frame_url=_frame_url(hit, NOT_AVAILABLE, None), assignment=None
    )


@bp.post("/hits/<hit_id>/accept")
@worker_required
def accept(hit_id: str) -> Any:
    worker = current_worker()
    assert worker is not None
    try:
        assignment = assignment_ops.accept(market_session(), worker, hit_id)
    except RequestError as exc:
        flash(exc.message, "error")
        g.rollback_only = True
        return redirect(url_for("worker_site.index"))
    return redirect(url_for("worker_site.work", assignment_id=assignment.id))


def _own_assignment(assignment_id: str) -> Assignment:
    worker = current_worker()
    assignment = market_session().get(Assignment, assignment_id)
    # Someone else's assignment is a 404, exactly like a missing one.
    if worker is None or assignment is None or assignment.worker_id != worker.id:
        abort(404)
    return assignment


@bp.get("/work/<assignment_id>")
@worker_required
def work(assignment_id: str) -> Any:
    assignment = _own_assignment(assignment_id)
    if assignment.status != ACCEPTED:
        flash("That assignment is finished.", "info")
        return redirect(url_for("worker_site.index"))
    return render_template(
        "worker/frame.html",
        hit=assignment.hit,
        assignment=assignment,
        frame_url=_frame_url(assignment.hit, assignment.id, assignment.worker_id),
    )


@bp.post("/work/<assignment_id>/return")
@worker_required
def return_assignment(assignment_id: str) -> Response:
    assignment = _own_assignment(assignment_id)
    worker = current_worker()
    assert worker is not None
    assignment_ops.return_assignment(market_session(), worker, assignment.id)
    flash("The HIT was returned.", "info")
    return redirect(url_for("worker_site.index"))


@bp.post("/mturk/externalSubmit")
def external_submit() -> Any:
    """Where HIT pages post their answers, as on MTurk; stored as QuestionFormAnswers."""
    worker = current_worker()
    if worker is None:
        abort(403)
    assignment_id = request.form.get("assignmentId", "")
    fields = [(k, v) for k, v in request.form.items(multi=True) if k not in ("assignmentId", "csrf_token")]
    try:
        assignment_ops.submit(market_session(), worker, assignment_id, answers_to_xml(fields))
    except RequestError as exc:
        g.rollback_only = True
        if exc.turk_error_code.endswith("DoesNotExist"):
            abort(404)
        flash(exc.message, "error")
        return render_template("worker/submitted.html", ok=False), 409
    return render_template("worker/submitted.html", ok=True)


@bp.get("/me")
@worker_required
def dashboard() -> Any:
    worker = current_worker()
    assert worker is not None
    ms = market_session()
    counts = dict(
        ms.execute(
            select(Assignment.status, func.count())
            .where(Assignment.worker_id == worker.id)
            .group_by(Assignment.status)
        ).all()
    )
    earnings = ledger.balance(ms, ledger.worker_account(worker.id))
    recent = ms.scalars(
        select(Assignment)
        .where(Assignment.worker_id == worker.id)
        .order_by(Assignment.accept_time.desc())
        .limit(50)
    ).all()
    return render_template("worker/me.html", counts=counts, earnings=earnings, recent=recent)


def init_app(app: Flask, csrf: CSRFProtect) -> None:
    # externalSubmit is posted by requesters' HIT pages, which cannot carry our
    # CSRF token; it is guarded by the signed-in worker owning the assignment.
    csrf.exempt(external_submit)
    app.register_blueprint(bp)
