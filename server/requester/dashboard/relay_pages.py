"""The recruiting part of a campaign's page: its relays to Prolific, and a person's answer about a held one.

A relay whose outcome is unknown (a bonus's pay call or a message that
ended in a fault) is *held*: Prolific cannot be asked about it, so a person
checks Prolific and says what happened. The buttons go through the same
code as ``hitforge recruit resolve`` (``hits.requester.quality.relay_view``),
and each answer is a line in the audit log. A relay recorded as not done is
sent again at once (its task, after the request commits), the beat's
``recruit_settle`` being the safety net.
"""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, request, url_for

from hits.requester.campaigns.recruitment import recruit_spec
from hits.requester.quality.relay_view import relay_page, resolve_for_campaign
from hits.requester.recruit.summary import study_summary
from hits.requester.tables.campaigns import Campaign
from server.db import requester_session
from server.requester.dashboard.base import (
    bp,
    campaign_or_404,
    manager_required,
    may_manage,
    page_number,
    row_id,
    signed_in_staff,
    staff_required,
)
from server.task_queue import send_after_commit

#: What each button does, said on it.
RESOLVE_WORDS = {
    "done": "Record as paid on Prolific",
    "not_done": "Record as not paid — it will be retried",
}
#: The words on a held message's buttons (a message is sent, not paid).
MESSAGE_WORDS = {
    "done": "Record as sent on Prolific",
    "not_done": "Record as not sent — it will be retried",
}


def recruiting_context(campaign_id: int) -> dict[str, Any]:
    """What the campaign page shows of its study and its relays (the page number from ``relays_page``)."""
    rs = requester_session()
    page = relay_page(rs, campaign_id, page_number(request.args.get("relays_page")))
    campaign = rs.get(Campaign, campaign_id) if page is not None else None
    recruit = recruit_spec(campaign) if campaign is not None else None
    study = study_summary(rs, campaign_id, recruit.reward, recruit.currency) if recruit is not None else None
    return {
        "relays": page,
        "study": study,
        "resolve_words": RESOLVE_WORDS,
        "message_words": MESSAGE_WORDS,
        "may_resolve": may_manage(signed_in_staff()),
    }


@bp.post("/campaigns/<int:campaign_id>/relays/resolve")
@staff_required
def resolve_relay(campaign_id: int) -> Any:
    """A person's answer about a held relay: carried out on Prolific, or not (it is sent again)."""
    campaign_or_404(campaign_id)
    manager_required()  # whether Prolific paid is the requester's call: "not paid" pays again
    relay_id = row_id(request.form.get("relay"))
    answer = request.form.get("answer", "")
    if relay_id is None or answer not in RESOLVE_WORDS:
        abort(400)
    back = url_for("dashboard.campaign_page", campaign_id=campaign_id, _anchor="relays")
    rs = requester_session()
    try:
        said = resolve_for_campaign(
            rs,
            campaign_id,
            relay_id,
            done=answer == "done",
            staff_id=signed_in_staff().id,
            note=request.form.get("note", "")[:2000],
        )
    except ValueError as exc:
        flash(f"Nothing done: {exc}.", "error")
        return redirect(back)
    if answer == "not_done":
        send_after_commit(rs, "hitforge.apply_relays", [relay_id])
    flash(said + ".", "info")
    return redirect(back)
