"""Qualification test pages, graded by hitforge (the requester side).

The worker is identified by the worker-site sign-in (one app in the embedded
default). Answers never reach the browser; a graded score reaches the
marketplace through the outbox as ``AssociateQualificationWithWorker``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from sqlalchemy import select

from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
from qualification.media import content_type
from qualification.policy import Decision
from qualification.service import (
    attempt_result,
    attempts_of,
    bank_for,
    may_start,
    paper_view,
    start_attempt,
    submit_attempt,
)
from server import capabilities
from server.db import requester_session
from server.task_queue import send_after_commit

bp = Blueprint("qualify", __name__, url_prefix="/qualify")


def _worker_id() -> str:
    worker_id = capabilities.signed_in_worker_id()  # a current sign-in, not just a signed cookie
    if worker_id is None:
        abort(redirect(url_for("worker_site.signin", next=request.path)))
    return worker_id


def _test(test_id: int) -> QualificationTest:
    test = requester_session().get(QualificationTest, test_id)
    if test is None:
        abort(404)
    return test


@bp.get("/<int:test_id>")
def intro(test_id: int) -> Any:
    worker_id = _worker_id()  # first: an anonymous visitor must not learn which test ids exist
    test = _test(test_id)
    decision = may_start(requester_session(), test, worker_id)
    history = attempts_of(requester_session(), test.id, worker_id)
    return _intro_page(test, history, decision=decision)


@bp.post("/<int:test_id>/start")
def start(test_id: int) -> Any:
    worker_id = _worker_id()
    test = _test(test_id)
    try:
        attempt = start_attempt(requester_session(), test, worker_id)
    except PermissionError as exc:
        history = attempts_of(requester_session(), test.id, worker_id)
        return _intro_page(test, history, refused=str(exc)), 403
    return redirect(url_for("qualify.attempt", attempt_id=attempt.id))


def _intro_page(
    test: QualificationTest,
    history: list[QualificationAttempt],
    decision: Decision | None = None,
    refused: str | None = None,
) -> str:
    """What the test holds (its sections, as the bank defines them), the rules, and the worker's attempts."""
    bank = bank_for(test.bank_path)
    return render_template(
        "qualify/intro.html",
        test=test,
        bank=bank,
        questions=sum(s.sample for s in bank.sections),
        decision=decision,
        refused=refused,
        history=history,
    )


def _own_attempt(attempt_id: int) -> tuple[QualificationAttempt, QualificationTest]:
    """The signed-in worker's attempt; another's is a 404 exactly like a missing one.

    Sign-in is asked first, so an anonymous visitor is sent to sign in for any
    id and learns nothing of which attempts exist.
    """
    worker_id = _worker_id()
    attempt = requester_session().get(QualificationAttempt, attempt_id)
    if attempt is None or attempt.worker_id != worker_id:
        abort(404)
    return attempt, _test(attempt.test_id)


@bp.get("/attempts/<int:attempt_id>")
def attempt(attempt_id: int) -> Any:
    attempt, test = _own_attempt(attempt_id)
    if attempt.submitted_at is not None:
        return _result_page(test, attempt)
    return render_template("qualify/test.html", test=test, attempt=attempt, view=paper_view(test, attempt))


@bp.post("/attempts/<int:attempt_id>/submit")
def submit(attempt_id: int) -> Any:
    attempt, test = _own_attempt(attempt_id)
    answers = {k.removeprefix("q-"): v for k, v in request.form.items() if k.startswith("q-")}
    rs = requester_session()
    try:
        submitted = submit_attempt(rs, test, attempt, answers)
    except PermissionError as exc:
        return _result_page(test, attempt, refused=str(exc)), 409
    send_after_commit(rs, "hitforge.apply_decision", submitted.outbox_id)
    return _result_page(test, attempt)


def _result_page(test: QualificationTest, attempt: QualificationAttempt, refused: str | None = None) -> str:
    """The score, each section against its bar, and the value the marketplace records."""
    bank = bank_for(test.bank_path)
    return render_template(
        "qualify/result.html",
        test=test,
        attempt=attempt,
        result=attempt_result(test, attempt),
        titles={s.id: s.title or s.id.title() for s in bank.sections},
        overall_pass=bank.overall_pass,
        refused=refused,
    )


@bp.get("/<int:test_id>/media/<path:filename>", merge_slashes=False)
def media(test_id: int, filename: str) -> Any:
    """A picture of the test, by its served name: only files the test's items show."""
    _worker_id()
    test = _test(test_id)
    # Looked up, never joined onto a folder: no spelling of a path reaches another file.
    path = bank_for(test.bank_path).media.get(filename)
    if path is None:
        abort(404)
    response = send_file(path, mimetype=content_type(filename), max_age=3600, conditional=True)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def graded_test_links(qtype_ids: Iterable[str]) -> dict[str, str]:
    """Qualification type id -> the URL of the hitforge-graded test that grants it, for types that have one.

    The worker site links a qualification's page here instead of offering a
    request: a request of such a type would only wait for a requester who
    grades through the test, not through requests.
    """
    ids = set(qtype_ids)
    if not ids:
        return {}
    rows = requester_session().execute(
        select(QualificationTest.qualification_type_id, QualificationTest.id)
        .where(QualificationTest.qualification_type_id.in_(ids))
        .order_by(QualificationTest.id)
    )
    links: dict[str, str] = {}
    for qtype_id, test_id in rows:
        links.setdefault(qtype_id, url_for("qualify.intro", test_id=test_id))
    return links


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    capabilities.provide(app, graded_test_links=graded_test_links)
    # Validate banks of existing tests lazily (first use); nothing is read at import.
    _ = bank_for
