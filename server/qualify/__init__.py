"""Qualification test pages, graded by hitforge (the requester side).

The worker is identified by the worker-site sign-in (one app in the embedded
default). Answers never reach the browser; a graded score reaches the
marketplace through the outbox as ``AssociateQualificationWithWorker``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    redirect,
    render_template,
    request,
    send_from_directory,
    url_for,
)

from qualification.models import QualificationAttempt, QualificationTest
from qualification.service import attempts_of, bank_for, may_start, paper_view, start_attempt, submit_attempt
from server.db import requester_session
from server.task_queue import send_after_commit
from server.worker_site.base import current_worker

bp = Blueprint("qualify", __name__, url_prefix="/qualify")


def _worker_id() -> str:
    worker = current_worker()  # checks the cookie's sign-in is still current, not just signed
    if worker is None:
        abort(redirect(url_for("worker_site.signin", next=request.path)))
    return worker.id


def _test(test_id: int) -> QualificationTest:
    test = requester_session().get(QualificationTest, test_id)
    if test is None:
        abort(404)
    return test


@bp.get("/<int:test_id>")
def intro(test_id: int) -> Any:
    test = _test(test_id)
    worker_id = _worker_id()
    decision = may_start(requester_session(), test, worker_id)
    history = attempts_of(requester_session(), test.id, worker_id)
    return render_template("qualify/intro.html", test=test, decision=decision, history=history)


@bp.post("/<int:test_id>/start")
def start(test_id: int) -> Any:
    test = _test(test_id)
    try:
        attempt = start_attempt(requester_session(), test, _worker_id())
    except PermissionError as exc:
        history = attempts_of(requester_session(), test.id, _worker_id())
        return render_template(
            "qualify/intro.html", test=test, refused=str(exc), decision=None, history=history
        ), 403
    return redirect(url_for("qualify.attempt", attempt_id=attempt.id))


def _own_attempt(attempt_id: int) -> tuple[QualificationAttempt, QualificationTest]:
    attempt = requester_session().get(QualificationAttempt, attempt_id)
    if attempt is None or attempt.worker_id != _worker_id():
        abort(404)
    return attempt, _test(attempt.test_id)


@bp.get("/attempts/<int:attempt_id>")
def attempt(attempt_id: int) -> Any:
    attempt, test = _own_attempt(attempt_id)
    if attempt.submitted_at is not None:
        return render_template("qualify/result.html", test=test, attempt=attempt)
    return render_template("qualify/test.html", test=test, attempt=attempt, view=paper_view(test, attempt))


@bp.post("/attempts/<int:attempt_id>/submit")
def submit(attempt_id: int) -> Any:
    attempt, test = _own_attempt(attempt_id)
    answers = {k.removeprefix("q-"): v for k, v in request.form.items() if k.startswith("q-")}
    rs = requester_session()
    try:
        submitted = submit_attempt(rs, test, attempt, answers)
    except PermissionError as exc:
        return render_template("qualify/result.html", test=test, attempt=attempt, refused=str(exc)), 409
    send_after_commit(rs, "hitforge.apply_decision", submitted.outbox_id)
    return render_template("qualify/result.html", test=test, attempt=attempt)


@bp.get("/<int:test_id>/media/<path:filename>")
def media(test_id: int, filename: str) -> Any:
    test = _test(test_id)
    _worker_id()
    return send_from_directory(Path(test.bank_path).parent, filename, max_age=3600)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    # Validate banks of existing tests lazily (first use); nothing is read at import.
    _ = bank_for
