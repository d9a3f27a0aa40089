"""HTMLQuestion HITs: the requester's HTML in a sandboxed, cookie-less frame.

The frame is ``sandbox="allow-scripts allow-forms"`` without ``allow-same-origin``,
so the requester's scripts run in an opaque origin: they cannot read the site's
cookies or pages, and the browser sends no cookies when the frame posts its
form. The worker's assignment is therefore identified by a token signed with
the app's secret, bound to one worker, HIT and assignment, which the frame URL
carries and our stand-in for MTurk's ``externalHIT_v1.js`` copies into the form.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from flask import abort, current_app, request, url_for
from itsdangerous import BadSignature, URLSafeTimedSerializer
from markupsafe import escape
from werkzeug.wrappers import Response

from hits.market import decisions
from hits.market.models import HIT, Worker
from hits.market.questions import parse_question
from server.cdn import CROWD_SCRIPT, MTURK_SCRIPT, rewrite_page
from server.db import market_session, runtime
from server.market.worker_site.base import NOT_AVAILABLE, bp, load_worker, previewable_hit

SALT = "hitforge.worker-site.html-question"
# Longer than any assignment may last; the assignment's own deadline is checked on submit.
TOKEN_MAX_AGE = 366 * 86_400


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(str(current_app.secret_key), salt=SALT)


def sign_token(worker_id: str, hit_id: str, assignment_id: str) -> str:
    """A token naming the worker allowed to view (and, if accepted, submit) this HIT."""
    return _serializer().dumps([worker_id, hit_id, assignment_id])


def _read_token(token: str) -> tuple[str, str, str] | None:
    try:
        data = _serializer().loads(token, max_age=TOKEN_MAX_AGE)
    except BadSignature:
        return None
    if not (isinstance(data, list) and len(data) == 3 and all(isinstance(x, str) for x in data)):
        return None
    return data[0], data[1], data[2]


def verify_submit_token(token: str, assignment_id: str) -> str | None:
    """The worker id a valid token grants submitting ``assignment_id``, else None."""
    data = _read_token(token)
    if data is None or assignment_id == NOT_AVAILABLE or data[2] != assignment_id:
        return None
    return data[0]


def html_frame_url(hit: HIT, assignment_id: str, worker: Worker) -> str:
    """The sandboxed frame's URL, with MTurk's parameters and the signed token."""
    params = {"assignmentId": assignment_id, "hitId": hit.id}
    if assignment_id != NOT_AVAILABLE:
        params["workerId"] = worker.id
        params["turkSubmitTo"] = runtime().settings.public_url
    params["hitforgeToken"] = sign_token(worker.id, hit.id, assignment_id)
    return url_for("worker_site.html_question", hit_id=hit.id) + "?" + urlencode(params)


def frame_csp() -> str:
    """The policy of the requester's HTML: sandboxed even if opened outside the frame.

    Requester pages commonly use inline scripts and libraries from CDNs, so those
    stay allowed; what the sandbox and this policy take away is the site's origin,
    top-level navigation, plugins, and posting answers anywhere but this site.
    """
    own = request.host_url.rstrip("/")
    return (
        "sandbox allow-scripts allow-forms; default-src 'none'; "
        f"script-src 'self' {own} 'unsafe-inline' https:; style-src 'self' {own} 'unsafe-inline' https:; "
        f"img-src 'self' {own} data: https:; media-src 'self' {own} https:; "
        f"font-src 'self' {own} https: data:; "
        f"connect-src 'self' {own} https:; form-action 'self' {own}; frame-ancestors 'self'; "
        "base-uri 'none'; object-src 'none'"
    )


def authenticity_tag() -> str:
    """The typing-record script (``hits/wire/authenticity.py``), added after the requester's HTML.

    Appended, not inserted: the page's own markup, doctype and script order stay
    exactly as written (a parser puts a script after ``</html>`` into the body).
    """
    src = url_for("static", filename="authenticity.js", _external=True)
    return f'\n<script src="{escape(src)}"></script>\n'


@bp.get("/hits/<hit_id>/html")
def html_question(hit_id: str) -> Any:
    """Serve an HTMLQuestion's HTML to the worker the token names (no cookie needed)."""
    data = _read_token(request.args.get("hitforgeToken", ""))
    assignment_id = request.args.get("assignmentId", "")
    if data is None or data[1] != hit_id or data[2] != assignment_id:
        abort(403)
    hit: HIT | None
    if assignment_id != NOT_AVAILABLE:
        # The assignment with its HIT, in one query (the frame of every task loads here).
        assignment = decisions.assignment_with_hit(market_session(), assignment_id)
        if assignment is None or assignment.worker_id != data[0] or assignment.hit_id != hit_id:
            abort(404)
        hit = assignment.hit
    else:
        # A preview's token lives long: whether its worker may still preview is asked anew.
        worker = load_worker(market_session(), data[0])
        hit = previewable_hit(worker, hit_id) if worker is not None else None
    if hit is None:
        abort(404)
    question = parse_question(hit.question)
    if question.kind != "HTMLQuestion" or question.html is None:
        abort(404)
    local_script = url_for("static", filename="mturk/externalHIT_v1.js", _external=True)
    html = MTURK_SCRIPT.sub(local_script, question.html)
    crowd_script = url_for("static", filename="crowd/crowd-html-elements.js", _external=True)
    html = CROWD_SCRIPT.sub(crowd_script, html)
    html = rewrite_page(html)  # jQuery, Bootstrap, Font Awesome... from public CDNs (server/cdn)
    html += authenticity_tag()
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = frame_csp()
    response.headers["Cache-Control"] = "no-store"
    return response
