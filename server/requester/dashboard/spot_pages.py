"""Spot checks on the dashboard: the list of approved work drawn for a person, and the verdicts.

The list (``/dashboard/spot-checks``) holds the checks of the campaigns the
user may see; each row opens the assignment's evidence page, where a check
still waiting shows a form (the ``spot_check_for`` template global) to agree
or disagree with the approval. The verdict goes through
``hits.requester.quality.spot_checks`` (once per check, an audit row naming
the reviewer). A check outside the user's campaigns is a 404.
"""

from __future__ import annotations

from typing import Any, cast

from flask import abort, flash, redirect, render_template, request, url_for

from hits.requester.campaigns.staff import may_see_campaign, scoped_campaign_ids
from hits.requester.quality import spot_checks
from hits.requester.tables.quality import SpotCheck
from server.db import requester_session
from server.requester.dashboard.base import (
    bp,
    campaign_or_404,
    current_staff,
    page_number,
    row_id,
    signed_in_staff,
    staff_required,
)

#: The list's "state" filter: its words, and "all" for both.
STATE_CHOICES: dict[str, str] = {str(k): v for k, v in spot_checks.STATES.items()} | {
    "all": "waiting or checked"
}


@bp.get("/spot-checks")
@staff_required
def spot_check_list() -> Any:
    """Approved work drawn for a spot check in the user's campaigns: waiting first, oldest first."""
    reason = request.args.get("reason") or None
    state = request.args.get("state") or "waiting"
    if state not in STATE_CHOICES:
        state = "waiting"
    page = spot_checks.spot_check_list(
        requester_session(),
        scoped_campaign_ids(signed_in_staff()),
        campaign_id=row_id(request.args.get("campaign")),
        reason=cast(spot_checks.DrawReason, reason) if reason in spot_checks.REASONS else None,
        state=None if state == "all" else cast(spot_checks.State, state),
        page=page_number(request.args.get("page")),
    )
    return render_template(
        "dashboard/spot_checks.html",
        page=page,
        reasons=spot_checks.REASONS,
        states=STATE_CHOICES,
        state=state,
        args=request.args,
    )


@bp.app_template_global("spot_check_for")
def spot_check_for(assignment_id: str) -> spot_checks.AssignmentSpotCheck | None:
    """The assignment's spot check for its evidence page, if it was drawn and the user may see it."""
    staff = current_staff()
    found = spot_checks.spot_check_of(requester_session(), assignment_id)
    if (
        found is None
        or staff is None
        or not may_see_campaign(requester_session(), staff, found.check.campaign_id)
    ):
        return None
    return found


def _posted_digest() -> str | None:
    """The evidence digest the page's form carried (64 hex digits), or None."""
    value = request.form.get("evidence_sha256", "")
    return value if len(value) == 64 and all(c in "0123456789abcdef" for c in value) else None


@bp.post("/spot-checks/<int:check_id>")
@staff_required
def spot_check_verdict(check_id: int) -> Any:
    """Agree or disagree with an approval the model made; the approval stands either way."""
    rs = requester_session()
    check = rs.get(SpotCheck, check_id)
    if check is None:
        abort(404)
    campaign_or_404(check.campaign_id)
    verdict = request.form.get("verdict", "")
    if verdict not in spot_checks.AUDIT_ACTIONS:
        abort(400)
    back = url_for("dashboard.assignment", assignment_id=check.assignment_id)
    try:
        done = spot_checks.record_verdict(
            rs,
            check_id,
            cast(spot_checks.Verdict, verdict),
            signed_in_staff().id,
            request.form.get("note", "")[:2000],
            evidence_sha256=_posted_digest(),
        )
    except spot_checks.AlreadyChecked as exc:
        flash(f"Nothing recorded: {exc}.", "error")
        return redirect(back, 303)
    said = f"Spot check recorded: you {verdict}d with the approval of {check.assignment_id}"
    said += f"; worker {check.worker_id} has {done.summary.disagreed} disagreement"
    said += f"{'s' if done.summary.disagreed != 1 else ''} in {done.summary.checked} checked"
    if done.flagged:
        said += ", and is now flagged for a reviewer (the review queue lists them)"
    flash(said + ".", "info")
    return redirect(back, 303)
