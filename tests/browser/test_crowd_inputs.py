"""The form-input and display crowd elements, worked by keyboard in Chromium, offline.

One MTurk-style page uses every non-annotation element; a worker answers it with
the keyboard alone and the stored answer is compared, through boto3's
GetAssignment, with what MTurk stored for the same choices in both formats.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

INPUTS_BODY = """
<crowd-form{format}>
  <crowd-instructions link-text="Read the instructions" link-type="button">
    <short-summary><p>Rate the photo.</p></short-summary>
    <detailed-instructions><p>Look at it closely.</p></detailed-instructions>
    <positive-example><p>A sharp photo of a dog.</p></positive-example>
    <negative-example><p>A blurry photo.</p></negative-example>
  </crowd-instructions>
  <crowd-alert type="info">Work carefully.</crowd-alert>
  <crowd-card heading="The photo"><p>A dog in the sun.</p></crowd-card>
  <crowd-tabs>
    <crowd-tab header="First">Panel one</crowd-tab>
    <crowd-tab header="Second">Panel two</crowd-tab>
  </crowd-tabs>
  <crowd-radio-group>
    <crowd-radio-button name="sharp" value="yes">Sharp</crowd-radio-button>
    <crowd-radio-button name="blurry" value="no">Blurry</crowd-radio-button>
  </crowd-radio-group>
  <crowd-toggle-button name="unsafe">Flag as unsafe</crowd-toggle-button>
  <crowd-slider name="quality" label="Quality" min="0" max="10" step="1" value="5" pin editable>
  </crowd-slider>
  <crowd-classifier name="sentiment" categories="['Positive', 'Negative', 'Neutral']"
                    header="How does the photo feel?">
    <classification-target><p>A dog asleep in the sun.</p></classification-target>
    <full-instructions header="Sentiment"><p>Pick the one feeling that fits best.</p></full-instructions>
    <short-instructions><p>Choose the feeling.</p></short-instructions>
  </crowd-classifier>
  <crowd-classifier-multi-select name="animals" categories="['Cat', 'Dog', 'Bird']"
      header="Which animals are there?" exclusion-category="{{ text: 'None of the above' }}">
    <classification-target><p>Look for animals.</p></classification-target>
    <short-instructions><p>Choose every animal you see.</p></short-instructions>
  </crowd-classifier-multi-select>
  <crowd-badge label="3"></crowd-badge>
  <crowd-icon-button icon="help"></crowd-icon-button>
</crowd-form>
"""


def answer_by_keyboard(frame) -> None:  # type: ignore[no-untyped-def]
    # Instructions open with Enter and close with Escape.
    frame.get_by_role("button", name="Read the instructions").press("Enter")
    dialog = frame.get_by_role("dialog", name="Instructions")
    expect(dialog).to_be_visible()
    expect(frame.get_by_text("Rate the photo.")).to_be_visible()
    frame.locator("body").press("Escape")
    expect(dialog).to_be_hidden()
    expect(frame.get_by_text("Rate the photo.")).to_be_hidden()
    # Tabs follow the arrow keys.
    frame.get_by_role("tab", name="First").press("ArrowRight")
    expect(frame.get_by_role("tab", name="Second")).to_have_attribute("aria-selected", "true")
    expect(frame.get_by_text("Panel two")).to_be_visible()
    expect(frame.get_by_text("Panel one")).to_be_hidden()
    # Nothing classified yet: the classifiers say so and nothing is sent.
    frame.get_by_role("button", name="Submit").press("Enter")
    expect(frame.get_by_role("alert").first).to_contain_text("Choose a category")
    # Radio group: arrow keys move the single choice between buttons of different names.
    frame.get_by_role("radio", name="Sharp").press("Space")
    frame.get_by_role("radio", name="Sharp").press("ArrowDown")
    expect(frame.get_by_role("radio", name="Blurry")).to_be_checked()
    expect(frame.get_by_role("radio", name="Sharp")).not_to_be_checked()
    frame.get_by_role("switch", name="Flag as unsafe").press("Space")
    slider = frame.get_by_role("slider", name="Quality")
    for _ in range(3):
        slider.press("ArrowRight")
    expect(frame.get_by_role("spinbutton", name="Quality value")).to_have_value("8")
    # Classifier: arrows pick, and so do the digit keys.
    frame.get_by_role("radio", name="Positive").press("ArrowDown")
    expect(frame.get_by_role("radio", name="Negative")).to_be_checked()
    frame.get_by_role("radio", name="Negative").press("3")
    expect(frame.get_by_role("radio", name="Neutral")).to_be_checked()
    frame.get_by_role("radio", name="Neutral").press("2")
    # Multi-select: Space toggles; "none of the above" clears the others and is cleared by them.
    frame.get_by_role("checkbox", name="Cat").press("Space")
    frame.get_by_role("checkbox", name="None of the above").press("Space")
    expect(frame.get_by_role("checkbox", name="Cat")).not_to_be_checked()
    frame.get_by_role("checkbox", name="Bird").press("Space")
    frame.get_by_role("checkbox", name="Bird").press("ArrowUp")
    frame.get_by_role("checkbox", name="Dog").press("Space")
    expect(frame.get_by_role("checkbox", name="None of the above")).not_to_be_checked()
    frame.get_by_role("button", name="Submit").press("Enter")


def test_inputs_by_keyboard_default_format(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, INPUTS_BODY.format(format=""))
    answer_by_keyboard(hit.frame)
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers"
    assert json.loads(text) == [
        {
            "sharp": {"yes": False},
            "blurry": {"no": True},
            "unsafe": {"on": True},
            "quality": 8,
            "sentiment": {"label": "Negative"},
            "animals": {"labels": ["Dog", "Bird"]},
        }
    ]
    assert hit.blocked == []


def test_inputs_by_keyboard_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(
        offline, live_server, mturk, INPUTS_BODY.format(format=' answer-format="flatten-objects"')
    )
    answer_by_keyboard(hit.frame)
    assert sorted(answer_fields(hit.stored())) == sorted(
        [
            ("sharp.yes", "false"),
            ("blurry.no", "true"),
            ("unsafe.on", "true"),
            ("quality", "8"),
            ("sentiment.label", "Negative"),
            ("animals.labels", '["Dog","Bird"]'),
        ]
    )
    assert hit.blocked == []


def test_inputs_by_mouse(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, INPUTS_BODY.format(format=""))
    frame = hit.frame
    frame.get_by_role("button", name="Read the instructions").click()
    frame.get_by_role("dialog", name="Instructions").get_by_role("button", name="Close").click()
    expect(frame.get_by_role("dialog", name="Instructions")).to_be_hidden()
    frame.get_by_role("tab", name="Second").click()
    expect(frame.get_by_text("Panel two")).to_be_visible()
    for name in ["Blurry", "Sharp", "Blurry"]:
        frame.get_by_role("radio", name=name).click()
    toggle = frame.get_by_role("switch", name="Flag as unsafe")
    for _ in range(3):
        toggle.click()
    slider = frame.get_by_role("slider", name="Quality")
    size = slider.bounding_box()
    assert size is not None
    slider.click(position={"x": size["width"] - 1, "y": size["height"] / 2})  # the far end
    expect(frame.get_by_role("spinbutton", name="Quality value")).to_have_value("10")
    frame.get_by_role("radio", name="Positive").click()
    for name in ["Cat", "Dog", "Cat"]:
        frame.get_by_role("checkbox", name=name).click()
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [
        {
            "sharp": {"yes": False},
            "blurry": {"no": True},
            "unsafe": {"on": True},
            "quality": 10,
            "sentiment": {"label": "Positive"},
            "animals": {"labels": ["Dog"]},
        }
    ]
    assert hit.blocked == []
