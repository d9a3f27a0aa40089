"""Practice pages: a campaign's training items, answered, then judged and explained.

``/tasks/practice/<n>`` shows training item ``n`` (from 0) of the campaign
whose HIT page linked to it, in the template's own page, with the same page
parameters (``hitId``, ``assignmentId``, ...), checked as the HIT page checks
them (``access.py``): the campaign is the HIT's, never named in the URL, so
another campaign's training items cannot be reached from this one's pages
(an index past this campaign's items is a 404).

The page holds the item and nothing of its answer. Posted back, the answer is
read with the template's own ``parse_answers`` (a form it refuses is shown
again with its messages, status 400) and scored with its gold scoring
(``hits.requester.files.training.judge``); only then does the reply say
whether it was right, the right answer and why. Nothing is written: no
submission, no exposure, nothing paid or graded, so both methods only read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import abort, render_template, url_for

from hits.requester.files.training import Feedback, PracticeItem, judge, practice_item
from hits.requester.pages.urls import PAGE_PARAM
from hits.requester.tables.campaigns import Campaign
from hits.requester.templates import get_template
from hits.requester.templates.base import TaskTemplate
from server.requester.hit_pages.access import NOT_AVAILABLE, PageAccess
from server.requester.hit_pages.guidance import guidance_context, served_picture_url
from server.requester.hit_pages.media import is_local

#: The page parameters a practice page carries on, as the HIT page got them.
PREVIEW_PARAM = "hitforgePreview"


@dataclass(frozen=True)
class PracticePage:
    """What ``task_base.html`` adds on a practice page: where it is, the verdict once answered, the way on."""

    number: int
    count: int
    feedback: Feedback | None
    next_url: str | None
    task_url: str


def page_params(access: PageAccess, page_token: str, preview_capability: str) -> dict[str, str]:
    """The HIT page's parameters, as checked: what a practice page's links and form carry on."""
    params = {
        "assignmentId": access.assignment_id or NOT_AVAILABLE,
        "hitId": access.hit_id,
        "workerId": access.worker_id,
        "turkSubmitTo": access.turk_submit_to,
    }
    if page_token:
        params[PAGE_PARAM] = page_token
    if access.preview and preview_capability:
        params[PREVIEW_PARAM] = preview_capability
    return {k: v for k, v in params.items() if v}


def practice_url(campaign: Campaign, params: Mapping[str, str], number: int = 0) -> str | None:
    """The URL of practice page ``number`` for a HIT page with ``params`` (None: the campaign has none)."""
    if number >= len(campaign.spec.get("training") or []):
        return None
    values: dict[str, Any] = {"number": number, **params}
    return url_for("hit_pages.practice", **values)


def practice_view(
    template: TaskTemplate, practice: PracticeItem, seed: str, picture_url: Callable[[str], str | None]
) -> dict[str, Any]:
    """The training item as the page gets it: in the item's own order, pictures as served URLs."""
    payload = practice.payload
    if template.arranged:
        view = template.arranged_view(payload, template.item_order(payload))
    else:
        view = template.slot_view(payload, seed)

    def served(image: str) -> str:
        return (picture_url(image) or "") if is_local(image) else image

    view["image_url"] = served(str(view.pop("image", "")))
    for candidate in view.get("candidates", []):
        if isinstance(candidate, dict) and "source" in candidate:
            source = payload["candidates"][int(candidate.pop("source"))]
            candidate.pop("image", None)
            candidate["image_url"] = served(str(source.get("image", "")))
    return view


def render_practice(
    campaign: Campaign,
    access: PageAccess,
    params: Mapping[str, str],
    number: int,
    form: Mapping[str, str] | None,
) -> Any:
    """Practice page ``number`` of ``campaign``; with ``form``, judged and explained (404: no such item)."""
    practice = practice_item(campaign.spec, number)
    if practice is None:
        abort(404)
    picture_url = served_picture_url(campaign)
    judged = judge(campaign.spec, practice, form, picture_url) if form is not None else None
    page = PracticePage(
        number=number,
        count=practice.count,
        feedback=judged.feedback if judged is not None else None,
        next_url=practice_url(campaign, params, number + 1),
        task_url=url_for("hit_pages.show", **dict[str, Any](params)),
    )
    context = practice_context(
        campaign.spec, practice, page, picture_url, f"practice:{campaign.id}:{number}", form or {}
    )
    context.update(
        errors=judged.errors if judged is not None else {},
        assignment_id=access.assignment_id or NOT_AVAILABLE,
        hit_id=access.hit_id,
        worker_id=access.worker_id,
        turk_submit_to=access.turk_submit_to,
        page_token=params.get(PAGE_PARAM, ""),
        # The fragment takes the reply straight to the verdict (or to the problems to fix).
        form_action=url_for("hit_pages.practice", number=number) + "#practice-result",
        form_fields=[(PREVIEW_PARAM, params[PREVIEW_PARAM])] if PREVIEW_PARAM in params else [],
    )
    status = 400 if context["errors"] else 200
    return render_template(f"{campaign.template}/page.html", **context), status


def practice_context(
    spec: Mapping[str, Any],
    practice: PracticeItem,
    page: PracticePage,
    picture_url: Callable[[str], str | None],
    seed: str,
    values: Mapping[str, str],
) -> dict[str, Any]:
    """The template page's values for a practice page (the page server's and ``campaign check``'s).

    The caller adds the page parameters (``assignment_id``, ``hit_id``, ...), ``errors`` and where the
    form goes (``form_action``); the guidance block offers no practice on a practice page.
    """
    template = get_template(str(spec["template"]))
    return {
        "slots": [practice_view(template, practice, seed, picture_url)],
        "values": dict(values),
        "errors": {},
        "preview": False,  # answerable, even from a HIT's preview: nothing is stored
        **template.page_context(),
        **template.page_options(spec.get("template_options", {})),
        **guidance_context(spec, template, picture_url),
        "page_title": f"Practice {practice.number + 1} of {practice.count}: {spec.get('title', 'Task')}",
        "practice": page,
        "submit_label": "Check my answer",
    }
