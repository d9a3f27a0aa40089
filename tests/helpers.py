"""Small builders shared by tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from hits.db import session_scope

EXTERNAL_QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL>'
    "<FrameHeight>600</FrameHeight></ExternalQuestion>"
)


def altered_token(token: str) -> str:
    """``token`` with its first character changed: a forgery, never the token itself.

    The first, not the last: a base64 token's last character carries padding
    bits a decoder may ignore, and a fixed replacement at the end is the token
    itself whenever it already ends that way (a flaky test, 1 run in 64).
    """
    return ("B" if token[0] == "A" else "A") + token[1:]


def hit_params(url: str = "https://example.org/task", **overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "MaxAssignments": 2,
        "LifetimeInSeconds": 3600,
        "AssignmentDurationInSeconds": 600,
        "Reward": "0.25",
        "Title": "Rate some pictures",
        "Description": "Rate how well each sentence fits its picture.",
        "Question": EXTERNAL_QUESTION.format(url=url),
    }
    params.update(overrides)
    return params


def rating_campaign_spec(name: str, **overrides: Any) -> dict[str, Any]:
    """A rating campaign file's fields, over what ``write_rating_demo`` writes (items, gold, media)."""
    spec: dict[str, Any] = {
        "name": name,
        "template": "rating",
        "title": f"Rate drawings {name}",
        "description": "Rate each sentence.",
        "reward": "0.10",
        "budget": "10.00",
        "assignments_per_hit": 2,
        "items_per_hit": 2,
        "gold_per_hit": 1,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
        "media_dir": "media",
    }
    spec.update(overrides)
    return spec


def publish_campaign_file(folder, spec: dict[str, Any], market, requester_sessions, public_url: str) -> int:  # type: ignore[no-untyped-def]
    """Write ``spec`` as ``folder/campaign.yaml``, create the campaign from it and publish it; its id."""
    import yaml

    from hits.db import session_scope
    from hits.requester.campaigns.service import create_campaign, publish_campaign
    from hits.requester.files.campaign import load_campaign_file

    (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
    loaded = load_campaign_file(folder / "campaign.yaml")
    with session_scope(requester_sessions) as session:
        campaign_id = create_campaign(session, loaded).id
    publish_campaign(requester_sessions, market, campaign_id, public_url + "/tasks/hit")
    return campaign_id


def launch_demo_campaign(
    folder,
    market,
    requester_sessions,
    public_url: str,
    *,
    hits: int = 2,
    name: str = "c",
    quality: dict | None = None,
    gold_per_hit: int = 1,
    assignments_per_hit: int = 2,
    seed: int = 0,
):  # type: ignore[no-untyped-def]
    """Write, create and publish a small rating campaign; return (campaign id, truth).

    ``seed``: the campaign's plan seed (where gold goes). 0 leaves it to the campaign's id,
    which depends on the tests run before: a test whose outcome hangs on where gold lands
    (a worker's luck on a few gold items) pins it.
    """
    from demo.data import write_rating_demo

    # A gold item for every gold slot (a shorter pool is refused unless the file allows reuse).
    truth = write_rating_demo(folder, items=hits * 2, gold=max(4, hits * gold_per_hit), seed=len(name))
    spec = rating_campaign_spec(
        name,
        assignments_per_hit=assignments_per_hit,
        gold_per_hit=gold_per_hit,
        quality=quality or {"accuracy_threshold": 0.6, "confidence": 0.8, "min_gold": 2},
        auto_approval_delay_seconds=3600,
        **({"seed": seed} if seed else {}),
    )
    return publish_campaign_file(folder, spec, market, requester_sessions, public_url), truth


def campaign_bot(base_url: str, username: str, profile, truth, campaign_name: str, seed: int = 0):  # type: ignore[no-untyped-def]
    """A simulated worker that only works on the given test campaign's HITs."""
    from demo.crowd import Bot

    bot = Bot(base_url, username, profile, truth, seed=seed)
    bot.title_filter = f"Rate drawings {campaign_name}"
    return bot


def launch_template_campaign(
    folder, market, requester_sessions, public_url: str, template: str, *, hits: int = 1, name: str = "t"
):  # type: ignore[no-untyped-def]
    """Publish a small demo campaign of any template; return (campaign id, truth, HIT ids)."""
    from sqlalchemy import select

    from demo.tasks import get_demo_task
    from hits.db import session_scope
    from hits.requester.tables.campaigns import PublishedHIT

    task = get_demo_task(template)
    # A gold item for every gold slot (a shorter pool is refused unless the file allows reuse).
    gold = max(4, hits * task.gold_per_hit) if task.gold_per_hit else 0
    truth = task.write_data(folder, hits * task.items_per_hit, gold, len(name))
    spec = {
        "name": name,
        "template": template,
        "title": f"{task.title} {name}",
        "description": task.description,
        "reward": "0.10",
        "budget": "10.00",
        "assignments_per_hit": 2,
        "items_per_hit": task.items_per_hit,
        "items": "items.jsonl",
        "media_dir": "media",
        "template_options": task.template_options,
        "quality": task.quality,
        "auto_approval_delay_seconds": 3600,
    }
    if task.gold_per_hit:
        spec.update(gold_per_hit=task.gold_per_hit, gold="gold.jsonl")
    campaign_id = publish_campaign_file(folder, spec, market, requester_sessions, public_url)
    with session_scope(requester_sessions) as session:
        hit_ids = list(
            session.scalars(
                select(PublishedHIT.mturk_hit_id)
                .where(PublishedHIT.campaign_id == campaign_id)
                .order_by(PublishedHIT.id)
            )
        )
    return campaign_id, truth, hit_ids


def hitforge_results(settings: Any, *args: str) -> Any:
    """``hitforge results ARGS`` run in process on the test session's requester database; click's Result.

    Exceptions are not caught: a refusal must be a clean exit, never a traceback.
    """
    from click.testing import CliRunner

    from server.cli.main import main

    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    return CliRunner().invoke(main, ["results", *args], env=env, catch_exceptions=False)


def render_task_page(  # type: ignore[no-untyped-def]
    name: str, slots: list, tmp_path, values: dict | None = None, errors: dict | None = None
) -> str:
    """A template's HIT page rendered in a test request, as a worker with an assignment sees it."""
    from flask import render_template

    from hits.requester.templates import get_template
    from hits.settings import load_settings
    from server import create_app

    app = create_app(settings=load_settings({"HITFORGE_VAR_DIR": str(tmp_path)}))
    with app.test_request_context():
        return render_template(
            f"{name}/page.html",
            slots=slots,
            values=values or {},
            errors=errors or {},
            preview=False,
            assignment_id="A1",
            hit_id="H1",
            worker_id="W1",
            turk_submit_to="http://x",
            page_title="T",
            **get_template(name).page_context(),
        )


REPO = Path(__file__).resolve().parent.parent


def run_hitforge(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """``hitforge ARGS`` as a user runs it: a fresh process in ``tmp_path``, its var folder under it.

    The demo keeps its databases in ``demo/`` of the var folder; every other
    command is pointed at that folder, so it reads what the demo made.
    """
    var_dir = tmp_path / "var" if args[:1] == ("demo",) else tmp_path / "var" / "demo"
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", *args],
        cwd=tmp_path,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(REPO),
            "COLUMNS": "160",
            "HITFORGE_VAR_DIR": str(var_dir),
        },
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# Resolves once the picture has loaded or failed, so a picture still on its way is not read as broken.
_LOADED_SIZE = """async img => {
    if (!img.complete) {
        await new Promise(done => {
            img.addEventListener("load", done);
            img.addEventListener("error", done);
        });
    }
    return [img.naturalWidth, img.naturalHeight];
}"""


def loaded_size(picture: Any) -> list[int]:
    """The natural [width, height] of a Playwright ``<img>`` locator after it loads ([0, 0] if it failed)."""
    return list(picture.evaluate(_LOADED_SIZE))


def sync_marketplace_answers(  # type: ignore[no-untyped-def]
    mturk, market, requester_sessions, hit_ids: list[str]
) -> dict[str, dict[str, str]]:
    """The answer fields the marketplace holds per assignment of ``hit_ids``, after one sync pass.

    The pass is the Celery sync's work done inline: open HITs read through the API, then reviewed.
    """
    from hits.db import session_scope
    from hits.requester.quality import pipeline, sync_queue
    from hits.wire.documents import xml_to_answers

    held = {
        a["AssignmentId"]: xml_to_answers(a["Answer"])
        for hit_id in hit_ids
        for a in mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    }
    with session_scope(requester_sessions) as session:
        targets = sync_queue.open_hits(session, market.access_key_id)
    fetched = pipeline.fetch_hits(market, targets)
    with session_scope(requester_sessions) as session:
        pipeline.review_hits(session, fetched)
    return held


def hidden_fields(form: Any) -> dict[str, str]:
    """The named hidden inputs of a BeautifulSoup ``<form>``: what a page posts back with the answers."""
    from bs4 import Tag

    return {
        str(i["name"]): str(i.get("value", ""))
        for i in form.find_all("input", type="hidden")
        if isinstance(i, Tag) and i.get("name")
    }


def sign_up_in_browser(page: Any, base_url: str, worker: str) -> None:
    """Sign ``worker`` up on the worker site in a Playwright ``page`` (they stay signed in)."""
    page.goto(base_url + "/signup")
    page.get_by_label("User name").fill(worker)
    page.get_by_label("Password (at least 8 characters)").fill("a-long-password")
    page.get_by_role("button", name="Sign up").click()


def accept_in_browser(page: Any, base_url: str, worker: str, hit_id: str) -> Any:
    """Sign ``worker`` up in a Playwright ``page`` and accept ``hit_id``; the HIT's page in its frame."""
    sign_up_in_browser(page, base_url, worker)
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    # The click returns once the navigation commits, before the work page is parsed: a check
    # run then would see an empty document (an axe run once found no heading at all).
    page.wait_for_url("**/work/**")
    page.locator("#hit-frame").wait_for(state="attached")
    page.wait_for_load_state("domcontentloaded")
    return page.frame_locator("#hit-frame")


# Resolves once the element's document has fired its load event: its scripts have run and its
# pictures (those in shadow trees too) have loaded or failed.
_DOCUMENT_LOADED = """element => {
    const doc = element.ownerDocument;
    if (doc.readyState === "complete") {
        return true;
    }
    return new Promise(done => doc.defaultView.addEventListener("load", () => done(true)));
}"""


def document_loaded(element: Any) -> None:
    """Wait until the page or frame holding the Playwright locator ``element`` has loaded."""
    element.evaluate(_DOCUMENT_LOADED)


_HAS_FOCUS = "e => document.hasFocus() && e.getRootNode().activeElement === e"


def tab_to(page: Any, target: Any, limit: int = 60) -> int:
    """Press Tab in ``page`` until the Playwright locator ``target`` (in a frame, or a shadow root,
    of the page) has the keyboard focus, as a keyboard-only worker reaches it; how many presses.

    Fails after ``limit`` presses. Nothing is focused by script: later keys must go through
    ``page.keyboard``, since ``locator.press`` focuses its element first.
    """
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if target.evaluate(_HAS_FOCUS):
            return presses
    raise AssertionError(f"{target} not reached with {limit} Tab presses")


def names_in(text: str, names: Iterable[str]) -> list[str]:
    """The names that ``text`` holds as words of their own, ignoring case.

    A name with a letter on either side is part of another word: random ids and tokens (base36,
    base64) hold short names by chance ("...lkcakeenbkd..." holds "keen"), and a blinding test
    must not fail on them, while a real leak ("keen.png", ``"system": "keen"``) stands alone.
    """
    return [n for n in names if re.search(rf"(?<![a-z]){re.escape(n)}(?![a-z])", text, re.IGNORECASE)]


def install_package(folder: Path, monkeypatch: Any, module: str, source: str, entry_points: str) -> None:
    """A real (tiny) installed distribution: ``module``.py with ``source`` and its ``entry_points.txt``.

    ``folder`` is put on ``sys.path`` (undone with ``monkeypatch``), so
    ``importlib.metadata`` finds the entry points as those of any package.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    monkeypatch.syspath_prepend(str(folder))


def with_page_token(url: str, token: str) -> str:
    """``url`` (a framed HIT page's) with its page token replaced, MTurk's other parameters kept."""
    from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    params = {k: v[0] for k, v in parse_qs(parts.query).items()}
    params["page"] = token
    return urlunsplit(parts._replace(query=urlencode(params)))


def submit_and_relay(worker: Any, page: Any, form: Any, fields: dict[str, str]) -> dict[str, str]:
    """Post a HIT page's ``form`` with ``fields``, then its handoff to the marketplace as the browser would.

    ``page`` is the HIT page's response (its URL resolves the form's action); returns what was relayed.
    """
    import requests
    from bs4 import BeautifulSoup, Tag

    handoff = worker.http.post(requests.compat.urljoin(page.url, str(form["action"])), data=fields)
    out = BeautifulSoup(handoff.text, "html.parser").find("form", id="handoff")
    assert isinstance(out, Tag), handoff.text
    relayed = {str(i["name"]): str(i.get("value", "")) for i in out.find_all("input") if i.get("name")}
    assert worker.http.post(str(out["action"]), data=relayed).status_code == 200
    return relayed


def name_a_model_in(path: Path, name: str, size: tuple[int, int] | None = None) -> None:
    """Rewrite the picture at ``path`` as a model's output often is: PNG text chunks and EXIF naming it.

    ``size``: resample it too (a model's own resolution). A blinded page must serve none of it.
    """
    from PIL import Image, PngImagePlugin

    with Image.open(path) as picture:
        pixels = picture.convert("RGB") if size is None else picture.convert("RGB").resize(size)
    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", f"a chest scan, Steps: 20, Model: {name}")
    info.add_text("Software", name, zip=True)  # compressed (zTXt): no byte search would find it
    exif = Image.Exif()
    exif[0x010E] = f"made by {name}"  # ImageDescription
    exif[0x0131] = name  # Software
    pixels.save(path, format="PNG", pnginfo=info, exif=exif)


def pixels_only(data: bytes, names: Iterable[str]) -> tuple[tuple[int, int], str]:
    """Assert ``data`` is a PNG of pixels alone, naming none of ``names``; its size and pixel digest."""
    import io

    from PIL import Image

    assert not names_in(data.decode("latin-1"), names), names_in(data.decode("latin-1"), names)
    with Image.open(io.BytesIO(data)) as picture:
        assert picture.format == "PNG"
        picture.load()
        assert not getattr(picture, "text", {}), picture.text  # type: ignore[attr-defined]
        assert not {"exif", "icc_profile", "parameters", "Software"} & set(picture.info), picture.info
        assert not picture.getexif()
        size = picture.size
    return size, pixel_digest(data)


def pixel_digest(picture: bytes | Path) -> str:
    """What a picture (its file, or its bytes) shows, whatever its encoding: the demo's name for it."""
    from demo.picture_names import picture_name

    return picture_name(picture if isinstance(picture, bytes) else picture.read_bytes())


def opaque_part(data: bytes) -> tuple[tuple[int, int], str]:
    """The size of the PNG ``data`` and the pixel digest of its opaque part (a padded picture's own)."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(data)) as picture:
        rgba = picture.convert("RGBA")
    box = rgba.getchannel("A").getbbox()
    assert box is not None, "a picture with no opaque pixel"
    out = io.BytesIO()
    rgba.crop(box).save(out, format="PNG")
    return rgba.size, pixel_digest(out.getvalue())


# The server's own background threads, named where they start (server/market/clock.py,
# hits/market/events.py). They share the marketplace's engine and may run at any time.
BACKGROUND_THREADS = frozenset({"hitforge-clocks", "hitforge-events"})


@contextmanager
def statements_sent(engine: Engine) -> Iterator[list[str]]:
    """The statements sent on ``engine`` inside the block, whitespace folded.

    Statements of the server's background threads (a clock sweep, an event delivery) are not the
    code under test's, and are left out: CI once counted a sweep's reads as a page's.
    """
    sent: list[str] = []

    def note(_conn, _cursor, statement, *_rest) -> None:  # type: ignore[no-untyped-def]
        if threading.current_thread().name not in BACKGROUND_THREADS:
            sent.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", note)


T = TypeVar("T")


def in_own_session(sessions: sessionmaker[Session], work: Callable[[Session], T]) -> T:
    """``work`` run in a session of its own and committed: the other side of a race, in a thread."""
    with session_scope(sessions) as session:
        return work(session)
