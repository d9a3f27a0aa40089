"""HIT pages of a campaign file rendered before it is launched, as files a browser opens.

``hitforge campaign check`` writes one page of each kind (the first HIT, and
the last when it holds fewer items) with the same template, slot views and
context the page server uses (``_render`` in this package), but from the
files alone: no database, no marketplace. Pictures of the media folder and
the site's stylesheets and scripts are copied next to the page under neutral
names, so it opens from the disk as a worker would see it. A campaign with
training items gets its practice pages too, each twice: as the worker first
sees it (``practice-1.html``) and with what the worker reads once they have
answered, the right answer and why (``practice-1-answered.html``).
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from werkzeug.security import safe_join

from hits.requester.files.campaign import CampaignFile, LoadedItem
from hits.requester.files.guidance import render_markdown
from hits.requester.files.training import Feedback, practice_item
from hits.requester.templates import get_template
from hits.settings import Settings
from server.requester.hit_pages.guidance import campaign_pictures, guidance_context
from server.requester.hit_pages.media import is_local
from server.requester.hit_pages.practice import PracticePage, practice_context

#: ``/static/...`` references of a rendered page (stylesheets and scripts).
_STATIC = re.compile(r"""(?P<q>["'])/static/(?P<path>[^"'?#]+)(?P=q)""")


@dataclass
class PreviewPages:
    """What was written: the pages, and the pictures the items name that the media folder lacks."""

    pages: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def preview_slots(loaded: CampaignFile, start: int) -> list[LoadedItem]:
    """The items of the HIT that starts at item ``start``, gold put among them as the plan puts it.

    The gold and its places are drawn as ``plan_hits`` draws them, seeded by
    the file's ``seed`` (the real plan seeds with the campaign's id when the
    file gives none, so the places may differ; the page is the same kind).
    """
    spec = loaded.spec
    rng = random.Random(spec.seed or 1)
    gold = list(loaded.gold)
    rng.shuffle(gold)
    chunk = list(loaded.items[start : start + spec.items_per_hit])
    first_gold = (start // spec.items_per_hit) * spec.gold_per_hit
    for k in range(min(spec.gold_per_hit, len(gold))):
        chunk.insert(rng.randrange(len(chunk) + 1), gold[(first_gold + k) % len(gold)])
    return chunk


class _Pictures:
    """Copies the media folder's pictures a page shows next to it, under names that say nothing."""

    def __init__(self, media: Path | None, folder: Path, result: PreviewPages):
        self.media, self.folder, self.result = media, folder, result

    def url(self, image: str, name: str) -> str:
        if not is_local(image):
            return image
        # Only a file inside the media folder: an item naming ../../etc/passwd gets no picture.
        joined = safe_join(str(self.media), image) if self.media is not None else None
        source = Path(joined) if joined is not None else None
        if source is None or not source.is_file():
            self.result.missing.append(image)
            return ""
        target = Path("pictures") / f"{name}{source.suffix.lower()}"
        (self.folder / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, self.folder / target)
        return target.as_posix()


def _views(
    loaded: CampaignFile, slots: list[LoadedItem], page: int, pictures: _Pictures
) -> list[dict[str, Any]]:
    """Each slot as the page gets it: the template's view, pictures as copied files (as ``_slot_views``)."""
    template = get_template(loaded.spec.template)
    rng = random.Random(f"preview:{page}")
    views = []
    for position, slot in enumerate(slots):
        if template.arranged:
            view = template.arranged_view(slot.payload, template.arrange(slot.payload, rng))
        else:
            view = template.slot_view(slot.payload, f"preview:{page}:{position}")
        image = str(view.pop("image", ""))
        view["image_url"] = pictures.url(image, f"{page}-{position}")
        for k, candidate in enumerate(view.get("candidates", []), start=1):
            if isinstance(candidate, dict) and "source" in candidate:
                candidate.pop("source")
                candidate["image_url"] = pictures.url(
                    str(candidate.pop("image", "")), f"{page}-{position}-{k}"
                )
        views.append(view)
    return views


def _copy_static(html: str, static: Path, folder: Path) -> str:
    """``html`` with ``/static/...`` made relative, each file copied into ``folder/static``."""

    def relative(match: re.Match[str]) -> str:
        path = match.group("path")
        source = (static / path).resolve()
        if source.is_relative_to(static.resolve()) and source.is_file():
            target = folder / "static" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return f"{match.group('q')}static/{path}{match.group('q')}"

    return _STATIC.sub(relative, html)


def _shared_pictures(
    loaded: CampaignFile, pictures: _Pictures, prefix: str = ""
) -> Callable[[str], str | None]:
    """The URL of each picture of the guidance and the practice pages: copied once each, under names that
    say nothing, as the items' pictures are; ``prefix`` leads to them from a page in a sub-folder."""
    shown = campaign_pictures(loaded.spec.model_dump(mode="json"))

    def url(picture: str) -> str | None:
        if picture not in shown:
            return None
        copied = pictures.url(picture, f"guidance-{shown.index(picture) + 1}")
        return prefix + copied if copied else None

    return url


def render_page(
    loaded: CampaignFile, number: int, start: int, pictures: _Pictures, practice_link: str | None = None
) -> str:
    """The page of HIT ``number`` (its items from ``start``), rendered in the current request context.

    The same template, slot views and context the page server renders
    (``_render`` in this package): workers' answers never reach it, nor do gold
    keys, nor whether a slot is gold. ``practice_link``: where the guidance block's practice link goes.
    """
    from flask import render_template

    spec = loaded.spec
    template = get_template(spec.template)
    guidance = guidance_context(
        spec.model_dump(mode="json"), template, _shared_pictures(loaded, pictures), practice_link
    )
    # The guidance's values last: reworded scale labels replace the template's own.
    context = {**template.page_context(), **template.page_options(spec.template_options), **guidance}
    return render_template(
        f"{spec.template}/page.html",
        slots=_views(loaded, preview_slots(loaded, start), number, pictures),
        values={},
        errors={},
        preview=False,  # the page a worker works on, with its Submit button
        assignment_id="PREVIEW",
        hit_id="PREVIEW",
        worker_id="PREVIEW",
        turk_submit_to="",
        page_token="",
        **context,
        page_title=spec.title,
    )


def render_practice_page(
    loaded: CampaignFile,
    number: int,
    pictures: _Pictures,
    links: Callable[[int, bool], str],
    task_link: str,
    *,
    answered: bool,
    prefix: str = "",
) -> str | None:
    """Practice page ``number`` (from 0) as a worker first sees it, or once ``answered`` (None: no such
    item). ``links(n, answered)`` is where practice page ``n`` is; ``task_link`` the HIT's page."""
    from flask import render_template

    stored = loaded.spec.model_dump(mode="json")
    practice = practice_item(stored, number)
    if practice is None:
        return None
    picture_url = _shared_pictures(loaded, pictures, prefix)
    template = get_template(loaded.spec.template)
    # Not judged (no one answered): the right answer and why, as every worker reads them afterwards.
    feedback = Feedback(
        right=None,
        right_answer=practice.entry.right_answer or template.key_words(practice.key, practice.payload),
        explanation=render_markdown(practice.entry.explanation, picture_url),
    )
    page = PracticePage(
        number=number,
        count=practice.count,
        feedback=feedback if answered else None,
        next_url=links(number + 1, False) if number + 1 < practice.count else None,
        task_url=task_link,
    )
    context = practice_context(stored, practice, page, picture_url, f"preview:practice:{number}", {})
    context.update(
        assignment_id="PREVIEW",
        hit_id="PREVIEW",
        worker_id="PREVIEW",
        turk_submit_to="",
        page_token="",
        form_action=links(number, True),
        form_method="get",
    )
    return render_template(f"{loaded.spec.template}/page.html", **context)


def first_page(loaded: CampaignFile, folder: Path) -> tuple[str, PreviewPages]:
    """The first HIT's page rendered in the current request, its pictures copied into ``folder/pictures``.

    Picture URLs are relative (``pictures/1-0.png``): the page is served from
    a URL next to where ``folder/pictures`` is served (the dashboard's launch
    preview). Returns the HTML and what was copied or found missing.
    """
    folder.mkdir(parents=True, exist_ok=True)
    result = PreviewPages()
    practice = "practice/0" if loaded.spec.training else None
    html = render_page(loaded, 1, 0, _Pictures(loaded.media_dir, folder, result), practice)
    return html, result


def practice_preview(loaded: CampaignFile, number: int, folder: Path) -> str | None:
    """Practice page ``number`` answered, for the launch preview (served beside ``first_page``'s page
    at ``practice/<number>``); None: no such training item."""
    folder.mkdir(parents=True, exist_ok=True)
    pictures = _Pictures(loaded.media_dir, folder, PreviewPages())
    return render_practice_page(
        loaded, number, pictures, lambda n, _: str(n), "../preview", answered=True, prefix="../"
    )


def write_previews(loaded: CampaignFile, folder: Path, settings: Settings) -> PreviewPages:
    """Write one HTML page of each kind of HIT of ``loaded`` into ``folder``; what was written.

    A page is the first HIT's; the last HIT's is written too when it holds
    fewer items (``render_page`` renders each).
    """
    from server import create_app

    spec = loaded.spec
    folder.mkdir(parents=True, exist_ok=True)
    result = PreviewPages()
    pictures = _Pictures(loaded.media_dir, folder, result)
    last_start = ((len(loaded.items) - 1) // spec.items_per_hit) * spec.items_per_hit
    kinds = [(1, 0)]
    if len(loaded.items) - last_start != min(spec.items_per_hit, len(loaded.items)):
        kinds.append((last_start // spec.items_per_hit + 1, last_start))
    app = create_app(settings=settings)
    practice = _practice_file(0, False) if spec.training else None
    for number, start in kinds:
        with app.test_request_context():
            html = render_page(loaded, number, start, pictures, practice)
        page = folder / f"hit-{number}.html"
        page.write_text(_copy_static(html, Path(app.static_folder or ""), folder), encoding="utf-8")
        result.pages.append(page)
    for n in range(len(spec.training)):
        for answered in (False, True):
            with app.test_request_context():
                html = (
                    render_practice_page(loaded, n, pictures, _practice_file, "hit-1.html", answered=answered)
                    or ""
                )
            page = folder / _practice_file(n, answered)
            page.write_text(_copy_static(html, Path(app.static_folder or ""), folder), encoding="utf-8")
            result.pages.append(page)
    return result


def _practice_file(number: int, answered: bool) -> str:
    return f"practice-{number + 1}{'-answered' if answered else ''}.html"
