"""The requester side's HIT pages: the ExternalQuestion the marketplace frames.

A page shows a published HIT's items (gold among them, indistinguishable, and
the same for every assignment of the HIT), validates the worker's answers on
the server, stores them once per assignment, and hands them to
``turkSubmitTo/mturk/externalSubmit``. An assignment's page is served, and its
answers taken, only with the capability the marketplace framed it with
(``access.py``).

Showing a page and its pictures only reads, so those GETs take no write lock
(on SQLite the database's one writer slot, which every accept and submit
queues for). The writes an assignment's first opening makes, recording the
gold it is shown and (``sxs``) the sides its slots were drawn, are one short
unit of work of their own, committed before the page is sent.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, abort, render_template, request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from hits.db import session_scope
from hits.requester.pages.gold import choose_gold, exposures_for, page_slots, slots_with_gold
from hits.requester.pages.urls import PAGE_PARAM, page_by_token
from hits.requester.tables.campaigns import Campaign, PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates import get_template
from hits.requester.templates.arrangements import arrangements_for, unscrambled_answers
from hits.requester.templates.base import TaskTemplate
from hits.requester.workflows.exposures import record_exposures, unrecorded_exposures
from hits.wire.authenticity import FIELD, parse_summary
from server.db import is_read_only_request, read_only_request, requester_session, runtime
from server.requester.hit_pages import heatmap_views
from server.requester.hit_pages.access import (
    NOT_AVAILABLE,
    AccessRefused,
    PageAccess,
    hit_created_as,
    page_access,
)
from server.requester.hit_pages.guidance import guidance_context, serve_guidance_picture, served_picture_url
from server.requester.hit_pages.media import is_local, media_url, serve_media
from server.requester.hit_pages.practice import PREVIEW_PARAM, page_params, practice_url, render_practice

bp = Blueprint("hit_pages", __name__, url_prefix="/tasks")

#: The GETs that only read (a page's first opening writes apart, see ``_payloads``).
READ_ONLY_PAGES = frozenset({"hit_pages.show", "hit_pages.media", "hit_pages.guidance_picture"})
#: Pages that only read whatever their method: a practice answer is judged, never stored.
READ_ONLY_ALWAYS = frozenset({"hit_pages.practice"})


@bp.before_request
def _reads_only() -> None:
    if (request.method in ("GET", "HEAD") and request.endpoint in READ_ONLY_PAGES) or (
        request.endpoint in READ_ONLY_ALWAYS
    ):
        read_only_request()


def _published(hit_id: str, page_token: str = "") -> tuple[PublishedHIT, Campaign]:
    """The HIT row a page shows: by its recorded marketplace id, or else by its page token.

    A HIT is on the marketplace a moment before its id is recorded; its URL's
    token finds the row then, but only for the very HIT made for it.
    """
    session = requester_session()
    published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id))
    if published is None:
        found = page_by_token(session, page_token)
        if (
            found is None
            or found.published.mturk_hit_id is not None  # recorded, and as another HIT
            or not hit_created_as(hit_id, found.published.unique_request_token, found.access_key_id)
        ):
            abort(404)
        published = found.published
    campaign = session.get(Campaign, published.campaign_id)
    assert campaign is not None
    return published, campaign


def _payloads(published: PublishedHIT, access: PageAccess) -> list[dict[str, Any]]:
    """Each slot's payload: the HIT's own, gold included; an assignment's first opening records its gold."""
    session = requester_session()
    if access.assignment_id is None:
        return [slot.payload for slot in page_slots(session, published, None)]
    if not is_read_only_request():
        choose_gold(session, published, access.assignment_id, access.worker_id)
        return [slot.payload for slot in page_slots(session, published, access.assignment_id)]
    assignment_id = access.assignment_id
    chosen = exposures_for(session, published.campaign_id, [assignment_id]).get(assignment_id, {})
    if len(chosen) != sum(1 for slot in published.slots if slot.gold_item_id is not None):
        # The first opening (or one from before gold was fixed per HIT that lacks a row):
        # record it in a unit of work of its own, committed before the page is sent.
        with session_scope(runtime().requester_sessions) as writer:
            mine = writer.get(PublishedHIT, published.id)
            assert mine is not None  # noqa: S101 - read above, and published HITs are never deleted
            chosen = choose_gold(writer, mine, assignment_id, access.worker_id)
    return [slot.payload for slot in slots_with_gold(published, chosen)]


def _arrangements(
    template: TaskTemplate, campaign: Campaign, access: PageAccess, payloads: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each slot's arrangement for this assignment (an ``arranged`` template): drawn once, then read.

    A read-only GET reads what was recorded; the first opening, which finds
    nothing, draws and records the sides in a short unit of work of its own
    (``arrangements_for`` settles two first openings racing), committed before
    the page is sent so a submit always finds them.
    """
    session = requester_session()
    if access.assignment_id is None or not is_read_only_request():
        return arrangements_for(session, template, campaign.id, access.assignment_id, payloads)
    recorded = session.execute(
        select(SlotArrangement.position, SlotArrangement.arrangement).where(
            SlotArrangement.campaign_id == campaign.id, SlotArrangement.assignment_id == access.assignment_id
        )
    ).all()
    known = {position: dict(arrangement) for position, arrangement in recorded}
    if len(known) >= len(payloads):
        return [known[position] for position in range(len(payloads))]
    with session_scope(runtime().requester_sessions) as writer:
        return arrangements_for(writer, template, campaign.id, access.assignment_id, payloads)


def _slot_views(
    payloads: list[dict[str, Any]], campaign: Campaign, published: PublishedHIT, access: PageAccess, seed: str
) -> list[dict[str, Any]]:
    """What the page may show of each slot: the template's view of it, never whether it is gold."""
    template = get_template(campaign.template)
    arranged = _arrangements(template, campaign, access, payloads) if template.arranged else None
    views = []
    for position, source in enumerate(payloads):
        if arranged is not None:  # kept on the server, derivable from nothing the worker holds
            payload = template.arranged_view(source, arranged[position])
        else:
            payload = template.slot_view(source, f"{seed}:{position}")
        image = str(payload.get("image", ""))
        local = is_local(image)
        payload["image_url"] = media_url(published.id, position, access.assignment_id) if local else image
        if local:
            del payload["image"]  # the requester's file name could tell gold apart
        for candidate in payload.get("candidates", []):
            # Candidate pictures (``rank``): opaque URLs bound to the item's candidate index,
            # which the page never sees (it would tell the candidates apart across pages).
            if isinstance(candidate, dict) and "source" in candidate:
                part = int(candidate.pop("source")) + 1
                candidate["image_url"] = media_url(published.id, position, access.assignment_id, part)
                candidate.pop("image", None)
        views.append(payload)
    return views


def _render(
    published: PublishedHIT,
    campaign: Campaign,
    access: PageAccess,
    values: dict[str, str],
    errors: dict[str, str],
    page_token: str,
    status: int = 200,
) -> Any:
    assignment_id = access.assignment_id or NOT_AVAILABLE
    template = get_template(campaign.template)
    context = {
        # One assignment sees one arrangement of each slot (also when shown again with errors).
        "slots": _slot_views(
            _payloads(published, access), campaign, published, access, f"{assignment_id}:{access.hit_id}"
        ),
        "values": values,
        "errors": errors,
        "preview": access.preview,
        "assignment_id": assignment_id,
        "hit_id": access.hit_id,
        "worker_id": access.worker_id,
        "turk_submit_to": access.turk_submit_to,
        "page_token": page_token,
        **template.page_context(),
        **template.page_options(campaign.spec.get("template_options", {})),
        # After the template's values: reworded scale labels replace its own.
        **guidance_context(
            campaign.spec,
            template,
            served_picture_url(campaign),
            practice_url(campaign, page_params(access, page_token, request.args.get(PREVIEW_PARAM, ""))),
        ),
        "page_title": campaign.spec.get("title", "Task"),
    }
    return render_template(f"{campaign.template}/page.html", **context), status


def _checked(params: dict[str, str]) -> PageAccess:
    try:
        return page_access(params)
    except AccessRefused as refused:
        abort(403, str(refused))


@bp.get("/hit")
def show() -> Any:
    """The HIT's page: a preview for anyone, an assignment's only for the worker it was framed for."""
    access = _checked(request.args.to_dict())
    page_token = request.args.get(PAGE_PARAM, "")
    published, campaign = _published(access.hit_id, page_token)
    if access.assignment_id is not None:
        _record_exposure(published, access.worker_id)
    return _render(published, campaign, access, {}, {}, page_token)


def _record_exposure(published: PublishedHIT, worker_id: str) -> None:
    """A workflow's picture shown to a worker is recorded before the page goes out (``exposures``).

    Read first, so an assignment's page opened again writes nothing; the first
    opening writes in a short unit of work of its own, committed before the
    page is sent, as its gold record is.
    """
    unrecorded = unrecorded_exposures(requester_session(), published, worker_id)
    if unrecorded is not None:
        with session_scope(runtime().requester_sessions) as writer:
            record_exposures(writer, unrecorded, worker_id)


@bp.post("/submit")
def submit() -> Any:
    """Check and store an assignment's answers, then relay them to the marketplace's ``turkSubmitTo``."""
    form = request.form
    access = _checked({k: form.get(k, "") for k in ("assignmentId", "hitId", "workerId", "turkSubmitTo")})
    if access.assignment_id is None:
        abort(400, "Accept the HIT before submitting.")
    page_token = form.get(PAGE_PARAM, "")
    published, campaign = _published(access.hit_id, page_token)
    template = get_template(campaign.template)
    parsed = template.parse_answers(form, len(published.slots))
    parsed = template.check_against_items(parsed, _payloads(published, access))
    parsed = template.check_submission(requester_session(), campaign.id, access.assignment_id, parsed)
    if not parsed.ok:
        # Re-render with everything the worker entered: nothing is lost.
        return _render(published, campaign, access, form.to_dict(), parsed.errors, page_token, status=422)
    session = requester_session()
    # Stored in the items' own terms; the marketplace gets them as the worker gave them (page terms).
    stored = unscrambled_answers(session, template, published, access.assignment_id, parsed.answers)
    existing = session.scalar(select(Submission).where(Submission.assignment_id == access.assignment_id))
    if existing is None:
        try:
            with session.begin_nested():
                session.add(
                    Submission(
                        assignment_id=access.assignment_id,
                        published_hit_id=published.id,
                        worker_id=access.worker_id,
                        answers={"answers": stored},
                        authenticity=parse_summary(form.get(FIELD)),
                        source="page",
                    )
                )
        except IntegrityError:
            pass  # a concurrent double-submit stored it first; the first answer stands
    return render_template(
        "handoff.html",
        # Checked above: the marketplace's own turkSubmitTo for this assignment, nowhere else.
        action=access.turk_submit_to + "/mturk/externalSubmit",
        assignment_id=access.assignment_id,
        fields=[*template.answer_fields(parsed.answers), *_typing_record(form.get(FIELD))],
    )


def _typing_record(posted: str | None) -> list[tuple[str, str]]:
    """The page's typing record, relayed with the answers when readable (the sync reads it back)."""
    return [(FIELD, posted)] if posted is not None and parse_summary(posted) is not None else []


@bp.route("/practice/<int:number>", methods=["GET", "POST"])
def practice(number: int) -> Any:
    """Practice item ``number`` of the HIT's campaign; posted, its answer judged and explained.

    The page parameters are checked as the HIT page's are (403); the campaign is the HIT's (404 for
    an index past its training items). Nothing is stored either way.
    """
    given = request.form if request.method == "POST" else request.args
    keys = ("assignmentId", "hitId", "workerId", "turkSubmitTo", PREVIEW_PARAM)
    access = _checked({k: given.get(k, "") for k in keys})
    page_token = given.get(PAGE_PARAM, "")
    _, campaign = _published(access.hit_id, page_token)
    params = page_params(access, page_token, given.get(PREVIEW_PARAM, ""))
    form = request.form.to_dict() if request.method == "POST" else None
    return render_practice(campaign, access, params, number, form)


@bp.get("/media/<int:published_id>/<int:position>/<tag>")
def media(published_id: int, position: int, tag: str) -> Any:
    """A picture of a HIT page, by the opaque URL the page gave it (``media.py``)."""
    return serve_media(published_id, position, tag)


@bp.get("/guidance/<int:campaign_id>/<int:index>/<tag>")
def guidance_picture(campaign_id: int, index: int, tag: str) -> Any:
    """A picture of the campaign's guidance, by the opaque URL the page gave it (``guidance.py``)."""
    return serve_guidance_picture(campaign_id, index, tag)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
    heatmap_views.init_app(app)
