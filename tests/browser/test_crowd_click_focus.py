"""A press on an annotator's picture or an entity text partly in view lands where the pointer was."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import pointer_at
from tests.browser.test_crowd_entity_annotation import PRIZE
from tests.browser.test_crowd_form import CrowdHit, accept, answer_fields, crowd_page, offline, open_crowd_hit
from tests.browser.test_crowd_segmentation import BARE_BODY, CAT, NONE, colours, pixels
from tests.browser.test_crowd_vertices import body
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

# A text long enough to wrap onto several lines, the first of which holds "1903" (characters 44-48).
ENTITY_BODY = f"""
<crowd-form>
  <crowd-entity-annotation name="tagged" labels="['person', 'year']" text="{PRIZE} {PRIZE} {PRIZE} {PRIZE}">
  </crowd-entity-annotation>
</crowd-form>
"""


def show_only_the_top(element, shown: int) -> None:  # type: ignore[no-untyped-def]
    """Scroll the HIT frame so that only the top ``shown`` pixels of ``element`` show, at its bottom edge."""
    scroll = "(e, shown) => window.scrollBy(0, e.getBoundingClientRect().top - (innerHeight - shown))"
    element.evaluate(scroll, shown)


def open_below_a_spacer(offline, live_server, mturk, body: str) -> CrowdHit:  # type: ignore[no-untyped-def]
    """Accept a HIT of ``body`` under a tall spacer, so that its frame can scroll it to the bottom edge."""
    hit = open_crowd_hit(offline, live_server, mturk, '<div style="height:900px"></div>' + body, height=700)
    hit.page.locator("#hit-frame").scroll_into_view_if_needed()
    return hit


def test_a_click_on_a_partly_visible_picture_is_placed_under_the_pointer(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(crowd_page(body()), height=700))
    frame = accept(page, live_server.url, hit_id)
    page.locator("#hit-frame").scroll_into_view_if_needed()
    trail = frame.locator("crowd-polyline svg")
    show_only_the_top(trail, 100)
    # The first click focuses the picture, which scrolls it into view: the point must still be the
    # one clicked (it was read after the scroll, 200-odd pixels off, a flaky failure on a loaded CI).
    page.mouse.click(*pointer_at(page, trail)(10, 50))
    at = pointer_at(page, trail)  # measured again: the picture may have moved since
    page.mouse.click(*at(50, 60))
    page.mouse.dblclick(*at(90, 70))
    expect(frame.get_by_role("list", name="Polylines").get_by_role("listitem")).to_have_text(
        ["path: (10, 50) (50, 60) (90, 70)"]
    )
    assert blocked == []


def test_a_dab_on_a_partly_visible_segmentation_picture_is_painted_under_the_pointer(  # type: ignore[no-untyped-def]
    offline, live_server, mturk
) -> None:
    hit = open_below_a_spacer(offline, live_server, mturk, BARE_BODY)
    picture = hit.frame.locator("crowd-semantic-segmentation svg")
    show_only_the_top(picture, 100)
    # One dab of the default brush (radius 8) near the bottom of what shows; the press focuses the
    # picture, which scrolls it into view: the dab must still be centred on the pixel pressed.
    hit.page.mouse.click(*pointer_at(hit.page, picture)(200, 80))
    expect(hit.frame.get_by_role("list", name="Painted").get_by_role("listitem")).to_have_count(1)
    ((_, text),) = answer_fields(hit.submit())
    image = pixels(json.loads(text)[0]["annotatedResult"]["labeledImage"]["pngImageData"])
    assert set(colours(image)) == {CAT, NONE}
    assert image.getbbox() == (193, 73, 208, 88)  # the dab: 200 ± 7, 80 ± 7 (right and bottom exclusive)
    assert hit.blocked == []


def test_a_drag_across_partly_visible_text_labels_the_characters_dragged_over(  # type: ignore[no-untyped-def]
    offline, live_server, mturk
) -> None:
    hit = open_below_a_spacer(offline, live_server, mturk, ENTITY_BODY)
    element = hit.frame.locator("crowd-entity-annotation")
    hit.frame.get_by_role("radio", name="year").click()
    # Only the text's first line shows (the box is several lines high).
    show_only_the_top(element.locator(".text"), 45)

    def centre(index: int) -> tuple[float, float]:
        box = element.locator(f'span[data-i="{index}"]').bounding_box()
        assert box is not None
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    # Both ends measured before the press: the press focuses the text, which must not move it
    # under the pointer half way through the drag.
    first, last = centre(44), centre(47)
    hit.page.mouse.move(*first)
    hit.page.mouse.down()
    hit.page.mouse.move(*last, steps=6)
    hit.page.mouse.up()
    expect(element.get_by_role("list", name="Entities").get_by_role("listitem")).to_have_text(
        ["year: “1903” (44–48) ×"]
    )
    ((_, text),) = answer_fields(hit.submit())
    year = {"endOffset": 48, "label": "year", "startOffset": 44}
    assert json.loads(text) == [{"tagged": {"entities": [year]}}]
    assert hit.blocked == []
