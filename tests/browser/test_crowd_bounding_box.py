"""crowd-bounding-box drawn and edited by keyboard and by mouse in Chromium, offline.

The stored answers (read through boto3's GetAssignment) are in the image's own
pixels, as MTurk stored them, in both answer formats.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.helpers import tab_to

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

WIDTH, HEIGHT = 400, 320
IMAGE = "data:image/svg+xml," + quote(
    f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}'>"
    f"<rect width='{WIDTH}' height='{HEIGHT}' fill='#bcd'/></svg>"
)
BOX_BODY = """
<crowd-form{format}>
  <crowd-bounding-box name="annotatedResult" src="{src}" header="Draw a box around each animal"
                      labels="['dog', 'cat']"{initial}>
    <full-instructions header="Boxes"><p>Fit each box tightly.</p></full-instructions>
    <short-instructions><p>Box every dog and cat.</p></short-instructions>
  </crowd-bounding-box>
</crowd-form>
"""


def pointer_at(page, image) -> Callable[[int, int], tuple[float, float]]:  # type: ignore[no-untyped-def]
    """Page coordinates of a pixel of ``image`` (an element shown at its natural size in the HIT frame).

    Aimed in the frame's own coordinates (the image may sit at a fractional offset there,
    which a page-level bounding box rounds differently): frame origin + image origin + point.
    """
    corner = "e => { const r = e.getBoundingClientRect(); return [r.x + e.clientLeft, r.y + e.clientTop]; }"
    left, top = image.evaluate(corner)
    frame_x, frame_y = page.locator("#hit-frame").evaluate(corner)

    def at(x: int, y: int) -> tuple[float, float]:
        return frame_x + left + x, frame_y + top + y

    return at


def body(answer_format: str = "", initial: str = "") -> str:
    return BOX_BODY.format(format=answer_format, src=IMAGE, initial=initial)


def test_boxes_by_keyboard_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, body(), height=700)
    frame = hit.frame
    stage = frame.get_by_role("application", name="Image to annotate")
    # Reached with Tab from the top of the work page, as a worker without a mouse does;
    # every key below goes to whatever has the focus.
    tab_to(hit.page, stage)
    # "2" picks cat, N draws a quarter-size box in the middle; arrows move, Alt+arrows resize.
    for key in ["2", "n", "ArrowRight", "ArrowRight", "ArrowRight", "Shift+ArrowDown"]:
        hit.page.keyboard.press(key)
    for key in ["Alt+ArrowRight", "Alt+ArrowRight", "Alt+Shift+ArrowUp"]:
        hit.page.keyboard.press(key)
    # A second box, drawn and deleted again.
    for key in ["Escape", "1", "n", "Delete"]:
        hit.page.keyboard.press(key)
    expect(frame.get_by_role("list", name="Boxes").get_by_role("listitem")).to_have_text(
        ["cat: left 153, top 130, 102 × 70"]
    )
    # Tab on to the form's Submit button; Enter submits.
    tab_to(hit.page, frame.get_by_role("button", name="Submit"))
    hit.page.keyboard.press("Enter")
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers"
    assert json.loads(text) == [
        {
            "annotatedResult": {
                "boundingBoxes": [{"label": "cat", "left": 153, "top": 130, "width": 102, "height": 70}],
                "inputImageProperties": {"height": HEIGHT, "width": WIDTH},
            }
        }
    ]
    assert hit.blocked == []


def test_boxes_by_mouse_with_initial_value_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    initial = " initial-value=\"[{'label': 'dog', 'left': 10, 'top': 10, 'width': 50, 'height': 40}]\""
    hit = open_crowd_hit(
        offline, live_server, mturk, body(' answer-format="flatten-objects"', initial), height=700
    )
    frame = hit.frame
    image = frame.locator("crowd-bounding-box svg")
    image.scroll_into_view_if_needed()
    box = image.bounding_box()
    assert box is not None
    # Shown at its own size, so a page pixel is an image pixel.
    assert (round(box["width"]), round(box["height"])) == (WIDTH, HEIGHT)

    at = pointer_at(hit.page, image)

    def drag(x0: int, y0: int, x1: int, y1: int) -> None:
        hit.page.mouse.move(*at(x0, y0))
        hit.page.mouse.down()
        hit.page.mouse.move(*at(x1, y1), steps=5)
        hit.page.mouse.up()

    frame.get_by_role("radio", name="cat").click()
    drag(200, 100, 300, 180)  # draw a cat box
    drag(30, 30, 40, 35)  # move the initial dog box
    frame.get_by_role("button", name="cat: left 200").click()  # select the cat box again
    drag(300, 180, 320, 200)  # its corner handle: resize
    hit.page.mouse.click(*at(350, 300))  # a click is not a box
    expect(frame.get_by_role("list", name="Boxes").get_by_role("listitem")).to_have_text(
        ["dog: left 20, top 15, 50 × 40", "cat: left 200, top 100, 120 × 100"]
    )
    assert sorted(answer_fields(hit.submit())) == sorted(
        [
            (
                "annotatedResult.boundingBoxes",
                '[{"height":40,"label":"dog","left":20,"top":15,"width":50},'
                '{"height":100,"label":"cat","left":200,"top":100,"width":120}]',
            ),
            ("annotatedResult.inputImageProperties.height", str(HEIGHT)),
            ("annotatedResult.inputImageProperties.width", str(WIDTH)),
            ("annotatedResult.initialValueModified", "true"),
        ]
    )
    assert hit.blocked == []
