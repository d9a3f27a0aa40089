"""A press on an annotator's or segmentation's picture partly in view lands where the pointer was."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import pointer_at
from tests.browser.test_crowd_form import accept, answer_fields, crowd_page, offline, open_crowd_hit
from tests.browser.test_crowd_segmentation import BARE_BODY, CAT, NONE, colours, pixels
from tests.browser.test_crowd_vertices import body
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

# Scrolls the HIT frame so that only the top 100 pixels of the picture show at its bottom edge.
_PARTLY_IN_VIEW = "svg => window.scrollBy(0, svg.getBoundingClientRect().top - (window.innerHeight - 100))"


def test_a_click_on_a_partly_visible_picture_is_placed_under_the_pointer(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(crowd_page(body()), height=700))
    frame = accept(page, live_server.url, hit_id)
    page.locator("#hit-frame").scroll_into_view_if_needed()
    trail = frame.locator("crowd-polyline svg")
    trail.evaluate(_PARTLY_IN_VIEW)
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
    # A spacer above the element, so that the frame can scroll the picture to its bottom edge.
    spaced = '<div style="height:900px"></div>' + BARE_BODY
    hit = open_crowd_hit(offline, live_server, mturk, spaced, height=700)
    hit.page.locator("#hit-frame").scroll_into_view_if_needed()
    picture = hit.frame.locator("crowd-semantic-segmentation svg")
    picture.evaluate(_PARTLY_IN_VIEW)
    # One dab of the default brush (radius 8) near the bottom of what shows; the press focuses the
    # picture, which scrolls it into view: the dab must still be centred on the pixel pressed.
    hit.page.mouse.click(*pointer_at(hit.page, picture)(200, 80))
    expect(hit.frame.get_by_role("list", name="Painted").get_by_role("listitem")).to_have_count(1)
    ((_, text),) = answer_fields(hit.submit())
    image = pixels(json.loads(text)[0]["annotatedResult"]["labeledImage"]["pngImageData"])
    assert set(colours(image)) == {CAT, NONE}
    assert image.getbbox() == (193, 73, 208, 88)  # the dab: 200 ± 7, 80 ± 7 (right and bottom exclusive)
    assert hit.blocked == []
