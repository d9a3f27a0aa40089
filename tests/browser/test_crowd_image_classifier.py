"""crowd-image-classifier and its multi-select, worked by keyboard and by mouse in Chromium, offline.

The answers stored through externalSubmit (read back with boto3's GetAssignment)
are MTurk's: ``{"label": ...}`` (plus ``workerComment`` when the worker wrote
one) and ``{"labels": [...]}`` in category order, in both answer formats.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH
from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.helpers import loaded_size, tab_to

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

VERIFY_BODY = """
<crowd-form{format}>
  <crowd-image-classifier name="category" src="{src}" header="Is each box right?"
      categories="['Good', 'Bad', 'Unsure']"
      overlay='{{"boundingBox": {{labels: ["bird", "cat"], value: [
          {{height: 40, label: "bird", left: 20, top: 30, width: 50}},
          {{height: 60, label: "cat", left: 200, top: 100, width: 80}},
      ]}}}}'>
    <short-instructions><p>Look at both boxes.</p></short-instructions>
    <full-instructions header="Verifying boxes"><p>Good: tight and rightly labelled.</p></full-instructions>
    <worker-comment header="What is wrong?" link-text="Explain your choice" placeholder="The box is too wide">
      <p>Say which box is wrong.</p>
    </worker-comment>
  </crowd-image-classifier>
</crowd-form>
"""

ANIMALS_BODY = """
<crowd-form{format}>
  <crowd-image-classifier-multi-select name="animals" src="{src}" header="Which animals are in the picture?"
      categories="['Cat', 'Dog', 'Horse']" exclusion-category="{{ text: 'None of the above' }}">
    <short-instructions><p>Choose every animal you see.</p></short-instructions>
  </crowd-image-classifier-multi-select>
  <crowd-image-classifier name="light" src="{src}" header="Is it day or night?" categories="['Day', 'Night']">
  </crowd-image-classifier>
</crowd-form>
"""


def test_image_classifier_by_keyboard_with_overlay_and_comment(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    body = VERIFY_BODY.format(format="", src=IMAGE)
    hit = open_crowd_hit(offline, live_server, mturk, body, height=700)
    frame = hit.frame
    classifier = frame.locator("crowd-image-classifier")
    # The image is shown with the earlier task's two boxes drawn over it, in the image's pixels.
    assert loaded_size(classifier.locator("img")) == [WIDTH, HEIGHT]
    expect(classifier.locator("svg rect")).to_have_count(2)
    assert classifier.locator("svg rect").nth(1).get_attribute("x") == "200"
    # Nothing chosen: submitting says so.
    frame.get_by_role("button", name="Submit").press("Enter")
    expect(frame.get_by_role("alert")).to_contain_text("Choose a category")
    # Arrows pick in a single choice; the digit 2 picks the second category.
    frame.get_by_role("radio", name="Good").press("ArrowDown")
    expect(frame.get_by_role("radio", name="Bad")).to_have_attribute("aria-checked", "true")
    frame.get_by_role("radio", name="Bad").press("ArrowDown")
    frame.get_by_role("radio", name="Unsure").press("2")
    expect(frame.get_by_role("radio", name="Bad")).to_have_attribute("aria-checked", "true")
    expect(frame.get_by_role("radio", name="Unsure")).to_have_attribute("aria-checked", "false")
    # The worker-comment region: a link opening a dialog with a comment box.
    frame.get_by_role("button", name="Explain your choice").press("Enter")
    dialog = frame.get_by_role("dialog", name="What is wrong?")
    expect(dialog).to_be_visible()
    expect(frame.get_by_text("Say which box is wrong.")).to_be_visible()
    box = frame.get_by_role("textbox", name="What is wrong?")
    expect(box).to_have_attribute("placeholder", "The box is too wide")
    box.type("The cat box is too big")
    box.press("Escape")
    expect(dialog).to_be_hidden()
    ((name, text),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    assert json.loads(text) == [{"category": {"label": "Bad", "workerComment": "The cat box is too big"}}]
    assert hit.blocked == []


def test_image_classifiers_by_mouse_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    body = ANIMALS_BODY.format(format=' answer-format="flatten-objects"', src=IMAGE)
    hit = open_crowd_hit(offline, live_server, mturk, body, height=900)
    frame = hit.frame
    animals = frame.get_by_role("group", name="Which animals are in the picture?")
    animals.get_by_role("checkbox", name="Horse").click()
    animals.get_by_role("checkbox", name="Dog").click()
    # "None of the above" clears the others; choosing an animal again clears it.
    animals.get_by_role("checkbox", name="None of the above").click()
    expect(animals.get_by_role("checkbox", name="Horse")).to_have_attribute("aria-checked", "false")
    animals.get_by_role("checkbox", name="Horse").click()
    animals.get_by_role("checkbox", name="Cat").click()
    none = animals.get_by_role("checkbox", name="None of the above")
    expect(none).to_have_attribute("aria-checked", "false")
    frame.get_by_role("radio", name="Night").click()
    # No worker-comment region: no comment link.
    expect(frame.get_by_role("button", name="Add a comment")).to_have_count(0)
    assert sorted(answer_fields(hit.submit())) == [
        ("animals.labels", '["Cat","Horse"]'),
        ("light.label", "Night"),
    ]
    assert hit.blocked == []


def test_image_multi_select_by_keyboard_alone_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, ANIMALS_BODY.format(format="", src=IMAGE), height=900)
    frame, keys = hit.frame, hit.page.keyboard
    animals = frame.get_by_role("group", name="Which animals are in the picture?")

    def checked(name: str) -> None:
        expect(animals.get_by_role("checkbox", name=name)).to_have_attribute("aria-checked", "true")

    def unchecked(name: str) -> None:
        expect(animals.get_by_role("checkbox", name=name)).to_have_attribute("aria-checked", "false")

    # Tab reaches the first category; Space and Enter toggle the focused one, arrows move.
    tab_to(hit.page, animals.get_by_role("checkbox", name="Cat"))
    for key in ["Space", "ArrowDown", "Enter"]:
        keys.press(key)
    checked("Cat")
    checked("Dog")
    # Digits toggle by position: 4 is "None of the above", which clears the animals; 3 and 1 pick again.
    keys.press("4")
    checked("None of the above")
    unchecked("Cat")
    unchecked("Dog")
    for key in ["3", "1"]:
        keys.press(key)
    unchecked("None of the above")
    # On to the single-choice classifier: arrows choose there.
    tab_to(hit.page, frame.get_by_role("radio", name="Day"))
    keys.press("ArrowDown")
    expect(frame.get_by_role("radio", name="Night")).to_have_attribute("aria-checked", "true")
    tab_to(hit.page, frame.get_by_role("button", name="Submit"))
    keys.press("Enter")
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers"
    assert json.loads(text) == [{"animals": {"labels": ["Cat", "Horse"]}, "light": {"label": "Night"}}]
    assert hit.blocked == []
