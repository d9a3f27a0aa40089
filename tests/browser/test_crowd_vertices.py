"""crowd-line, crowd-polyline and crowd-polygon drawn and edited by keyboard and mouse, offline."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH, pointer_at
from tests.browser.test_crowd_form import (
    answer_fields,
    offline,
    open_crowd_hit,
)

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

SHAPES_BODY = """
<crowd-form{format}>
  <crowd-line name="road" src="{src}" header="Draw the lane line" labels="['lane']"></crowd-line>
  <crowd-polyline name="trail" src="{src}" header="Trace the trail" labels="['path']"></crowd-polyline>
  <crowd-polygon name="area" src="{src}" header="Outline the objects" labels="['tree', 'building']"{initial}>
  </crowd-polygon>
</crowd-form>
"""
IMAGE_SIZE = {"height": HEIGHT, "width": WIDTH}


def body(answer_format: str = "", initial: str = "") -> str:
    return SHAPES_BODY.format(format=answer_format, src=IMAGE, initial=initial)


def vertices(*points: tuple[int, int]) -> list[dict[str, int]]:
    return [{"x": x, "y": y} for x, y in points]


def test_shapes_by_keyboard_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, body(), height=700)
    frame = hit.frame
    stages = frame.get_by_role("application", name="Image to annotate")
    # The line: N adds one across the middle; "." picks a vertex, arrows move only that vertex.
    for key in ["n", ".", "Shift+ArrowUp", ".", "ArrowRight"]:
        stages.nth(0).press(key)
    # The polyline: + inserts a vertex after the chosen one, - removes the chosen one.
    for key in ["n", ".", ".", "+", "ArrowRight", ",", "-"]:
        stages.nth(1).press(key)
    # The polygon: "2" picks building; with no vertex chosen the arrows move the whole shape.
    for key in ["2", "n", "ArrowDown"]:
        stages.nth(2).press(key)
    expect(frame.get_by_role("list", name="Polygons").get_by_role("listitem")).to_have_text(
        ["building: (150, 121) (250, 121) (250, 201) (150, 201)"]
    )
    ((name, text),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    assert json.loads(text) == [
        {
            "road": {
                "lines": [{"label": "lane", "vertices": vertices((133, 150), (268, 160))}],
                "inputImageProperties": IMAGE_SIZE,
            },
            "trail": {
                "polylines": [{"label": "path", "vertices": vertices((133, 160), (268, 140), (267, 120))}],
                "inputImageProperties": IMAGE_SIZE,
            },
            "area": {
                "polygons": [
                    {
                        "label": "building",
                        "vertices": vertices((150, 121), (250, 121), (250, 201), (150, 201)),
                    }
                ],
                "inputImageProperties": IMAGE_SIZE,
            },
        }
    ]
    assert hit.blocked == []


def test_shapes_by_mouse_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    tree = "{'label': 'tree', 'vertices': [{'x': 10, 'y': 10}, {'x': 50, 'y': 10}, {'x': 30, 'y': 40}]}"
    initial = f' initial-value="[{tree}]"'
    hit = open_crowd_hit(
        offline, live_server, mturk, body(' answer-format="flatten-objects"', initial), height=700
    )
    frame = hit.frame
    images = frame.locator("svg")

    def on(index: int):  # type: ignore[no-untyped-def]
        images.nth(index).scroll_into_view_if_needed()
        return pointer_at(hit.page, images.nth(index))

    at = on(0)
    hit.page.mouse.click(*at(10, 10))
    hit.page.mouse.click(*at(100, 50))  # a line ends at its second point
    at = on(1)
    hit.page.mouse.click(*at(10, 300))
    hit.page.mouse.click(*at(50, 250))
    hit.page.mouse.dblclick(*at(90, 300))  # a double click ends the polyline
    frame.get_by_role("radio", name="building").click()
    at = on(2)
    for point in [(200, 50), (300, 50), (300, 150), (200, 50)]:  # back at the start: closed
        hit.page.mouse.click(*at(*point))
    hit.page.mouse.move(*at(300, 150))  # drag a corner
    hit.page.mouse.down()
    hit.page.mouse.move(*at(320, 170), steps=4)
    hit.page.mouse.up()
    hit.page.mouse.move(*at(250, 80))  # drag the whole polygon by its inside
    hit.page.mouse.down()
    hit.page.mouse.move(*at(260, 90), steps=4)
    hit.page.mouse.up()
    expect(frame.get_by_role("list", name="Polygons").get_by_role("listitem")).to_have_text(
        ["tree: (10, 10) (50, 10) (30, 40)", "building: (210, 60) (310, 60) (330, 180)"]
    )
    frame.get_by_role("button", name="Submit").click()
    size = [("height", str(HEIGHT)), ("width", str(WIDTH))]
    expected = [
        ("road.lines", '[{"label":"lane","vertices":[{"x":10,"y":10},{"x":100,"y":50}]}]'),
        (
            "trail.polylines",
            '[{"label":"path","vertices":[{"x":10,"y":300},{"x":50,"y":250},{"x":90,"y":300}]}]',
        ),
        (
            "area.polygons",
            '[{"label":"tree","vertices":[{"x":10,"y":10},{"x":50,"y":10},{"x":30,"y":40}]},'
            '{"label":"building","vertices":[{"x":210,"y":60},{"x":310,"y":60},{"x":330,"y":180}]}]',
        ),
        ("area.initialValueModified", "true"),
    ]
    for name in ["road", "trail", "area"]:
        expected += [(f"{name}.inputImageProperties.{key}", value) for key, value in size]
    assert sorted(answer_fields(hit.stored())) == sorted(expected)
    assert hit.blocked == []


def test_polygon_undo_and_redo_by_buttons_and_keys_while_drawing(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, body(), height=700)
    polygon = hit.frame.locator("crowd-polygon")
    image = polygon.locator("svg")
    image.scroll_into_view_if_needed()
    at = pointer_at(hit.page, image)
    undo = polygon.get_by_role("button", name="Undo")
    redo = polygon.get_by_role("button", name="Redo")
    expect(undo).to_be_disabled()
    for point in [(200, 50), (300, 50), (300, 150), (250, 220)]:
        hit.page.mouse.click(*at(*point))
    listed = polygon.get_by_role("list", name="Polygons").get_by_role("listitem")
    # Back and forth between the corners placed while the polygon is still being drawn.
    undo.click()
    undo.click()
    expect(listed).to_have_text(["tree: (200, 50) (300, 50) (drawing)"])
    redo.click()
    expect(listed).to_have_text(["tree: (200, 50) (300, 50) (300, 150) (drawing)"])
    expect(redo).to_be_enabled()
    stage = polygon.get_by_role("application", name="Image to annotate")
    stage.press("Control+z")
    expect(listed).to_have_text(["tree: (200, 50) (300, 50) (drawing)"])
    stage.press("Control+Shift+Z")
    expect(listed).to_have_text(["tree: (200, 50) (300, 50) (300, 150) (drawing)"])
    hit.page.mouse.click(*at(200, 150))  # a new corner: the one taken back cannot be redone any more
    expect(redo).to_be_disabled()
    hit.page.mouse.click(*at(200, 50))  # the first corner closes it
    expect(listed).to_have_text(["tree: (200, 50) (300, 50) (300, 150) (200, 150)"])
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text)[0]["area"] == {
        "polygons": [{"label": "tree", "vertices": vertices((200, 50), (300, 50), (300, 150), (200, 150))}],
        "inputImageProperties": IMAGE_SIZE,
    }
    assert hit.blocked == []


def test_polyline_undo_and_redo_by_keyboard(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, body(' answer-format="flatten-objects"'), height=700)
    trail = hit.frame.locator("crowd-polyline")
    stage = trail.get_by_role("application", name="Image to annotate")
    listed = trail.get_by_role("list", name="Polylines").get_by_role("listitem")
    # Add one in the middle and move it, take both back, then do them again (Ctrl+Shift+Z, Ctrl+Y).
    for key in ["n", "ArrowRight", "Control+z", "Control+z"]:
        stage.press(key)
    expect(listed).to_have_count(0)
    stage.press("Control+Shift+Z")
    expect(listed).to_have_text(["path: (133, 160) (267, 160) (267, 120)"])
    stage.press("Control+y")
    expect(listed).to_have_text(["path: (134, 160) (268, 160) (268, 120)"])
    # A new change after an undo drops what could have been redone.
    for key in ["Control+z", "ArrowDown"]:
        stage.press(key)
    expect(trail.get_by_role("button", name="Redo")).to_be_disabled()
    expect(listed).to_have_text(["path: (133, 161) (267, 161) (267, 121)"])
    fields = dict(answer_fields(hit.submit(by_keyboard=True)))
    assert fields["trail.polylines"] == (
        '[{"label":"path","vertices":[{"x":133,"y":161},{"x":267,"y":161},{"x":267,"y":121}]}]'
    )
    assert hit.blocked == []
