"""Qualifications on the worker site: find, request, and take MTurk-native tests.

A type granted by a test hitforge grades (``hitforge qualification publish``)
links to that test (``/qualify/<id>``) instead of offering a request.

The test's clock starts when the worker presses "Start the test" and is kept
in the marketplace (``hits.market.worker_quals.start_test``): starting again,
from any browser, continues the same clock; answers that arrive after
TestDurationInSeconds (plus a short grace for the round trip) are refused, and
a test left unsubmitted counts as a failed attempt for the retry delay.
"""

from __future__ import annotations

from typing import Any

from flask import abort, flash, g, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from hits.db import utcnow
from hits.market.errors import RequestError
from hits.market.models import QualificationType
from hits.market.models.qualifications import QualificationTestAttempt
from hits.market.question_forms import answers_to_qfa, form_values, parse_question_form, read_answers
from hits.market.worker_quals import (
    SYSTEM_NAMES,
    offer,
    request_qualification,
    requestable_types,
    start_test,
    test_seconds,
)
from server.capabilities import graded_test_links
from server.db import market_session
from server.market.worker_site.base import bp, signed_in_worker, worker_required
from server.market.worker_site.work import QUESTION_FORM_CSP


def _qtype(qtype_id: str) -> QualificationType:
    qtype = market_session().get(QualificationType, qtype_id)
    if qtype is None or qtype.requester_id is None or qtype.status != "Active":
        abort(404)
    return qtype


@bp.get("/qualifications")
@worker_required
def qualifications() -> Any:
    """Qualification types the worker can request or take a test for."""
    query = request.args.get("q", "").strip()[:200]
    ms, worker = market_session(), signed_in_worker()
    offers = [offer(ms, worker, t) for t in requestable_types(ms, query)]
    links = graded_test_links(o.qtype.id for o in offers)
    return render_template("worker/qualifications.html", offers=offers, query=query, graded_test_links=links)


@bp.get("/qualifications/<qtype_id>")
@worker_required
def qualification(qtype_id: str) -> Any:
    """One qualification type: what it is, where the worker stands, and how to get it."""
    if qtype_id in SYSTEM_NAMES:
        return render_template("worker/qualification_system.html", name=SYSTEM_NAMES[qtype_id])
    qtype = _qtype(qtype_id)
    return render_template(
        "worker/qualification.html",
        offer=offer(market_session(), signed_in_worker(), qtype),
        now=utcnow(),
        test_link=graded_test_links([qtype.id]).get(qtype.id),
    )


@bp.post("/qualifications/<qtype_id>/request")
@worker_required
def request_without_test(qtype_id: str) -> Response:
    """Ask for a qualification that has no test: granted now if AutoGranted, else pending."""
    qtype = _qtype(qtype_id)
    if qtype.test is not None:
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    link = graded_test_links([qtype.id]).get(qtype.id)
    if link is not None:
        # Granted by passing hitforge's test: a request would wait for nobody.
        return redirect(link)
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


@bp.post("/qualifications/<qtype_id>/test/start", endpoint="start_test")
@worker_required
def start_test_clock(qtype_id: str) -> Response:
    """Start the test's clock (or go back to the test already running, on the same clock)."""
    qtype = _qtype(qtype_id)
    try:
        start_test(market_session(), signed_in_worker(), qtype)
    except RequestError as exc:
        g.rollback_only = True
        flash(exc.message, "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    return redirect(url_for("worker_site.take_test", qtype_id=qtype.id))


def _test_page(
    qtype: QualificationType,
    attempt: QualificationTestAttempt,
    values: dict[str, list[str]],
    errors: dict[str, str],
) -> Any:
    assert qtype.test is not None  # noqa: S101 - callers check
    page = render_template(
        "worker/qualification_test.html",
        qtype=qtype,
        doc=parse_question_form(qtype.test),
        values=values,
        errors=errors,
        deadline=attempt.deadline.strftime("%H:%M:%S UTC"),
        seconds=test_seconds(qtype),
    )
    return page, 422 if errors else 200, {"Content-Security-Policy": QUESTION_FORM_CSP}


@bp.route("/qualifications/<qtype_id>/test", methods=["GET", "POST"])
@worker_required
def take_test(qtype_id: str) -> Any:
    """The test form; posting it scores it (AnswerKey) or leaves it for the requester."""
    qtype = _qtype(qtype_id)
    if qtype.test is None:
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    worker = signed_in_worker()
    current = offer(market_session(), worker, qtype)
    attempt = current.attempt
    # The grace after the deadline is for the round trip of the final submit only.
    late = attempt is not None and request.method == "GET" and utcnow() > attempt.deadline
    if attempt is None or late:
        if late or current.abandoned is not None:
            flash("The time for this test ran out; it counts as an attempt.", "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    if request.method == "GET":
        return _test_page(qtype, attempt, {}, {})
    doc = parse_question_form(qtype.test)
    answers, errors = read_answers(doc, request.form.getlist)
    if errors:
        return _test_page(qtype, attempt, form_values(doc, request.form.getlist), errors)
    try:
        result = request_qualification(market_session(), worker, qtype, answers_to_qfa(answers))
    except RequestError as exc:
        g.rollback_only = True
        flash(exc.message, "error")
        return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
    if result.status == "Granted":
        flash("Your test was scored; your new score is shown below.", "info")
    else:
        flash("Your answers were sent to the requester, who will score them.", "info")
    return redirect(url_for("worker_site.qualification", qtype_id=qtype.id))
