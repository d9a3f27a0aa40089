"""crowd-semantic-segmentation and crowd-instance-segmentation painted in Chromium, offline.

The stored answer (boto3 GetAssignment) holds the labelled image as a base64 PNG
the size of the image, which the test decodes and checks pixel by pixel: every
painted pixel is exactly its label's (instance's) colour, unpainted ones are
transparent; labelMappings / instances give those colours, as in AWS's output.
"""

from __future__ import annotations

import base64
import io
import json
from collections import Counter

import pytest
from PIL import Image
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH, pointer_at
from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.helpers import tab_to

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

CAT, DOG = (0x1F, 0x77, 0xB4, 255), (0xFF, 0x7F, 0x0E, 255)
NONE = (0, 0, 0, 0)

# A bare element, with no crowd-form: it brings its own Submit button.
BARE_BODY = f"""
<crowd-semantic-segmentation name="annotatedResult" src="{IMAGE}" labels="['Cat', 'Dog']"
    header="Paint the animals">
  <short-instructions><p>Paint every pixel of each animal.</p></short-instructions>
</crowd-semantic-segmentation>
"""


def colours(image: Image.Image) -> Counter[tuple[int, ...]]:
    """How many pixels of ``image`` (RGBA) have each colour."""
    data = image.tobytes()
    return Counter(tuple(data[i : i + 4]) for i in range(0, len(data), 4))


def pixels(png_base64: str) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(png_base64)))
    assert image.format == "PNG"
    return image.convert("RGBA")


def test_semantic_segmentation_by_keyboard_alone(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BARE_BODY, height=800)
    frame = hit.frame
    stage = frame.get_by_role("application", name="Image to segment")
    status = frame.get_by_role("status")
    stage.focus()
    # Dog, a one-pixel brush; the pen goes down at the middle (200, 160) and paints 4 more to the right.
    for key in ["2"] + ["["] * 7 + ["Space"] + ["ArrowRight"] * 4 + ["Space"]:
        stage.press(key)
    expect(status).to_have_text("Pen up.")
    # Cat with the fill tool at the top left corner fills everything not painted.
    for key in ["1", "f"] + ["Shift+ArrowLeft"] * 21 + ["Shift+ArrowUp"] * 17:
        stage.press(key)
    expect(status).to_have_text("Cursor at x 0, y 0.")
    stage.press("Enter")
    # A two-pixel dab of Dog in the corner, undone; then the eraser there.
    for key in ["b", "]", "2", "Enter", "Control+z", "e", "Enter"]:
        stage.press(key)
    total = WIDTH * HEIGHT
    expect(frame.get_by_role("list", name="Painted").get_by_role("listitem")).to_have_text(
        [f"Cat: {total - 9} px", "Dog: 5 px"]
    )
    ((name, text),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    (answers,) = json.loads(text)
    result = answers["annotatedResult"]
    image = pixels(result.pop("labeledImage")["pngImageData"])
    assert result == {
        "labelMappings": {"Cat": {"color": "#1f77b4"}, "Dog": {"color": "#ff7f0e"}},
        "inputImageProperties": {"height": HEIGHT, "width": WIDTH},
    }
    assert image.size == (WIDTH, HEIGHT)
    assert colours(image) == {CAT: total - 9, DOG: 5, NONE: 4}
    assert [image.getpixel((x, 160)) for x in range(199, 206)] == [CAT] + [DOG] * 5 + [CAT]
    assert {image.getpixel(p) for p in [(0, 0), (1, 0), (0, 1), (1, 1)]} == {NONE}
    assert hit.blocked == []


INSTANCES_BODY = f"""
<crowd-form>
  <crowd-instance-segmentation name="traffic" src="{IMAGE}" labels="['car', 'person']"
      header="Paint each car and person separately">
  </crowd-instance-segmentation>
</crowd-form>
"""


def test_instance_segmentation_by_keyboard_alone_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, INSTANCES_BODY, height=900)
    frame, keys = hit.frame, hit.page.keyboard
    tab_to(hit.page, frame.get_by_role("application", name="Image to segment"))
    # A one-pixel brush. 1: the first car instance, a dab at the middle (200, 160); i: a second car,
    # a dab at (201, 160); 2: the first person, at (202, 160); 1 again: the last car, at (202, 161).
    for key in ["["] * 7 + ["1", "Enter", "i", "ArrowRight", "Enter", "2", "ArrowRight", "Enter"]:
        keys.press(key)
    for key in ["1", "ArrowDown", "Enter"]:
        keys.press(key)
    tab_to(hit.page, frame.get_by_role("button", name="Submit"))
    keys.press("Enter")
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers"
    (answers,) = json.loads(text)
    traffic = answers["traffic"]
    image = pixels(traffic.pop("labeledImage")["pngImageData"])
    car1, car2, person = (0x1F, 0x77, 0xB4, 255), (0xFF, 0x7F, 0x0E, 255), (0x2C, 0xA0, 0x2C, 255)
    assert traffic == {
        "instances": [
            {"color": "#1f77b4", "label": "car"},
            {"color": "#ff7f0e", "label": "car"},
            {"color": "#2ca02c", "label": "person"},
        ],
        "inputImageProperties": {"height": HEIGHT, "width": WIDTH},
    }
    assert image.size == (WIDTH, HEIGHT)
    assert colours(image) == {car1: 1, car2: 2, person: 1, NONE: WIDTH * HEIGHT - 4}
    assert [image.getpixel((x, 160)) for x in (200, 201, 202)] == [car1, car2, person]
    assert image.getpixel((202, 161)) == car2
    assert hit.blocked == []


def initial_mask() -> str:
    """An earlier job's mask: a Bird rectangle in that job's colour, as a data URL."""
    mask = Image.new("RGBA", (WIDTH, HEIGHT), NONE)
    mask.paste((0xFF, 0x00, 0x80, 255), (10, 20, 60, 50))  # x 10..59, y 20..49: 1500 pixels
    out = io.BytesIO()
    mask.save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


FORM_BODY = f"""
<crowd-form answer-format="flatten-objects">
  <crowd-instance-segmentation name="traffic" src="{IMAGE}" labels="['car', 'person']"
      header="Paint each car and person separately">
  </crowd-instance-segmentation>
  <crowd-semantic-segmentation name="checked" src="{IMAGE}" labels="['Bird', 'Sky']" header="Check the bird"
      initial-value='{{"labelMappings": {{"Bird": {{"color": "#ff0080"}}}}, "src": "{initial_mask()}"}}'>
  </crowd-semantic-segmentation>
</crowd-form>
"""


def test_instances_by_mouse_and_an_initial_mask_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, FORM_BODY, height=1500)
    frame = hit.frame
    # The earlier mask is read into the semantic element: 1500 Bird pixels.
    expect(frame.locator("crowd-semantic-segmentation").get_by_role("listitem")).to_have_text(
        ["Bird: 1500 px"]
    )
    instance = frame.locator("crowd-instance-segmentation")
    svg = instance.locator("svg")

    def at(x: int, y: int) -> tuple[float, float]:
        # Measured afresh: clicking the buttons above the image may scroll the page.
        svg.scroll_into_view_if_needed()
        return pointer_at(hit.page, svg)(x, y)

    def stroke(y: int) -> None:
        hit.page.mouse.move(*at(50, y))
        hit.page.mouse.down()
        hit.page.mouse.move(*at(150, y), steps=8)
        hit.page.mouse.up()

    instance.get_by_role("button", name="Add car instance").click()
    stroke(50)
    instance.get_by_role("button", name="Add car instance").click()
    stroke(200)
    instance.get_by_role("button", name="Add person instance").click()
    instance.get_by_role("radio", name="Fill").click()
    hit.page.mouse.click(*at(390, 310))
    # Choosing car #1 again and filling inside its stroke changes nothing.
    instance.get_by_role("radio", name="car #1").click()
    hit.page.mouse.click(*at(100, 50))
    expect(instance.get_by_role("listitem")).to_have_count(3)
    fields = dict(answer_fields(hit.submit()))
    traffic = pixels(fields.pop("traffic.labeledImage.pngImageData"))
    checked = pixels(fields.pop("checked.labeledImage.pngImageData"))
    assert fields == {
        "traffic.instances": '[{"color":"#1f77b4","label":"car"},{"color":"#ff7f0e","label":"car"},'
        '{"color":"#2ca02c","label":"person"}]',
        "traffic.inputImageProperties.height": str(HEIGHT),
        "traffic.inputImageProperties.width": str(WIDTH),
        "checked.labelMappings.Bird.color": "#ff0080",
        "checked.labelMappings.Sky.color": "#ff7f0e",
        "checked.inputImageProperties.height": str(HEIGHT),
        "checked.inputImageProperties.width": str(WIDTH),
        "checked.initialValueModified": "false",
    }
    car1, car2, person = (0x1F, 0x77, 0xB4, 255), (0xFF, 0x7F, 0x0E, 255), (0x2C, 0xA0, 0x2C, 255)
    assert set(colours(traffic)) == {car1, car2, person}
    assert traffic.getpixel((100, 50)) == car1 and traffic.getpixel((100, 200)) == car2
    assert traffic.getpixel((100, 120)) == person and traffic.getpixel((399, 319)) == person
    # Untouched, the adjusted mask is the earlier one in the earlier colours.
    assert colours(checked) == {(0xFF, 0x00, 0x80, 255): 1500, NONE: WIDTH * HEIGHT - 1500}
    assert hit.blocked == []


def test_segmentation_undo_and_redo_by_buttons_and_keys(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BARE_BODY, height=800)
    frame = hit.frame
    stage = frame.get_by_role("application", name="Image to segment")
    painted = frame.get_by_role("list", name="Painted").get_by_role("listitem")
    undo, redo = frame.get_by_role("button", name="Undo"), frame.get_by_role("button", name="Redo")
    expect(undo).to_be_disabled()
    stage.focus()
    # A one-pixel brush: Cat at the middle (200, 160) and at (201, 160); the second dab undone, then redone.
    for key in ["["] * 7 + ["Enter", "ArrowRight", "Enter", "Control+z"]:
        stage.press(key)
    expect(painted).to_have_text(["Cat: 1 px"])
    redo.click()
    expect(painted).to_have_text(["Cat: 2 px"])
    expect(redo).to_be_disabled()
    # Dog over (201, 160): a new change, so nothing is left to redo; undo and redo it by keys.
    for key in ["2", "Enter", "Control+y"]:
        stage.press(key)
    expect(painted).to_have_text(["Cat: 1 px", "Dog: 1 px"])
    stage.press("Control+z")
    expect(painted).to_have_text(["Cat: 2 px"])
    stage.press("Control+Shift+Z")
    expect(painted).to_have_text(["Cat: 1 px", "Dog: 1 px"])
    ((_, text),) = answer_fields(hit.submit(by_keyboard=True))
    image = pixels(json.loads(text)[0]["annotatedResult"]["labeledImage"]["pngImageData"])
    assert colours(image) == {CAT: 1, DOG: 1, NONE: WIDTH * HEIGHT - 2}
    assert (image.getpixel((200, 160)), image.getpixel((201, 160))) == (CAT, DOG)
    assert hit.blocked == []
