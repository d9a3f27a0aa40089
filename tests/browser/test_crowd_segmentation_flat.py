"""Segmentation painted in a ``flatten-objects`` crowd-form, offline in Chromium.

MTurk's flat format gives one answer per dotted path: ``<name>.labeledImage.pngImageData``
holds the base64 PNG, ``<name>.labelMappings.<label>.color`` one colour per label, and arrays
(``<name>.instances``) stay JSON text. The stored answer is read through boto3 and the PNGs
are checked pixel by pixel.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH
from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.browser.test_crowd_segmentation import CAT, DOG, NONE, colours, initial_mask, pixels
from tests.helpers import tab_to

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

BIRD = (0xFF, 0x00, 0x80, 255)  # the earlier job's colour in initial_mask()
FLAT_BODY = f"""
<crowd-form answer-format="flatten-objects">
  <crowd-semantic-segmentation name="animals" src="{IMAGE}" labels="['Cat', 'Dog']" header="Paint">
  </crowd-semantic-segmentation>
  <crowd-semantic-segmentation name="checked" src="{IMAGE}" labels="['Bird', 'Sky']" header="Fix the bird"
      initial-value='{{"labelMappings": {{"Bird": {{"color": "#ff0080"}}}}, "src": "{initial_mask()}"}}'>
  </crowd-semantic-segmentation>
  <crowd-instance-segmentation name="traffic" src="{IMAGE}" labels="['car', 'person']" header="Cars">
  </crowd-instance-segmentation>
</crowd-form>
"""


def test_painting_every_segmentation_in_the_flat_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, FLAT_BODY, height=2400)
    frame, keys = hit.frame, hit.page.keyboard
    stages = frame.get_by_role("application", name="Image to segment")
    # Animals: a one-pixel brush; Cat at the middle (200, 160), the pen dragged 3 to the right;
    # then Dog at (204, 161).
    tab_to(hit.page, stages.nth(0))
    pen = ["1", "Space"] + ["ArrowRight"] * 3 + ["Space"]
    for key in ["["] * 7 + pen + ["2", "ArrowRight", "ArrowDown", "Enter"]:
        keys.press(key)
    expect(frame.locator("crowd-semantic-segmentation").first.get_by_role("listitem")).to_have_text(
        ["Cat: 4 px", "Dog: 1 px"]
    )
    # Checked: the earlier Bird mask (x 10..59, y 20..49) kept; one Sky pixel at the middle (200, 160).
    tab_to(hit.page, stages.nth(1))
    for key in ["["] * 7 + ["2", "Enter"]:
        keys.press(key)
    # Traffic: two cars and a person, one pixel each, as in the default-format test.
    tab_to(hit.page, stages.nth(2))
    for key in ["["] * 7 + ["1", "Enter", "i", "ArrowRight", "Enter", "2", "ArrowRight", "Enter"]:
        keys.press(key)
    tab_to(hit.page, frame.get_by_role("button", name="Submit"))
    keys.press("Enter")
    fields = dict(answer_fields(hit.stored()))
    animals = pixels(fields.pop("animals.labeledImage.pngImageData"))
    checked = pixels(fields.pop("checked.labeledImage.pngImageData"))
    traffic = pixels(fields.pop("traffic.labeledImage.pngImageData"))
    assert fields == {
        "animals.labelMappings.Cat.color": "#1f77b4",
        "animals.labelMappings.Dog.color": "#ff7f0e",
        "animals.inputImageProperties.height": str(HEIGHT),
        "animals.inputImageProperties.width": str(WIDTH),
        "checked.labelMappings.Bird.color": "#ff0080",
        "checked.labelMappings.Sky.color": "#ff7f0e",
        "checked.inputImageProperties.height": str(HEIGHT),
        "checked.inputImageProperties.width": str(WIDTH),
        "checked.initialValueModified": "true",
        "traffic.instances": '[{"color":"#1f77b4","label":"car"},{"color":"#ff7f0e","label":"car"},'
        '{"color":"#2ca02c","label":"person"}]',
        "traffic.inputImageProperties.height": str(HEIGHT),
        "traffic.inputImageProperties.width": str(WIDTH),
    }
    total = WIDTH * HEIGHT
    assert colours(animals) == {CAT: 4, DOG: 1, NONE: total - 5}
    assert [animals.getpixel((x, 160)) for x in range(199, 205)] == [NONE, CAT, CAT, CAT, CAT, NONE]
    assert animals.getpixel((204, 161)) == DOG
    assert colours(checked) == {BIRD: 1500, DOG: 1, NONE: total - 1501}  # Sky took the second colour
    assert checked.getpixel((200, 160)) == DOG and checked.getpixel((10, 20)) == BIRD
    car1, car2, person = (0x1F, 0x77, 0xB4, 255), (0xFF, 0x7F, 0x0E, 255), (0x2C, 0xA0, 0x2C, 255)
    assert colours(traffic) == {car1: 1, car2: 1, person: 1, NONE: total - 3}
    assert [traffic.getpixel((x, 160)) for x in (200, 201, 202)] == [car1, car2, person]
    assert hit.blocked == []


#: An earlier worker's answer passed on as the next job's initial-value, its colour made markup.
HOSTILE_BODY = f"""
<crowd-form answer-format="flatten-objects">
  <crowd-semantic-segmentation name="checked" src="{IMAGE}" labels="['Bird', 'Sky']" header="Fix the bird"
      initial-value='{{"labelMappings": {{"Bird": {{"color":
      "#ff0080\\"><img src=x onerror=\\"window.hostileRan=1\\">"}}}}}}'>
  </crowd-semantic-segmentation>
</crowd-form>
"""


def test_a_colour_from_an_earlier_answer_cannot_add_markup(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, HOSTILE_BODY, height=900)
    element = hit.frame.locator("crowd-semantic-segmentation")
    classes = element.locator(".classes button")
    expect(classes).to_have_count(2)
    assert element.evaluate("() => window.hostileRan === undefined")
    assert element.evaluate("el => el.shadowRoot.querySelectorAll('img[src=x]').length") == 0
    # The colour is refused, not half-used: Bird keeps the element's own first colour.
    assert "#1f77b4" in classes.first.evaluate("b => b.getAttribute('style')")
