"""The requester side's HIT pages: the ExternalQuestion the marketplace frames.

A page shows a published HIT's items (gold among them, indistinguishable),
validates the worker's answers on the server, stores them once per
assignment, and hands them to ``turkSubmitTo/mturk/externalSubmit``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, abort, render_template, request, send_from_directory, url_for
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from hits.campaigns.gold import choose_gold, page_slots
from hits.campaigns.models import Campaign, PublishedHIT, Submission
from hits.templates import get_template
from server.db import requester_session

bp = Blueprint("hit_pages", __name__, url_prefix="/tasks")
NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE"


def _published(hit_id: str) -> tuple[PublishedHIT, Campaign]:
    session = requester_session()
    published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
    if published is None:
        abort(404)
    campaign = session.get(Campaign, published.campaign_id)
    assert campaign is not None
    return published, campaign


def _payloads(published: PublishedHIT, params: dict[str, str]) -> list[dict[str, Any]]:
    """Each slot's payload for this assignment; gold slots get this worker's gold items."""
    session = requester_session()
    assignment_id, worker_id = params.get("assignmentId", NOT_AVAILABLE), params.get("workerId", "")
    if assignment_id != NOT_AVAILABLE and worker_id:
        choose_gold(session, published, assignment_id, worker_id)
        return [slot.payload for slot in page_slots(session, published, assignment_id)]
    return [slot.payload for slot in page_slots(session, published, None)]


def _slot_views(payloads: list[dict[str, Any]], campaign: Campaign, seed: str) -> list[dict[str, Any]]:
    """What the page may show of each slot: the template's view of it, never whether it is gold."""
    template = get_template(campaign.template)
    views = []
    for position, source in enumerate(payloads):
        payload = template.slot_view(source, f"{seed}:{position}")
        image = payload.get("image", "")
        if image and not image.startswith(("http://", "https://", "/")):
            payload["image_url"] = url_for("hit_pages.media", campaign_id=campaign.id, filename=image)
        else:
            payload["image_url"] = image
        views.append(payload)
    return views


def _render(
    published: PublishedHIT,
    campaign: Campaign,
    params: dict[str, str],
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
) -> Any:
    assignment_id = params.get("assignmentId", NOT_AVAILABLE)
    context = {
        # One assignment sees one arrangement of each slot (also when shown again with errors).
        "slots": _slot_views(
            _payloads(published, params), campaign, f"{assignment_id}:{params.get('hitId', '')}"
        ),
        "values": values,
        "errors": errors,
        "preview": assignment_id == NOT_AVAILABLE or not params.get("workerId"),
        "assignment_id": assignment_id,
        "hit_id": params.get("hitId", ""),
        "worker_id": params.get("workerId", ""),
        "turk_submit_to": params.get("turkSubmitTo", ""),
        **get_template(campaign.template).page_context(),
        "page_title": campaign.spec.get("title", "Task"),
    }
    return render_template(f"{campaign.template}/page.html", **context), status


@bp.get("/hit")
def show() -> Any:
    params = request.args.to_dict()
    published, campaign = _published(params.get("hitId", ""))
    return _render(published, campaign, params, {}, {})


@bp.post("/submit")
def submit() -> Any:
    form = request.form
    params = {k: form.get(k, "") for k in ("assignmentId", "hitId", "workerId", "turkSubmitTo")}
    if params["assignmentId"] in ("", NOT_AVAILABLE) or not params["workerId"]:
        abort(400, "Accept the HIT before submitting.")
    published, campaign = _published(params["hitId"])
    template = get_template(campaign.template)
    parsed = template.parse_answers(form, len(published.slots))
    parsed = template.check_against_items(parsed, _payloads(published, params))
    if not parsed.ok:
        # Re-render with everything the worker entered: nothing is lost.
        return _render(published, campaign, params, form.to_dict(), parsed.errors, status=422)
    session = requester_session()
    existing = session.scalar(select(Submission).where(Submission.assignment_id == params["assignmentId"]))
    if existing is None:
        try:
            with session.begin_nested():
                session.add(
                    Submission(
                        assignment_id=params["assignmentId"],
                        published_hit_id=published.id,
                        worker_id=params["workerId"],
                        answers={"answers": parsed.answers},
                        source="page",
                    )
                )
        except IntegrityError:
            pass  # a concurrent double-submit stored it first; the first answer stands
    target = params["turkSubmitTo"].rstrip("/") + "/mturk/externalSubmit"
    return render_template(
        "handoff.html",
        action=target,
        assignment_id=params["assignmentId"],
        fields=template.answer_fields(parsed.answers),
    )


@bp.get("/media/<int:campaign_id>/<path:filename>")
def media(campaign_id: int, filename: str) -> Any:
    campaign = requester_session().get(Campaign, campaign_id)
    if campaign is None or not campaign.spec.get("media_path"):
        abort(404)
    return send_from_directory(Path(campaign.spec["media_path"]), filename, max_age=3600)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
