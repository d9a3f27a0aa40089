"""Live heatmaps for the heatmap template's page: ``POST /tasks/heatmaps/make``.

The page asks for the heatmaps of one slot, either for a report sentence
(round one) or for the worker's own prompt (round two). The request carries
the assignment's page parameters, checked like a submit (``access.py``): only
the worker the marketplace framed the page for gets heatmaps, and never a
preview. The capability in those parameters is what authorises the call, so
no session cookie (and no CSRF token bound to one) is needed.

Abuse is bounded: a prompt has a length cap; each assignment's slot may make
``live_requests`` requests, not closer together than ``min_interval``; the
first report sentence revealed is the only one that can be (the worker
chooses before seeing heatmaps), and no heatmap is made for the worker's own
prompt before that choice, nor for a prompt that is a report sentence; every
model is asked at once and the answer comes within the campaign's
``time_limit``, the database untouched meanwhile.
Each model's outcome is logged (``hits.requester.heatmaps.log``). The answer names
models by this assignment's opaque tokens only, and one message covers every
kind of failure, so nothing in it tells models apart.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, jsonify, request
from PIL import Image
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, make_transient

from hits.db import session_scope, utcnow
from hits.requester.heatmaps.arrays import load_precomputed, overlay_png, overlay_size
from hits.requester.heatmaps.log import (
    ROUNDS,
    last_request_at,
    latest_shown,
    requests_made,
    revealed_sentence,
)
from hits.requester.heatmaps.providers import ImageSource, Job, Outcome, compute_all, provider_for
from hits.requester.pages.gold import choose_gold, page_slots
from hits.requester.tables.campaigns import Campaign, PublishedHIT
from hits.requester.tables.heatmaps import HeatmapRequest
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates import get_template
from hits.requester.templates.arrangements import arrangements_for
from hits.requester.templates.heatmap.checks import normal_text
from hits.requester.templates.heatmap.options import HeatmapOptions, parse_options
from hits.shared_breakers import breakers_for
from server.db import read_only_request, requester_session, runtime
from server.requester.hit_pages.access import AccessRefused, PageAccess, page_access
from server.requester.hit_pages.media import is_local

bp = Blueprint("heatmap_pages", __name__, url_prefix="/tasks/heatmaps")

#: What the worker reads for any model whose heatmap did not come (the same for every cause).
NO_HEATMAP = (
    "No heatmap came from this model for this text. This has been recorded. "
    "Mark it as missing and rate the others."
)


#: The answer to a request that comes too soon after another of its slot (or races one).
WAIT = "Heatmaps were just asked for; wait a moment and try again."


class Refused(Exception):
    """A request the page cannot have; ``status`` and a message the worker can act on."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


def _refusal(refused: Refused) -> Any:
    return jsonify({"error": str(refused), **refused.extra}), refused.status


def _clean_prompt(raw: str, options: HeatmapOptions) -> str:
    prompt = " ".join(raw.split())
    if not prompt:
        raise Refused(400, "Write a sentence about the image first.")
    if len(prompt) > options.max_prompt:
        raise Refused(
            400, f"Your sentence is {len(prompt)} characters long; keep it to {options.max_prompt}."
        )
    if any(not ch.isprintable() for ch in prompt):
        raise Refused(400, "Your sentence holds characters that cannot be shown; type it again.")
    return prompt


def _own_prompt(
    session: Session,
    raw: str,
    options: HeatmapOptions,
    payload: dict[str, Any],
    campaign_id: int,
    access: PageAccess,
    position: int,
) -> str:
    """A round-two prompt, tidied; refused before round one's choice, or when it is a report sentence.

    Round one's sentence is chosen before any heatmap is seen: a live heatmap for a prompt of
    the worker's own, before that choice, or for a report sentence typed out, would show one.
    """
    prompt = _clean_prompt(raw, options)
    assert access.assignment_id is not None  # noqa: S101 - _access refuses previews
    if revealed_sentence(session, campaign_id, access.assignment_id, position) is None:
        raise Refused(
            409, "Choose a report sentence and show its heatmaps first; then write a sentence of your own."
        )
    mine = normal_text(prompt)
    for k, sentence in enumerate(payload["sentences"]):
        if normal_text(sentence["text"]) == mine:
            raise Refused(
                400, f"That is report sentence {k + 1}; write a sentence of your own about the image."
            )
    return prompt


def _job(
    model: str, options: HeatmapOptions, image: ImageSource, text: str, precomputed: Path | None
) -> Job | Callable[[], Any] | None:
    """What makes one model's heatmap: its precomputed file, else its live provider (None: neither)."""
    if precomputed is not None:
        return lambda: load_precomputed(precomputed)
    spec = options.models.get(model)
    if spec is None or spec.provider == "none":
        return None
    allow_private = runtime().settings.heatmap_allow_private

    def live() -> Any:
        # Made in the provider's thread, within the time limit: loading a model may be slow.
        # Its sockets wait a little longer than the worker does: the time limit decides, and the
        # thread is freed soon after.
        provider = provider_for(model, spec, allow_private=allow_private, timeout=options.time_limit + 1)
        assert provider is not None
        return provider.heatmap(image, text)

    return Job(spec.lane(), live)


#: How often a request looks again after another request of its slot took the same turn.
TURN_ATTEMPTS = 3


def _take_turn(session: Session, options: HeatmapOptions, rows: list[HeatmapRequest]) -> str:
    """Log ``rows`` (one request's, pending) under the slot's next turn, within its limits; the call id.

    The limits are read, then the turn is claimed by inserting it: the unique
    turn per slot and model makes the claim atomic on every database, so of
    requests racing for one turn exactly one gets it and the others look
    again (finding the limits reached, or the next turn free).
    """
    first = rows[0]
    slot = (first.campaign_id, first.assignment_id, first.position)
    for _ in range(TURN_ATTEMPTS):
        made = requests_made(session, *slot)
        if made >= options.live_requests:
            raise Refused(
                429,
                f"This image has had its {options.live_requests} requests for heatmaps; rate what you have.",
            )
        last = last_request_at(session, *slot)
        if last is not None and utcnow() - last < timedelta(seconds=options.min_interval):
            raise Refused(429, WAIT)
        call_id = secrets.token_hex(8)
        try:
            with session.begin_nested():
                for row in rows:
                    row.call_id, row.number = call_id, made
                    session.add(row)
        except IntegrityError:
            for row in rows:
                make_transient(row)  # rolled back with the savepoint: added again on the next turn
            continue
        return call_id
    raise Refused(429, WAIT)


def _access(form: Any) -> PageAccess:
    """The assignment the request's page parameters are the capability of (never a preview's)."""
    try:
        access = page_access(
            {k: form.get(k, "") for k in ("assignmentId", "hitId", "workerId", "turkSubmitTo")}
        )
    except AccessRefused as refused:
        raise Refused(403, str(refused)) from refused
    if access.assignment_id is None:
        raise Refused(400, "Accept the HIT to see heatmaps.")
    return access


def _slot_of(session: Session, form: Any, access: PageAccess) -> tuple[int, PublishedHIT, Campaign]:
    """The slot the request names (its position), the HIT and its heatmap campaign."""
    raw_position = form.get("position", "")
    if not raw_position.isascii() or not raw_position.isdigit() or len(raw_position) > 3:
        raise Refused(400, "Say which image the heatmaps are for.")
    position = int(raw_position)
    published = session.scalar(select(PublishedHIT).where(PublishedHIT.mturk_hit_id == access.hit_id))
    campaign = session.get(Campaign, published.campaign_id) if published else None
    if published is None or campaign is None or campaign.template != "heatmap":
        raise Refused(404, "This HIT has no heatmaps.")
    if position >= len(published.slots):
        raise Refused(400, "Say which image the heatmaps are for.")
    return position, published, campaign


def _entry(token: str, png: bytes | None) -> dict[str, Any]:
    """One model's heatmap as the page gets it: its token and overlay, or the one message for none."""
    if png is None:
        return {"token": token, "ok": False, "message": NO_HEATMAP}
    return {"token": token, "ok": True, "src": "data:image/png;base64," + base64.b64encode(png).decode()}


def _sentence_extras(payload: dict[str, Any], sentence: int) -> dict[str, Any]:
    """What the page needs besides the heatmaps of a report sentence: its boxes on the image."""
    boxes = payload["sentences"][sentence].get("boxes", [])
    return {"sentence": sentence, "boxes": boxes, "size": [payload.get("width"), payload.get("height")]}


def _plan(form: Any) -> dict[str, Any]:
    """Check the request and log it as pending (one short transaction); what to compute."""
    access = _access(form)
    assert access.assignment_id is not None  # noqa: S101 - _access refuses previews
    kind = form.get("round", "")
    if kind not in ("report", "custom"):
        raise Refused(400, "Say which round the heatmaps are for: report or custom.")
    with session_scope(runtime().requester_sessions) as session:
        position, published, campaign = _slot_of(session, form, access)
        options = parse_options(campaign.spec.get("template_options", {}))
        choose_gold(session, published, access.assignment_id, access.worker_id)
        payloads = [slot.payload for slot in page_slots(session, published, access.assignment_id)]
        arrangement = arrangements_for(
            session, get_template("heatmap"), campaign.id, access.assignment_id, payloads
        )[position]
        payload = payloads[position]
        sentence: int | None = None
        if kind == "report":
            raw = form.get("sentence", "")
            if not (raw.isascii() and raw.isdigit() and int(raw) < len(payload["sentences"])):
                raise Refused(400, "Choose one of the report sentences.")
            sentence = int(raw)
            first = revealed_sentence(session, campaign.id, access.assignment_id, position)
            if first is not None and first != sentence:
                raise Refused(
                    409,
                    f"You chose sentence {first + 1} before seeing any heatmap; its heatmaps are the ones "
                    "to rate for this image.",
                    sentence=first,  # so a reloaded page can bring the choice back
                )
            text = payload["sentences"][sentence]["text"]
        else:
            text = _own_prompt(
                session, form.get("prompt", ""), options, payload, campaign.id, access, position
            )
        call_id = _take_turn(
            session,
            options,
            [
                HeatmapRequest(
                    campaign_id=campaign.id,
                    assignment_id=access.assignment_id,
                    position=position,
                    round=kind,
                    sentence=sentence,
                    prompt=text if kind == "custom" else None,
                    model=alias["model"],
                    status="pending",
                    detail="",
                )
                for alias in arrangement["aliases"]
            ],
        )
        image = str(payload.get("image", ""))
        media = Path(campaign.spec["media_path"]) if campaign.spec.get("media_path") else None
        local = media is not None and is_local(image)
        source = ImageSource(path=media / image if media and local else None, url=None if local else image)
        jobs: dict[str, Job | Callable[[], Any] | None] = {}
        for alias in arrangement["aliases"]:
            stored = (
                payload["sentences"][sentence].get("heatmaps", {}).get(alias["model"])
                if kind == "report"
                else None
            )
            precomputed = media / stored if stored and media else None
            jobs[alias["token"]] = _job(alias["model"], options, source, text, precomputed)
        return {
            "call_id": call_id,
            "size": _overlay_size(payload, source),
            "aliases": arrangement["aliases"],
            "jobs": jobs,
            "limit": options.time_limit,
            "kind": kind,
            "extras": _sentence_extras(payload, sentence) if sentence is not None else {},
        }


def _overlay_size(payload: dict[str, Any], source: ImageSource) -> tuple[int, int]:
    """One overlay size for every model of the image: its proportions, from the item or the file.

    Each model's own resolution must not show: it would tell the models apart across images.
    """
    width, height = payload.get("width"), payload.get("height")
    if not (width and height) and source.path is not None:
        try:
            with Image.open(source.path) as picture:  # reads the header only
                width, height = picture.size
        except (OSError, ValueError, Image.DecompressionBombError):
            width = height = None  # a square overlay; the page stretches it over the image
    return overlay_size(width, height)


def _record(plan: dict[str, Any], outcomes: dict[str, Outcome], overlays: dict[str, bytes]) -> None:
    with session_scope(runtime().requester_sessions) as session:
        for alias in plan["aliases"]:
            outcome = outcomes[alias["token"]]
            session.execute(
                update(HeatmapRequest)
                .where(HeatmapRequest.call_id == plan["call_id"], HeatmapRequest.model == alias["model"])
                .values(
                    status=outcome.status,
                    detail=outcome.detail[:2000],
                    milliseconds=round(outcome.seconds * 1000),
                    overlay=overlays.get(alias["token"]),
                )
            )


@bp.post("/make")
def make() -> Any:
    """The heatmaps of every model of one slot, for a report sentence or the worker's prompt (JSON)."""
    try:
        plan = _plan(request.form)
    except Refused as refused:
        return _refusal(refused)
    # The providers' breakers are the deployment's: a provider one process saw time out, all leave alone.
    outcomes = compute_all(plan["jobs"], plan["limit"], breakers_for(runtime().settings))
    overlays = {
        token: overlay_png(outcome.heat, plan["size"])
        for token, outcome in outcomes.items()
        if outcome.status == "ok" and outcome.heat is not None
    }
    # Pending rows are completed only now: a crash in between leaves them pending, still counted.
    _record(plan, outcomes, overlays)
    heatmaps = [_entry(alias["token"], overlays.get(alias["token"])) for alias in plan["aliases"]]
    return jsonify({"round": plan["kind"], "heatmaps": heatmaps, **plan["extras"]})


@bp.post("/shown")
def shown() -> Any:
    """What a reloaded page shows again: per round, the heatmaps its latest answered request showed.

    Read from the log (the overlays kept there), not made again: the models
    are not asked, no request is spent, and the worker rates the very heatmaps
    they saw, under the same tokens. A round with nothing to show is left out.
    """
    read_only_request()
    session = requester_session()
    try:
        access = _access(request.form)
        position, published, campaign = _slot_of(session, request.form, access)
    except Refused as refused:
        return _refusal(refused)
    assert access.assignment_id is not None  # noqa: S101 - _access refuses previews
    arrangement = session.scalar(
        select(SlotArrangement.arrangement).where(
            SlotArrangement.campaign_id == campaign.id,
            SlotArrangement.assignment_id == access.assignment_id,
            SlotArrangement.position == position,
        )
    )
    body: dict[str, Any] = {}
    if arrangement is None:
        return jsonify(body)  # the page was never opened as this assignment: nothing was shown
    for kind in ROUNDS:
        rows = {r.model: r for r in latest_shown(session, campaign.id, access.assignment_id, position, kind)}
        if not rows or any(r.status == "ok" and r.overlay is None for r in rows.values()):
            continue  # nothing shown yet (or logged before overlays were kept): the page asks anew
        first = next(iter(rows.values()))
        heatmaps = [
            _entry(a["token"], rows[a["model"]].overlay if a["model"] in rows else None)
            for a in arrangement["aliases"]
        ]
        body[kind] = {"round": kind, "heatmaps": heatmaps}
        if kind == "report" and first.sentence is not None:
            payload = page_slots(session, published, access.assignment_id)[position].payload
            body[kind].update(_sentence_extras(payload, first.sentence))
        else:
            body[kind]["prompt"] = first.prompt
    return jsonify(body)


def init_app(app: Flask) -> None:
    """Register the endpoint; the assignment's capability, not a cookie, authorises it (no CSRF token)."""
    app.register_blueprint(bp)
    app.extensions["csrf"].exempt(bp)
