"""crowd-keypoint placed and edited by keyboard and by mouse in Chromium, offline."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH, pointer_at
from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

POINT_BODY = """
<crowd-form{format}>
  <crowd-keypoint name="face" src="{src}" header="Mark the eyes and the nose"
                  labels="['left eye', 'right eye', 'nose']"{initial}>
    <short-instructions><p>Put each point at the centre of the feature.</p></short-instructions>
  </crowd-keypoint>
</crowd-form>
"""


def body(answer_format: str = "", initial: str = "") -> str:
    return POINT_BODY.format(format=answer_format, src=IMAGE, initial=initial)


def test_points_by_keyboard_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, body(), height=700)
    frame = hit.frame
    stage = frame.get_by_role("application", name="Image to annotate")
    # "3" picks nose, N places it in the middle, arrows move it; a second point is deleted again.
    for key in ["3", "n", "ArrowLeft", "Shift+ArrowUp", "Escape", "1", "n", "Delete"]:
        stage.press(key)
    # "[" selects the nose again and "2" relabels it.
    for key in ["[", "2"]:
        stage.press(key)
    expect(frame.get_by_role("list", name="Points").get_by_role("listitem")).to_have_text(
        ["right eye: x 199, y 150"]
    )
    ((name, text),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    assert json.loads(text) == [
        {
            "face": {
                "keypoints": [{"label": "right eye", "x": 199, "y": 150}],
                "inputImageProperties": {"height": HEIGHT, "width": WIDTH},
            }
        }
    ]
    assert hit.blocked == []


def test_points_by_mouse_with_initial_value_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    initial = ' initial-value=\'[{"label": "nose", "x": 200, "y": 160}]\''
    hit = open_crowd_hit(
        offline, live_server, mturk, body(' answer-format="flatten-objects"', initial), height=700
    )
    frame = hit.frame
    page = hit.page
    image = frame.locator("crowd-keypoint svg")
    image.scroll_into_view_if_needed()
    at = pointer_at(page, image)
    frame.get_by_role("radio", name="left eye").click()
    page.mouse.click(*at(150, 100))  # place a left eye
    page.mouse.move(*at(200, 160))  # drag the initial nose down
    page.mouse.down()
    page.mouse.move(*at(205, 180), steps=4)
    page.mouse.up()
    expect(frame.get_by_role("list", name="Points").get_by_role("listitem")).to_have_text(
        ["nose: x 205, y 180", "left eye: x 150, y 100"]
    )
    assert sorted(answer_fields(hit.submit())) == sorted(
        [
            ("face.keypoints", '[{"label":"nose","x":205,"y":180},{"label":"left eye","x":150,"y":100}]'),
            ("face.inputImageProperties.height", str(HEIGHT)),
            ("face.inputImageProperties.width", str(WIDTH)),
            ("face.initialValueModified", "true"),
        ]
    )
    assert hit.blocked == []
