"""A HIT page with the campaign's guidance, in Chromium: folded and unfolded by keyboard, pictures shown,
no accessibility violation (issue 25). Its screenshot goes to ``HITFORGE_SCREENSHOTS_DIR`` when it is set
(``docs/screenshots`` holds the one in the docs), else to a scratch folder."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image, ImageDraw

from tests.browser.accessibility import assert_accessible
from tests.helpers import accept_in_browser, document_loaded, launch_template_campaign, tab_to

pytestmark = pytest.mark.browser

GUIDANCE: dict[str, Any] = {
    "instructions": "Rate each sentence by **what it says** about the picture.\n\n"
    "- A sentence may leave things out and still earn a 4.\n"
    "- One wrong detail (a colour, a count) costs a point or two.\n\n"
    "Unsure? Read the [rating guide](https://example.org/guide) or the questions below.",
    "examples": [
        {
            "kind": "good",
            "text": "*A red square on white*: everything it says is in the picture.",
            "image": "guide/square.png",
            "image_alt": "A red square on a white background",
            "answer": "4",
        },
        {
            "kind": "bad",
            "text": "A 1 for *a square* because the colour is not named: leaving things out is no error.",
            "image": "guide/square.png",
            "image_alt": "The same red square",
            "answer": "1",
        },
    ],
    "faq": [
        {"question": "Does the background count?", "answer": "Only when the sentence mentions it."},
        {"question": "May I skip a pair?", "answer": "No: every pair needs a rating."},
    ],
    "scale": ["Right in every word", "One small slip", "A serious error", "About something else"],
}


@pytest.fixture
def axe_page(browser) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A page whose context lets axe's injected script run past the pages' CSP."""
    context = browser.new_context(bypass_csp=True, viewport={"width": 1000, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_the_guidance_block_folds_by_keyboard_and_has_no_accessibility_violations(
    axe_page,
    tmp_path: Path,
    live_server,
    market,
    requester_sessions,  # type: ignore[no-untyped-def]
) -> None:
    # Written as the demo's files, then published again with the guidance section.
    launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", name="guide-base"
    )
    picture = Image.new("RGB", (240, 160), "white")
    ImageDraw.Draw(picture).rectangle((70, 30, 170, 130), fill="#c0392b")
    (tmp_path / "media" / "guide").mkdir(parents=True)
    picture.save(tmp_path / "media" / "guide" / "square.png")
    spec = yaml.safe_load((tmp_path / "campaign.yaml").read_text())
    name = f"guided-{uuid.uuid4().hex[:6]}"
    spec.update(name=name, title=f"Rate the sentences {name}", guidance=GUIDANCE)
    from tests.helpers import publish_campaign_file

    campaign_id = publish_campaign_file(tmp_path, spec, market, requester_sessions, live_server.url)
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.tables.campaigns import PublishedHIT

    with session_scope(requester_sessions) as session:
        hit_id = session.scalars(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        ).first()
    page = axe_page
    hit = accept_in_browser(page, live_server.url, f"{name}-worker", hit_id)
    block = hit.locator("details.guidance")
    toggle = block.locator("summary.guidance-toggle")
    document_loaded(toggle)
    assert block.evaluate("d => d.open")
    assert hit.locator(".guidance-instructions strong").inner_text() == "what it says"
    assert hit.locator(".guidance-example-kind").all_inner_texts() == ["Good example: 4", "Bad example: 1"]
    for img in hit.locator("img.guidance-picture").all():
        assert img.evaluate("i => i.complete && i.naturalWidth === 240")
    assert "Right in every word" in hit.locator("ul.scale").inner_text()

    # Folded away and back by keyboard alone: Tab to the toggle, Enter.
    tab_to(page, toggle)
    page.keyboard.press("Enter")
    assert not block.evaluate("d => d.open")
    assert not hit.locator(".guidance-instructions").is_visible()
    page.keyboard.press("Enter")
    assert block.evaluate("d => d.open") and hit.locator(".guidance-instructions").is_visible()

    # A question's answer opens the same way.
    question = hit.locator("details.guidance-question").first
    tab_to(page, question.locator("summary"))
    assert not hit.get_by_text("Only when the sentence mentions it.").is_visible()
    page.keyboard.press("Space")
    assert hit.get_by_text("Only when the sentence mentions it.").is_visible()

    frame = page.frame(url=lambda url: "/tasks/hit" in url)
    assert frame is not None
    assert_accessible(frame, "the rating HIT page with guidance")

    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1000, "height": 1180})
    page.goto(frame.url)  # the HIT page on its own: the guidance, the scale and the first pair
    page.locator("details.guidance-question").first.locator("summary").click()
    page.screenshot(path=str(shots / "guidance.png"))
