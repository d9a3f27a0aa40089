"""The campaign's guidance on its HIT pages: the shared block's values and its pictures.

Every template's page includes ``guidance.html``'s block with the values
``guidance_context`` gives (HTML already made safe by
``hits.requester.files.guidance``). A guidance picture is served at
``/tasks/guidance/<campaign>/<n>/<tag>``: the n-th picture the guidance shows,
with an HMAC tag the server made, so the URL names no file and only the
pictures the guidance shows can be fetched, never the media folder's others.
Guidance is the same for every worker and holds no answers, so no assignment
is bound into the URL. The pictures of the campaign's practice pages (its
training items' and their explanations', ``practice.py``) are served the same
way, numbered after the guidance's: they too are the same for every worker,
and a training item is never real work or gold.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import abort, current_app, send_from_directory, url_for

from hits.requester.files.guidance import GuidanceView, guidance_of, guidance_pictures, guidance_view
from hits.requester.files.training import training_of, training_pictures
from hits.requester.tables.campaigns import Campaign
from hits.requester.templates.base import TaskTemplate
from server.db import requester_session

SALT = b"hitforge.hit-pages.guidance"


def _tag(campaign_id: int, index: int) -> str:
    message = b"\0".join([SALT, str(campaign_id).encode(), str(index).encode()])
    mac = hmac.new(str(current_app.secret_key).encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def guidance_context(
    spec: Mapping[str, Any],
    template: TaskTemplate,
    picture_url: Callable[[str], str | None],
    practice_url: str | None = None,
) -> dict[str, Any]:
    """The page values of a campaign's guidance: ``guidance`` (None: the page is the template's own) and
    the template's values for reworded scale labels; ``picture_url`` serves a media-folder picture.

    ``practice_url``: where the campaign's first practice page is, for a block that offers its training
    items (None: offer none, as a practice page itself does).
    """
    guidance = guidance_of(spec)
    practice = len(spec.get("training") or []) if practice_url else 0
    view: GuidanceView | None = None
    if guidance is not None and (guidance.instructions or guidance.examples or guidance.faq):
        view = guidance_view(guidance, picture_url)
    if practice:
        view = dataclasses.replace(
            view or GuidanceView(instructions=None), practice_url=practice_url, practice_count=practice
        )
    context: dict[str, Any] = {"guidance": view}
    if guidance is not None and guidance.scale is not None:
        context.update(template.reworded_scale(guidance.scale))
    return context


def campaign_pictures(spec: Mapping[str, Any]) -> list[str]:
    """The media-folder pictures a campaign's guidance and practice pages show, each once, by index."""
    guidance = guidance_of(spec)
    found = guidance_pictures(guidance) if guidance is not None else []
    return list(dict.fromkeys([*found, *training_pictures(training_of(spec))]))


def served_picture_url(campaign: Campaign) -> Callable[[str], str | None]:
    """The URL of each picture of ``campaign``'s guidance and practice pages (None: not one they show)."""
    pictures = campaign_pictures(campaign.spec)

    def url(picture: str) -> str | None:
        if picture not in pictures:
            return None
        index = pictures.index(picture)
        return url_for(
            "hit_pages.guidance_picture", campaign_id=campaign.id, index=index, tag=_tag(campaign.id, index)
        )

    return url


def serve_guidance_picture(campaign_id: int, index: int, tag: str) -> Any:
    """The picture a guidance URL names; 404 for anything else, forged or not."""
    if not hmac.compare_digest(tag.encode(), _tag(campaign_id, index).encode()):
        abort(404)
    campaign = requester_session().get(Campaign, campaign_id)
    if campaign is None or not campaign.spec.get("media_path"):
        abort(404)
    pictures = campaign_pictures(campaign.spec)
    if index >= len(pictures):
        abort(404)
    response = send_from_directory(
        Path(campaign.spec["media_path"]), pictures[index], max_age=3600, etag=False
    )
    # As for the items' pictures (media.py): no file name, path hash or date leaves with the picture.
    for header in ("Content-Disposition", "Last-Modified"):
        del response.headers[header]
    # Pictures only: a requester's SVG opened on its own must not run scripts on this site.
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response
