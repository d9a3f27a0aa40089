"""The dashboard's frame: its blueprint, who is signed in, the role checks, and signing in and out.

The pages live in modules of their own (``views``, ``workflow_pages``) and
build on this one; this one imports none of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from difflib import SequenceMatcher
from functools import wraps
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup, escape

from hits.requester.campaigns.staff import may_manage, may_see_campaign
from hits.requester.quality.evidence_marks import (
    CrowdEvidence,
    Mark,
    box_marks,
    crowd_evidence,
    picture_source,
)
from hits.requester.tables.campaigns import StaffUser
from server import MAX_ROW_ID
from server.db import requester_session
from server.requester.dashboard import staff_signin

bp = Blueprint("dashboard", __name__, url_prefix="/dashboard")


@bp.app_template_filter("as_json")
def as_json(value: Any) -> str:
    """JSON as a person reads it; the template escapes it like any other text.

    (Flask's ``tojson`` is for script contexts: it spells ``<`` as ``\\u003c``, which a reviewer
    reading a worker's evidence should not have to decode.)
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@bp.app_template_filter("marked")
def marked(text: str, spans: Any, css: str = "marked") -> Markup:
    """``text`` with the character ``spans`` ([start, end] pairs) in ``<mark>``, escaped (evidence views)."""
    text = text if isinstance(text, str) else ""
    out, at = [], 0
    pairs = (
        [s for s in spans if isinstance(s, list | tuple) and len(s) == 2] if isinstance(spans, list) else []
    )
    valid = sorted(
        (s, e) for s, e in pairs if isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(text)
    )
    for start, end in valid:
        if start < at:
            continue
        out.append(escape(text[at:start]))
        out.append(Markup('<mark class="{}">').format(css) + escape(text[start:end]) + Markup("</mark>"))
        at = end
    out.append(escape(text[at:]))
    return Markup("").join(out)


# --- evidence views of the templates: word diffs and marks drawn over pictures ----------------------

_WORD = re.compile(r"\S+\s*")


@bp.app_template_filter("word_diff")
def word_diff(before: Any, after: Any) -> Markup:
    """``after`` against ``before`` word by word, escaped: removed words in ``<del>``, added in ``<ins>``."""
    old = _WORD.findall(before if isinstance(before, str) else "")
    new = _WORD.findall(after if isinstance(after, str) else "")
    matcher = SequenceMatcher(None, [w.strip() for w in old], [w.strip() for w in new], autojunk=False)
    out: list[Markup] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(escape("".join(new[j1:j2])))
            continue
        if i2 > i1:
            space = " " if out and not str(out[-1])[-1:].isspace() else ""
            out.append(Markup("{}<del>{}</del> ").format(space, "".join(old[i1:i2]).rstrip()))
        if j2 > j1:
            out.append(Markup("<ins>{}</ins>").format("".join(new[j1:j2])))
    return Markup("").join(out)


@bp.app_template_filter("crowd_evidence")
def crowd_evidence_filter(answer: Any, expected: Any = None) -> CrowdEvidence:
    """Crowd annotation elements' marks in an answer (and gold's), to draw (``crowd_evidence``)."""
    return crowd_evidence(answer, expected)


@bp.app_template_filter("picture_source")
def picture_source_filter(payload: Any) -> tuple[str, str]:
    """The picture a layout row's cells name, as ``(kind, value)`` (``picture_source``)."""
    return picture_source(payload)


@bp.app_template_filter("box_marks")
def box_marks_filter(boxes: Any, label: str = "") -> list[Mark]:
    """Boxes of an item or an answer as marks to draw (``box_marks``)."""
    return box_marks(boxes, label)


#: No list has this many pages; a larger page number is read as the last one there could be.
MAX_PAGE = 1_000_000


def row_id(value: str | None) -> int | None:
    """A row id from a form or query value: digits naming a possible row (the bound of the app's
    ``int`` path converter), else None."""
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 10:
        return None
    number = int(value)
    return number if 0 < number <= MAX_ROW_ID else None


def page_number(value: str | None) -> int:
    """A page number from the query: 1 unless it is digits, at most ``MAX_PAGE``."""
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 7:
        return 1
    return min(max(int(value), 1), MAX_PAGE)


def current_staff() -> StaffUser | None:
    if "staff" not in g:
        g.staff = staff_signin.signed_in_user()
    staff: StaffUser | None = g.staff
    return staff


@bp.context_processor
def _inject_staff() -> dict[str, Any]:
    # The frame shows who is signed in (and a sign-out button) only when someone is.
    return {"signed_in_staff_user": current_staff()}


def staff_required(view: Callable[..., Any]) -> Callable[..., Any]:
    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_staff() is None:
            return redirect(url_for("dashboard.signin", next=request.path))
        return view(*args, **kwargs)

    return wrapped


def signed_in_staff() -> StaffUser:
    staff = current_staff()
    assert staff is not None  # staff_required ran first
    return staff


def manager_required() -> None:
    """403 for a signed-in user whose role may not manage campaigns (a QA reviewer)."""
    if not may_manage(signed_in_staff()):
        abort(403)


def campaign_or_404(campaign_id: int) -> None:
    """404 for a campaign that does not exist or that the user may not see (the same answer)."""
    if not may_see_campaign(requester_session(), signed_in_staff(), campaign_id):
        abort(404)


@bp.route("/signin", methods=["GET", "POST"])
def signin() -> Any:
    if request.method == "POST":
        username = request.form.get("username", "")
        if (refused := staff_signin.refused_while_locked(username)) is not None:
            return refused
        user = staff_signin.authenticate(username, request.form.get("password", ""))
        if user is None:
            staff_signin.count_failure(username)
            flash("Unknown user name or wrong password.", "error")
            return render_template("dashboard/signin.html"), 401
        staff_signin.begin(user)
        return redirect(url_for("dashboard.home"))
    return render_template("dashboard/signin.html")


@bp.post("/signout")
def signout() -> Any:
    staff_signin.end_everywhere(current_staff())
    return redirect(url_for("dashboard.signin"))


def svg_response(text: str) -> Response:
    """A plot drawn on the server, served as an image: no scripts; never reused stale (a page
    reloaded to watch progress must show the new figures; the server caches the drawing)."""
    response = Response(text, mimetype="image/svg+xml")
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response.headers["Cache-Control"] = "private, no-cache"
    return response
