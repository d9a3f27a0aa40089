"""A campaign's practice items in Chromium: answered wrong by keyboard, explained, then real work (issue 25).

No accessibility violation on the HIT page offering the practice nor on the practice page with its
verdict. The screenshot goes to ``HITFORGE_SCREENSHOTS_DIR`` when it is set (``docs/screenshots``
holds the one in the docs), else to a scratch folder.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image, ImageDraw
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from tests.browser.accessibility import assert_accessible
from tests.helpers import (
    accept_in_browser,
    document_loaded,
    launch_template_campaign,
    publish_campaign_file,
    tab_to,
)

pytestmark = pytest.mark.browser

WHY = (
    "The picture shows **two** cups on a blue table. The sentence gets the count wrong and names a "
    "colour that is not there: two serious errors, so it barely describes the picture."
)
TRAINING: list[dict[str, Any]] = [
    {
        "id": "practice-cups",
        "item": {
            "image": "practice/cups.png",
            "sentence": "Three cups stand on a red table.",
            "alt": "Cups on a table",
        },
        "answer": {"rating": 2},
        "explanation": WHY,
    },
    {
        "id": "practice-cup",
        "item": {"image": "practice/cups.png", "sentence": "Cups on a table.", "alt": "Cups on a table"},
        "answer": {"rating": 4},
        "explanation": "Short, and every word of it is true: leaving things out is not an error.",
    },
]


@pytest.fixture
def axe_page(browser) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A page whose context lets axe's injected script run past the pages' CSP."""
    context = browser.new_context(bypass_csp=True, viewport={"width": 1000, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _cups(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    picture = Image.new("RGB", (320, 240), "#f4f1ea")
    draw = ImageDraw.Draw(picture)
    draw.rectangle((20, 150, 300, 200), fill="#2e5aa8")
    for left in (80, 190):
        draw.rectangle((left, 95, left + 50, 150), fill="#ffffff", outline="#333333", width=3)
    picture.save(path)


def _stored(requester_sessions, campaign_id: int) -> list[Any]:  # type: ignore[no-untyped-def]
    """The answers stored for the campaign, one list per submitted assignment."""
    with session_scope(requester_sessions) as session:
        rows = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        return [row.answers["answers"] for row in rows]


def test_a_worker_practises_by_keyboard_reads_why_then_works(
    axe_page,
    tmp_path: Path,
    live_server,
    market,
    requester_sessions,  # type: ignore[no-untyped-def]
) -> None:
    launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", name="practice-base"
    )
    _cups(tmp_path / "media" / "practice" / "cups.png")
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    name = f"practised-{uuid.uuid4().hex[:6]}"
    spec.update(
        name=name,
        title=f"Rate the sentences {name}",
        guidance={"instructions": "Rate each sentence by **what it says** about its picture."},
        training=TRAINING,
    )
    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    with session_scope(requester_sessions) as session:
        hit_id = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        ).first()
    page = axe_page
    hit = accept_in_browser(page, live_server.url, f"{name}-worker", str(hit_id))
    start = hit.get_by_role("link", name="Start the practice")
    document_loaded(start)
    assert "2 practice items" in hit.locator(".guidance-practice").inner_text()
    frame = page.frame(url=lambda url: "/tasks/hit" in url)
    assert frame is not None
    assert_accessible(frame, "the rating HIT page offering practice")

    # Into the practice by keyboard alone.
    tab_to(page, start)
    page.keyboard.press("Enter")
    heading = hit.get_by_role("heading", name="Practice item 1 of 2")
    heading.wait_for()
    document_loaded(heading)
    practice = page.frame(url=lambda url: "/tasks/practice/0" in url)
    assert practice is not None
    first_practice = practice.url  # with the page parameters (the answer's reply is a POST's)
    assert "two serious errors" not in practice.content()  # the right answer is not in the page yet
    assert hit.locator("img[alt='Cups on a table']").evaluate("i => i.complete && i.naturalWidth === 320")

    # A wrong answer (4, the first choice), checked by keyboard.
    four = hit.get_by_role("radiogroup", name="Rating for pair 1").get_by_label("4")
    tab_to(page, four)
    page.keyboard.press("Space")
    assert four.is_checked()
    tab_to(page, hit.get_by_role("button", name="Check my answer"))
    page.keyboard.press("Enter")
    verdict = hit.locator(".practice-feedback")
    verdict.wait_for()
    text = " ".join(verdict.inner_text().split())
    assert (
        "Not quite" in text
        and "The right answer: 2: Barely describes the image" in text
        and "two serious errors" in text
    )
    assert hit.get_by_role("radiogroup", name="Rating for pair 1").get_by_label("4").is_checked()
    practice = page.frame(url=lambda url: "/tasks/practice/0" in url)
    assert practice is not None
    assert_accessible(practice, "a practice page with its verdict")

    # On to the next practice item, then to the real work, still by keyboard.
    tab_to(page, hit.get_by_role("link", name="Next practice item"))
    page.keyboard.press("Enter")
    hit.get_by_role("heading", name="Practice item 2 of 2").wait_for()
    skip = hit.get_by_role("link", name="Skip the practice and go to the task")
    tab_to(page, skip)
    page.keyboard.press("Enter")
    submit = hit.get_by_role("button", name="Submit")
    submit.wait_for()
    assert _stored(requester_sessions, campaign_id) == []  # practising stored nothing
    pairs = hit.locator("fieldset.pair").count()
    for n in range(1, pairs + 1):
        hit.get_by_role("radiogroup", name=f"Rating for pair {n}").get_by_label("3").check()
    submit.click()
    page.wait_for_selector("#submitted")
    # The real work, alone: the practice answers left nothing behind.
    assert [len(answers) for answers in _stored(requester_sessions, campaign_id)] == [pairs]

    # The screenshot: the practice page on its own, answered wrong, with its verdict.
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1000, "height": 1100})
    page.goto(first_practice)
    page.get_by_role("radiogroup", name="Rating for pair 1").get_by_label("4").check()
    page.get_by_role("button", name="Check my answer").click()
    page.locator(".practice-feedback").wait_for()
    page.screenshot(path=str(shots / "training.png"))
