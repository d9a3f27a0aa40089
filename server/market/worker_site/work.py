"""Previewing, accepting, working on, returning and submitting HITs.

Each question type is shown its own way: an ExternalQuestion is framed from
the requester's URL, an HTMLQuestion is framed from ``/hits/<id>/html`` in a
sandbox (see ``html_question.py``), and a QuestionForm is rendered here as a
form of the site. All three end as QuestionFormAnswers on the assignment.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import urlencode

from flask import abort, flash, g, redirect, render_template, request, session, url_for
from sqlalchemy import select
from werkzeug.wrappers import Response

from hits.market import assignment_ops, decisions
from hits.market.errors import RequestError
from hits.market.models import HIT, Assignment, Worker
from hits.market.models.work import ACCEPTED
from hits.market.question_forms import (
    QuestionFormDoc,
    Upload,
    answers_to_qfa,
    form_values,
    parse_question_form,
    read_answers,
    store_uploads,
)
from hits.market.questions import ParsedQuestion, parse_question
from hits.market.recruited import is_recruited
from hits.wire.authenticity import FIELD, kept_field
from hits.wire.documents import answers_to_xml
from server import capabilities
from server.capabilities import submit_capability, turk_submit_to
from server.db import market_session
from server.market.worker_site.base import (
    NOT_AVAILABLE,
    bp,
    current_worker,
    load_worker,
    previewable_hit,
    signed_in_worker,
    worker_required,
)
from server.market.worker_site.html_question import html_frame_url, verify_submit_token
from server.metrics import ACCEPTS, SUBMISSIONS

# QuestionForm pages show requesters' images, which may live on any http(s) host.
QUESTION_FORM_CSP = (
    "default-src 'self'; img-src 'self' data: https: http:; media-src 'self' https: http:; "
    "style-src 'self'; script-src 'self'; frame-src 'none'; form-action 'self'; base-uri 'none'"
)


# A QuestionForm's answers may carry files (FileUploadAnswer, each at most UPLOAD_LIMIT_BYTES) and an
# HTML page's answers a painted mask; every other request keeps the app's MAX_CONTENT_LENGTH.
ANSWERS_BODY_LIMIT = 32 * 1024 * 1024


def _external_url(question: ParsedQuestion, hit: HIT, assignment_id: str, worker_id: str | None) -> str:
    params = {"assignmentId": assignment_id, "hitId": hit.id}
    if worker_id:
        params["workerId"] = worker_id
        params["turkSubmitTo"] = turk_submit_to(assignment_id, worker_id, hit.id)
    else:  # a preview, shown only to workers who may preview (hit_pages checks it)
        params["hitforgePreview"] = submit_capability(NOT_AVAILABLE, "", hit.id)
    url = question.external_url or ""
    return url + ("&" if "?" in url else "?") + urlencode(params)


def _show(hit: HIT, assignment: Assignment | None, worker: Worker, **form: Any) -> Any:
    """The work (or preview) page of a HIT, whatever its question type."""
    question = parse_question(hit.question)
    assignment_id = assignment.id if assignment else NOT_AVAILABLE
    frame_url: str | None = None
    doc: QuestionFormDoc | None = None
    if question.kind == "ExternalQuestion":
        frame_url = _external_url(question, hit, assignment_id, assignment.worker_id if assignment else None)
    elif question.kind == "HTMLQuestion":
        frame_url = html_frame_url(hit, assignment_id, worker)
    else:
        doc = parse_question_form(hit.question)
    response = render_template(
        "worker/frame.html",
        hit=hit,
        assignment=assignment,
        frame_url=frame_url,
        sandboxed=question.kind == "HTMLQuestion",
        frame_height=question.frame_height or 800,
        doc=doc,
        values=form.get("values", {}),
        errors=form.get("errors", {}),
        accept_next=bool(session.get("accept_next")),
    )
    status = 422 if form.get("errors") else 200
    headers = {"Content-Security-Policy": QUESTION_FORM_CSP} if doc is not None else {}
    return response, status, headers


@bp.get("/hits/<hit_id>")
@worker_required
def preview(hit_id: str) -> Any:
    """A HIT as it looks before accepting (``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``)."""
    worker = signed_in_worker()
    return _show(previewable_hit(worker, hit_id), None, worker)


@bp.post("/hits/<hit_id>/accept")
@worker_required
def accept(hit_id: str) -> Any:
    """Take an assignment of the HIT and go to work on it."""
    try:
        assignment = assignment_ops.accept(market_session(), signed_in_worker(), hit_id)
    except RequestError as exc:
        ACCEPTS.labels(exc.turk_error_code).inc()
        flash(exc.message, "error")
        g.rollback_only = True
        return redirect(url_for("worker_site.index"))
    ACCEPTS.labels("accepted").inc()
    return redirect(url_for("worker_site.work", assignment_id=assignment.id))


@bp.post("/groups/<hit_type_id>/accept")
@worker_required
def accept_from_group(hit_type_id: str) -> Any:
    """Take an assignment of any HIT of the group the worker may work on, as MTurk's Accept did.

    Posted with ``accept_next`` (the work page's "accept the next HIT" box), it
    also remembers that the worker wants the next HIT of the group after each
    submission, until they go back to the HIT list.
    """
    if request.form.get("accept_next"):
        session["accept_next"] = True
    try:
        assignment = assignment_ops.accept_from_group(market_session(), signed_in_worker(), hit_type_id)
    except RequestError as exc:
        ACCEPTS.labels(exc.turk_error_code).inc()
        flash(exc.message, "error")
        g.rollback_only = True
        return redirect(url_for("worker_site.index"))
    market_session().commit()  # before the response is built: the write lock is held no longer than needed
    ACCEPTS.labels("accepted").inc()
    return redirect(url_for("worker_site.work", assignment_id=assignment.id))


def own_assignment(assignment_id: str) -> Assignment:
    """The signed-in worker's assignment; anyone else's is a 404, exactly like a missing one."""
    worker = current_worker()
    # With its HIT (and the HIT's type) in the same query: every caller shows or changes the HIT.
    assignment = decisions.assignment_with_hit(market_session(), assignment_id)
    if worker is None or assignment is None or assignment.worker_id != worker.id:
        abort(404)
    return assignment


@bp.get("/work/<assignment_id>")
@worker_required
def work(assignment_id: str) -> Any:
    """The page to do an accepted assignment on."""
    assignment = own_assignment(assignment_id)
    if assignment.status != ACCEPTED:
        flash("That assignment is finished.", "info")
        return redirect(url_for("worker_site.index"))
    return _show(assignment.hit, assignment, signed_in_worker())


@bp.url_value_preprocessor
def _answers_body_limit(endpoint: str | None, values: dict[str, Any] | None) -> None:
    # Runs before any before_request hook, so before CSRF protection parses the form.
    if endpoint == "worker_site.answer_question_form":
        request.max_content_length = ANSWERS_BODY_LIMIT
    elif endpoint in _EXTERNAL_SUBMITS:
        # A crowd-form's taskAnswers is one field that may hold a segmentation mask's PNG
        # (megabytes of base64); a 413 here would throw the worker's work away.
        request.max_content_length = ANSWERS_BODY_LIMIT
        request.max_form_memory_size = ANSWERS_BODY_LIMIT


_EXTERNAL_SUBMITS = frozenset({"worker_site.external_submit", "worker_site.external_submit_with_capability"})


def _posted_file(name: str, limit: int) -> Upload | None:
    """The file posted as ``name``, read up to one byte past ``limit`` (enough to tell it is too big)."""
    posted = request.files.get(name)
    if posted is None or not posted.filename:
        return None
    data = posted.stream.read(limit + 1)
    return Upload(posted.filename, posted.mimetype or "application/octet-stream", data)


@bp.post("/work/<assignment_id>/answers")
@worker_required
def answer_question_form(assignment_id: str) -> Any:
    """Submit a QuestionForm HIT: check each answer, keep the input on error, store QuestionFormAnswers.

    Files for FileUploadAnswer questions are stored with the answers, in the
    same transaction, and only while the assignment is in progress.
    """
    assignment = own_assignment(assignment_id)
    worker = signed_in_worker()
    if parse_question(assignment.hit.question).kind != "QuestionForm":
        abort(404)
    doc = parse_question_form(assignment.hit.question)
    answers, errors = read_answers(doc, request.form.getlist, _posted_file)
    if errors:
        return _show(
            assignment.hit, assignment, worker, values=form_values(doc, request.form.getlist), errors=errors
        )
    # Lock the assignment row before the check (PostgreSQL; SQLite writers are already serialised):
    # a second post of the same answers waits for the first to commit, then sees it submitted
    # instead of storing its files against the (assignment, question) unique constraint.
    assignment = (
        market_session()
        .scalars(
            select(Assignment)
            .where(Assignment.id == assignment.id)
            .with_for_update(of=Assignment)
            .execution_options(populate_existing=True)
        )
        .one()
    )
    if assignment.status != ACCEPTED:
        return _submit(worker, assignment.id, "")  # already submitted (the first answers stand) or over
    store_uploads(market_session(), assignment.id, answers)
    return _submit(worker, assignment.id, answers_to_qfa(answers))


def _submit(
    worker: Worker,
    assignment_id: str,
    answer_xml: str,
    *,
    cross_site: bool = False,
    record: str | None = None,
) -> Any:
    try:
        submitted = assignment_ops.submit(market_session(), worker, assignment_id, answer_xml, record)
    except RequestError as exc:
        g.rollback_only = True
        if exc.turk_error_code.endswith("DoesNotExist"):
            abort(404)
        if cross_site:  # no session cookie came with the post: say it on the page itself
            return render_template("worker/submitted.html", ok=False, message=exc.message), 409
        flash(exc.message, "error")
        return render_template("worker/submitted.html", ok=False), 409
    # Committed before the page is rendered: on SQLite the write lock is then held
    # for the submission's statements only (a commit that fails is still a 500).
    market_session().commit()
    SUBMISSIONS.inc()
    hit_type_id = submitted.hit.hit_type_id
    # A recruited participant goes back to their place, not on to the group's next HIT (only they
    # are asked about: the requester side is not consulted on every ordinary worker's submission).
    continue_url = capabilities.after_submit(worker.id, hit_type_id) if is_recruited(worker) else None
    return render_template(
        "worker/submitted.html", ok=True, hit_type_id=hit_type_id, continue_url=continue_url
    )


@bp.post("/work/<assignment_id>/return")
@worker_required
def return_assignment(assignment_id: str) -> Response:
    """Give an assignment back so another worker can take it."""
    assignment = own_assignment(assignment_id)
    assignment_ops.return_assignment(market_session(), signed_in_worker(), assignment.id)
    flash("The HIT was returned.", "info")
    return redirect(url_for("worker_site.index"))


@bp.post("/mturk/externalSubmit")
def external_submit() -> Any:
    """Where HIT pages post their answers, as on MTurk; stored as QuestionFormAnswers.

    The worker is the signed-in one, or, for an HTMLQuestion posting from its
    cookie-less sandbox, the one a signed token names for exactly this assignment.
    """
    assignment_id = request.form.get("assignmentId", "")
    token = request.form.get("hitforgeToken")
    worker: Worker | None
    if token is not None:
        worker_id = verify_submit_token(token, assignment_id)
        worker = load_worker(market_session(), worker_id) if worker_id else None
    else:
        worker = current_worker()
    if worker is None:
        abort(403)
    return _submit(worker, assignment_id, _posted_answers(), record=_posted_record())


def _posted_answers() -> str:
    # The typing record is kept beside the answers, not in them: they stay what MTurk would store.
    skip = ("assignmentId", "csrf_token", "hitforgeToken", FIELD)
    fields = [(k, v) for k, v in request.form.items(multi=True) if k not in skip]
    return answers_to_xml(fields)


def _posted_record() -> str | None:
    """The page's typing record as posted, for the requester side; None when absent or oversized."""
    record = request.form.get(FIELD)
    return record if record is not None and kept_field(FIELD, record) else None


@bp.post("/s/<capability>/mturk/externalSubmit")
def external_submit_with_capability(capability: str) -> Any:
    """Where an ExternalQuestion page posts when it follows ``turkSubmitTo`` (maybe from another site).

    No cookie is needed: the capability in the path must be the one made for
    the posted assignmentId and the worker who holds it, and the assignment must
    still be in progress. Anything else is refused and stores nothing.
    """
    assignment_id = request.form.get("assignmentId", "")
    assignment = market_session().get(Assignment, assignment_id) if assignment_id != NOT_AVAILABLE else None
    if assignment is None or not hmac.compare_digest(
        capability.encode(),
        submit_capability(assignment.id, assignment.worker_id, assignment.hit_id).encode(),
    ):
        abort(403)
    if assignment.status != ACCEPTED:
        message = "This assignment was already submitted or is no longer yours to work on."
        return render_template("worker/submitted.html", ok=False, message=message), 409
    worker = load_worker(market_session(), assignment.worker_id)
    assert worker is not None  # noqa: S101 - the assignment's foreign key
    return _submit(worker, assignment.id, _posted_answers(), cross_site=True, record=_posted_record())
