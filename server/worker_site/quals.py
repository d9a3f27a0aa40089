"""Qualifications on the worker site: find, request, and take MTurk-native tests.

The test's clock starts when the worker presses "Start the test"; its start
time is kept in the signed session cookie, and answers that arrive after
TestDurationInSeconds (plus a short grace for the round trip) are refused.
"""

from __future__ import annotations

import time
from typing import Any

from flask import abort, flash, g, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from hits.market.errors import RequestError
from hits.market.models import QualificationType
from hits.market.question_forms import answers_to_qfa, form_values, parse_question_form, read_answers
from hits.market.worker_quals import SYSTEM_NAMES, offer, request_qualification, requestable_types
from server.db import market_session
from server.worker_site.base import bp, signed_in_worker, worker_required
from server.worker_site.work import QUESTION_FORM_CSP

GRACE_SECONDS = 30
SESSION_KEY = "qualification_tests"


def _qtype(qtype_id: str) -> QualificationType:
    qtype = market_session().get(QualificationType, qtype_id)
    if qtype is None or qtype.requester_id is None or qtype.status != "Active":
        abort(404)
    return qtype


def _started(qtype_id: str) -> float | None:
    value = session.get(SESSION_KEY, {}).get(qtype_id)
    return float(value) if isinstance(value, int | float) else None


def _set_started(qtype_id: str, started: float | None) -> None:
    tests = dict(session.get(SESSION_KEY, {}))
    if started is None:
        tests.pop(qtype_id, None)
    else:
        tests[qtype_id] = started
    session[SESSION_KEY] = tests


@bp.get("/qualifications")
@worker_required
def qualifications() -> Any:
    """Qualification types the worker can request or take a test for."""
    query = request.args.get("q", "").strip()[:200]
    ms, worker = market_session(), signed_in_worker()
    offers = [offer(ms, worker, t) for t in requestable_types(ms, query)]
    return render_template("worker/qualifications.html", offers=offers, query=query)


@bp.get("/qualifications/<qtype_id>")
@worker_required
def qualification(qtype_id: str) -> Any:
    """One qualification type: what it is, where the worker stands, and how to get it."""
    if qtype_id in SYSTEM_NAMES:
        return render_template("worker/qualification_system.html", name=SYSTEM_NAMES[qtype_id])
    qtype = _qtype(qtype_id)
    return render_template(
        "worker/qualification.html", offer=offer(market_session(), signed_in_worker(), qtype)
    )


@bp.post("/qualifications/<qtype_id>/request")
@worker_required
def request_without_test(qtype_id: str) -> Response:
    """Ask for a qualification that has no test: granted now if AutoGranted, else pending."""
    qtype = _qtype(qtype_id)
    if qtype.test is not None:
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    try:
        result = request_qualification(market_session(), signed_in_worker(), qtype)
    except RequestError as exc:
        g.rollback_only = True
        flash(exc.message, "error")
    else:
        if result.status == "Granted":
            flash(f"You now hold the qualification {qtype.name}.", "info")
        else:
            flash("Your request was sent to the requester.", "info")
    return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))


@bp.post("/qualifications/<qtype_id>/test/start")
@worker_required
def start_test(qtype_id: str) -> Response:
    """Start the test's clock (unless the worker may not take it now)."""
    qtype = _qtype(qtype_id)
    current = offer(market_session(), signed_in_worker(), qtype)
    if qtype.test is None or current.blocked_reason is not None:
        flash(current.blocked_reason or "This qualification has no test.", "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    if _started(qtype.id) is None or time.time() > (_started(qtype.id) or 0) + current.test_seconds:
        _set_started(qtype.id, time.time())
    return redirect(url_for("worker_site.take_test", qtype_id=qtype.id))


def _test_page(qtype: QualificationType, values: dict[str, list[str]], errors: dict[str, str]) -> Any:
    assert qtype.test is not None  # noqa: S101 - callers check
    started = _started(qtype.id) or time.time()
    seconds = offer(market_session(), signed_in_worker(), qtype).test_seconds
    page = render_template(
        "worker/qualification_test.html",
        qtype=qtype,
        doc=parse_question_form(qtype.test),
        values=values,
        errors=errors,
        deadline=time.strftime("%H:%M:%S UTC", time.gmtime(started + seconds)),
        seconds=seconds,
    )
    return page, 422 if errors else 200, {"Content-Security-Policy": QUESTION_FORM_CSP}


@bp.route("/qualifications/<qtype_id>/test", methods=["GET", "POST"])
@worker_required
def take_test(qtype_id: str) -> Any:
    """The test form; posting it scores it (AnswerKey) or leaves it for the requester."""
    qtype = _qtype(qtype_id)
    started = _started(qtype.id)
    if qtype.test is None or started is None:
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    worker = signed_in_worker()
    current = offer(market_session(), worker, qtype)
    # A little grace for the round trip of the final submit, never more than a tenth of the test.
    grace = min(GRACE_SECONDS, current.test_seconds // 10) if request.method == "POST" else 0
    if time.time() > started + current.test_seconds + grace:
        _set_started(qtype.id, None)
        flash("The time for this test ran out. You can start it again.", "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    if request.method == "GET":
        return _test_page(qtype, {}, {})
    doc = parse_question_form(qtype.test)
    answers, errors = read_answers(doc, request.form.getlist)
    if errors:
        return _test_page(qtype, form_values(doc, request.form.getlist), errors)
    try:
        result = request_qualification(market_session(), worker, qtype, answers_to_qfa(answers))
    except RequestError as exc:
        g.rollback_only = True
        flash(exc.message, "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    _set_started(qtype.id, None)
    if result.status == "Granted":
        flash("Your test was scored; your new score is shown below.", "info")
    else:
        flash("Your answers were sent to the requester, who will score them.", "info")
    return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
