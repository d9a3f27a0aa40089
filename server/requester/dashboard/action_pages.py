"""A reviewer's actions on a worker beyond held work: override, bonus, block, qualifications, message.

Each form carries a request token drawn when the page was shown: posting it
twice (a double click, a reload) queues the action once. Every action goes
through ``hits.requester.quality.staff_actions`` (one outbox entry applied
through the API after the request commits, one audit row naming the
reviewer). A refused action says why and keeps what was typed.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, cast

from flask import abort, flash, redirect, render_template, request, url_for

from hits.requester.quality import staff_actions
from hits.requester.quality.staff_actions import ActionDone, ActionRefused
from hits.requester.tables.campaigns import Campaign, Submission, WorkerStats
from server.db import requester_session
from server.requester.dashboard.base import bp, campaign_or_404, row_id, signed_in_staff, staff_required
from server.requester.dashboard.review_pages import worker_page_context
from server.task_queue import send_after_commit

#: The forms of the worker page, by the name their posts carry.
FORMS = ("bonus", "block", "unblock", "qualification", "message")


def _posted_token() -> str:
    token = request.form.get("request_token", "")
    if len(token) != 32 or any(c not in "0123456789abcdef" for c in token):
        abort(400)
    return token


def _worker_in_campaign(campaign_id: int, worker_id: str) -> Campaign:
    campaign_or_404(campaign_id)
    rs = requester_session()
    campaign = rs.get(Campaign, campaign_id)
    if campaign is None or rs.get(WorkerStats, (campaign_id, worker_id)) is None:
        abort(404)
    return campaign


def _done(done: ActionDone, back: str) -> Any:
    if done.entry_ids:
        send_after_commit(requester_session(), "hitforge.apply_decisions", done.entry_ids)
        flash(done.said + ".", "info")
    else:
        flash("Nothing more done: that form was already sent, and its action is queued once.", "info")
    return redirect(back)


def _note() -> str:
    return request.form.get("note", "")[:2000]


@bp.post("/submissions/<int:submission_id>/override")
@staff_required
def override_rejection(submission_id: int) -> Any:
    """Approve a rejected assignment after all: the worker is paid and the rejection lifted."""
    rs = requester_session()
    submission = rs.get(Submission, submission_id)
    if submission is None:
        abort(404)
    campaign_or_404(submission.published_hit.campaign_id)
    back = url_for("dashboard.assignment", assignment_id=submission.assignment_id)
    try:
        done = staff_actions.override_rejection(
            rs, submission, signed_in_staff().id, _note(), request.form.get("feedback", "")
        )
    except ActionRefused as exc:
        flash(f"Nothing done: {exc}.", "error")
        return redirect(back)
    return _done(done, back)


@bp.post("/workers/<int:campaign_id>/<worker_id>/act")
@staff_required
def act_on_worker(campaign_id: int, worker_id: str) -> Any:
    """One of the worker page's action forms (``form``: bonus, block, unblock, qualification, message)."""
    campaign = _worker_in_campaign(campaign_id, worker_id)
    form = request.form.get("form", "")
    if form not in FORMS:
        abort(400)
    token = _posted_token()
    rs = requester_session()
    staff_id = signed_in_staff().id
    back = url_for("dashboard.worker", campaign_id=campaign_id, worker_id=worker_id)
    try:
        if form == "bonus":
            done = _bonus(campaign, worker_id, staff_id, token)
        elif form == "block":
            reason = request.form.get("reason", "")
            done = staff_actions.block(rs, campaign, worker_id, reason, staff_id, _note(), token)
        elif form == "unblock":
            done = staff_actions.unblock(rs, campaign, worker_id, staff_id, _note(), token)
        elif form == "qualification":
            done = _qualification(campaign, worker_id, staff_id, token)
        else:
            done = staff_actions.message(
                rs,
                campaign,
                worker_id,
                request.form.get("subject", ""),
                request.form.get("message", ""),
                staff_id,
                _note(),
                token,
            )
    except ActionRefused as exc:
        # The page again, with what was typed and the reason nothing was done.
        rs.rollback()
        flash(f"Nothing done: {exc}.", "error")
        return worker_page_with(campaign_id, worker_id, form, 422)
    return _done(done, back)


def _bonus(campaign: Campaign, worker_id: str, staff_id: int, token: str) -> ActionDone:
    rs = requester_session()
    try:
        amount = Decimal(request.form.get("amount", "").strip().lstrip("$"))
    except InvalidOperation:
        raise ActionRefused("the amount is a sum in dollars, such as 0.50") from None
    if not amount.is_finite() or amount != amount.quantize(Decimal("0.01")):
        raise ActionRefused("the amount is a sum in dollars and cents, such as 0.50")
    submission_id = row_id(request.form.get("assignment"))
    submission = rs.get(Submission, submission_id) if submission_id is not None else None
    if (
        submission is None
        or submission.worker_id != worker_id
        or submission.published_hit.campaign_id != campaign.id
    ):
        raise ActionRefused("choose one of this worker's assignments in this campaign for the bonus")
    return staff_actions.send_bonus(
        rs, campaign, submission, amount, request.form.get("reason", ""), staff_id, _note(), token
    )


def _qualification(campaign: Campaign, worker_id: str, staff_id: int, token: str) -> ActionDone:
    change = request.form.get("change", "")
    if change not in ("grant", "revoke", "restore"):
        raise ActionRefused("choose to grant, revoke or restore the qualification")
    raw = request.form.get("value", "").strip()
    value = int(raw) if raw.lstrip("-").isdigit() and raw.isascii() and len(raw) < 12 else None
    if change == "grant" and value is None:
        raise ActionRefused("a granted qualification needs a whole-number score, such as 1 or 85")
    return staff_actions.change_qualification(
        requester_session(),
        campaign,
        worker_id,
        cast(staff_actions.QualificationChange, change),
        request.form.get("qualification_type_id", ""),
        value,
        staff_id,
        _note(),
        token,
    )


def worker_page_with(campaign_id: int, worker_id: str, open_form: str, status: int) -> Any:
    """The worker page, with the form ``open_form`` open and filled with what was posted."""
    context = {**worker_page_context(campaign_id, worker_id), "open_form": open_form, "posted": request.form}
    return render_template("dashboard/worker.html", **context), status
