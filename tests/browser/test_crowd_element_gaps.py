"""Smaller gaps between AWS's documented image annotators and hitforge's, worked in Chromium, offline.

- A bare annotation element (no <crowd-form>, as some MTurk pages have) brings
  its own form and Submit button, so the HIT can be handed in.
- ``label-colors`` (crowd-line, crowd-polyline) colours the labels.
- ``initial-value`` in the object form AWS documents for lines and polylines
  (``{lines: [...]}``), with JavaScript comments and trailing commas as in AWS's
  examples and Liquid loops.
- crowd-keypoint leaves out initial points whose label is not one of ``labels``.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_bounding_box import HEIGHT, IMAGE, WIDTH
from tests.browser.test_crowd_form import (
    answer_fields,
    crowd_page,
    offline,
    open_crowd_hit,
)
from tests.browser.test_htmlquestion_flow import sign_up
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

BARE_LINE = f"""
<crowd-line name="crowdLine" src="{IMAGE}" header="Adjust the lines" labels="['sideline', 'yardline']"
    label-colors="['#123456', '#abcdef']"
    initial-value="{{
      lines: [
        {{
          label: 'sideline', // the line along the side
          vertices: [{{x: 84, y: 110}}, {{x: 60, y: 100}},],
        }},
        {{label: 'yardline', vertices: [{{x: 300, y: 50}}, {{x: 350, y: 250}}]}},
      ]
    }}">
  <short-instructions><p>Move each line onto its marking.</p></short-instructions>
</crowd-line>
"""


def test_a_bare_line_by_keyboard_with_label_colors_and_an_object_initial_value(
    offline, live_server, mturk
) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BARE_LINE, height=700)
    frame = hit.frame
    stage = frame.get_by_role("application", name="Image to annotate")
    expect(frame.locator("crowd-line svg .shape")).to_have_count(2)
    strokes = frame.locator("crowd-line svg .shape").evaluate_all(
        "els => els.map(e => e.getAttribute('stroke'))"
    )
    assert strokes == ["#123456", "#abcdef"]
    # Select the sideline and move it 2 px right; the second line stays.
    for key in ["]", "ArrowRight", "ArrowRight"]:
        stage.press(key)
    ((name, text),) = answer_fields(hit.submit(by_keyboard=True))
    assert name == "taskAnswers"
    assert json.loads(text) == [
        {
            "crowdLine": {
                "lines": [
                    {"label": "sideline", "vertices": [{"x": 86, "y": 110}, {"x": 62, "y": 100}]},
                    {"label": "yardline", "vertices": [{"x": 300, "y": 50}, {"x": 350, "y": 250}]},
                ],
                "inputImageProperties": {"height": HEIGHT, "width": WIDTH},
                "initialValueModified": True,
            }
        }
    ]
    assert hit.blocked == []


UNCHANGED = f"""
<crowd-form answer-format="flatten-objects">
  <crowd-keypoint name="bird" src="{IMAGE}" labels="['Left Eye', 'Beak']"
      initial-value="[{{'label': 'Left Eye', 'x': 102, 'y': 42}}, {{'label': 'Tail', 'x': 5, 'y': 5}},
                      {{'label': 'Beak', 'x': 94, 'y': 40}},]">
  </crowd-keypoint>
  <crowd-polyline name="crowdPolyline" src="{IMAGE}" labels="['yardline']"
      initial-value="{{polylines: [{{label: 'yardline',
                                     vertices: [{{x: 10, y: 20}}, {{x: 30, y: 40}}, {{x: 50, y: 20}}]}}]}}">
  </crowd-polyline>
</crowd-form>
"""


def test_initial_values_kept_as_documented_flatten_objects(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, UNCHANGED, height=900)
    frame = hit.frame
    expect(frame.get_by_role("list", name="Points").get_by_role("listitem")).to_have_text(
        ["Left Eye: x 102, y 42", "Beak: x 94, y 40"]
    )
    fields = dict(answer_fields(hit.submit()))
    assert fields == {
        "bird.keypoints": '[{"label":"Left Eye","x":102,"y":42},{"label":"Beak","x":94,"y":40}]',
        "bird.inputImageProperties.height": str(HEIGHT),
        "bird.inputImageProperties.width": str(WIDTH),
        "bird.initialValueModified": "false",
        "crowdPolyline.polylines": '[{"label":"yardline",'
        '"vertices":[{"x":10,"y":20},{"x":30,"y":40},{"x":50,"y":20}]}]',
        "crowdPolyline.inputImageProperties.height": str(HEIGHT),
        "crowdPolyline.inputImageProperties.width": str(WIDTH),
        "crowdPolyline.initialValueModified": "false",
    }
    assert hit.blocked == []


VALIDATED = """
<crowd-form>
  <crowd-input name="word" label="A word" auto-focus></crowd-input>
  <crowd-input name="code" label="Code" min-length="3" auto-validate allowed-pattern="[A-Z0-9]"
               error-message="Three capitals or digits at least"></crowd-input>
</crowd-form>
"""


def test_crowd_input_auto_focus_min_length_and_error_message(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, VALIDATED)
    frame = hit.frame
    # auto-focus: the worker types straight away.
    expect(frame.get_by_label("A word")).to_be_focused()
    hit.page.keyboard.type("owl")
    hit.page.keyboard.press("Tab")
    code = frame.get_by_label("Code")
    expect(code).to_be_focused()
    hit.page.keyboard.type("a1b")  # allowed-pattern drops the small letters
    hit.page.keyboard.press("Tab")
    # auto-validate: the error message shows under the field as soon as it is left.
    expect(code).to_have_attribute("aria-invalid", "true")
    expect(frame.get_by_text("Three capitals or digits at least")).to_be_visible()
    frame.get_by_role("button", name="Submit").click()
    expect(frame.get_by_role("alert")).to_contain_text("Three capitals or digits at least")
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    code.press("End")
    hit.page.keyboard.type("C9")
    expect(code).to_have_attribute("aria-invalid", "false")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"word": "owl", "code": "1C9"}]
    assert hit.blocked == []


BUTTONS = """
<crowd-form>
  <p><crowd-button href="/static/hitforge.css" target="_self" icon="info">Style guide</crowd-button>
     <crowd-button icon="search" icon-align="right" id="find">Find</crowd-button>
     <crowd-button loading disabled id="busy">Saving</crowd-button>
     <crowd-button id="help"><iron-icon icon="help"></iron-icon></crowd-button></p>
  <crowd-input name="word" label="A word"></crowd-input>
  <crowd-button form-action="submit" variant="primary">Send</crowd-button>
</crowd-form>
"""


def test_crowd_button_link_icons_loading_and_iron_icon(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BUTTONS)
    frame = hit.frame
    # href: a link styled as a button, with the target given.
    link = frame.get_by_role("link", name="Style guide")
    expect(link).to_have_attribute("href", "/static/hitforge.css")
    expect(link).to_have_attribute("target", "_self")
    # icon / icon-align: a glyph before (default) or after the text.
    parts = "e => [...e.shadowRoot.querySelector('button').children].map(c => c.className || c.localName)"
    assert frame.locator("#find").evaluate(parts) == ["spinner", "slot", "icon"]
    assert frame.locator("#find .icon").text_content() == "🔍"
    # loading wins over disabled: a busy, disabled button.
    busy = frame.get_by_role("button", name="Saving")
    expect(busy).to_be_disabled()
    expect(busy).to_have_attribute("aria-busy", "true")
    # <iron-icon>, which AWS's script loaded, shows its glyph and names the button.
    expect(frame.get_by_role("button", name="help")).to_have_count(1)
    assert frame.locator("iron-icon").evaluate("e => e.shadowRoot.lastChild.textContent") == "?"
    frame.get_by_label("A word").fill("ok")
    frame.get_by_role("button", name="Send").click()
    ((_, text),) = answer_fields(hit.stored())
    assert json.loads(text) == [{"word": "ok"}]
    assert hit.blocked == []


def test_a_bare_element_cannot_be_submitted_in_preview(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(crowd_page(BARE_LINE), height=700))
    sign_up(page, live_server.url)
    page.goto(f"{live_server.url}/hits/{hit_id}")
    frame = page.frame_locator("#hit-frame")
    # The element works (its lines are drawn) but its own Submit button waits for the accept.
    expect(frame.locator("crowd-line svg .shape")).to_have_count(2)
    expect(frame.get_by_role("button", name="Submit")).to_be_disabled()
    assert blocked == []


ICON = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/%3E"
BADGES = f"""
<crowd-form>
  <div id="box" style="width: 300px; height: 80px; border: 1px solid #999">Instructions</div>
  <crowd-badge id="star" icon="star" label="NEW" for="box"></crowd-badge>
  <crowd-badge id="custom" icon="{ICON}"></crowd-badge>
  <crowd-input name="word" label="A word"></crowd-input>
</crowd-form>
"""


def test_crowd_badge_icon_over_label_custom_icon_and_for(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BADGES)
    frame = hit.frame
    star = frame.locator("#star")
    # icon overrides label, as AWS documents; an icon that is a URL is shown as an image.
    assert star.evaluate("e => e.shadowRoot.lastChild.textContent") == "★"
    expect(frame.locator("#custom img")).to_have_count(1)
    # for: the badge floats over the top right corner of the element it names.
    box = frame.locator("#box").bounding_box()
    badge = star.bounding_box()
    assert box is not None and badge is not None
    assert abs((badge["x"] + badge["width"] / 2) - (box["x"] + box["width"])) <= 12
    assert abs((badge["y"] + badge["height"] / 2) - box["y"]) <= 12
    frame.get_by_label("A word").fill("ok")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"word": "ok"}]
    assert hit.blocked == []


SWITCHES = """
<crowd-form answer-format="flatten-objects">
  <crowd-toggle-button name="consent" invalid>I agree</crowd-toggle-button>
  <crowd-modal>Example text</crowd-modal>
</crowd-form>
"""


def test_toggle_button_invalid_and_modal_default_link_text(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, SWITCHES)
    frame = hit.frame
    switch = frame.get_by_role("switch", name="I agree")
    # invalid: shown in the alert colour (and announced as invalid) while off, like any other switch when on.
    expect(switch).to_have_attribute("aria-invalid", "true")
    colour = "e => getComputedStyle(e.shadowRoot.querySelector('.box')).borderColor"
    assert switch.evaluate(colour) == "rgb(176, 0, 32)"
    switch.press("Space")
    expect(switch).to_have_attribute("aria-invalid", "false")
    assert switch.evaluate(colour) == "rgb(11, 92, 173)"
    # crowd-modal's link says what AWS's did when the page gives no link-text.
    frame.get_by_role("button", name="Click to open modal").click()
    expect(frame.get_by_text("Example text")).to_be_visible()
    frame.locator("body").press("Escape")
    assert answer_fields(hit.submit()) == [("consent.on", "true")]
    assert hit.blocked == []


MTURK_SCRIPT_TAG = '<script src="https://s3.amazonaws.com/mturk-public/externalHIT_v1.js"></script>'
IN_A_PLAIN_FORM = f"""
<form name="mturk_form" method="post" id="mturk_form" action="https://www.mturk.com/mturk/externalSubmit">
  <input type="hidden" value="" name="assignmentId" id="assignmentId">
  <crowd-bounding-box name="boxes" src="{IMAGE}" labels="['dog']" header="Box the dog"></crowd-bounding-box>
  <input type="hidden" name="boxesCopy" id="boxesCopy">
  <p><label for="note">Anything else</label> <input id="note" name="note"></p>
  <p><input type="submit" id="submitButton" value="Submit"></p>
</form>
<script>
  turkSetAssignmentID();
  // What a page must do to keep an element's answer in a plain form: copy it into a field.
  document.getElementById("mturk_form").addEventListener("submit", function () {{
    var boxes = document.querySelector("crowd-bounding-box");
    document.getElementById("boxesCopy").value = JSON.stringify(boxes.value);
  }});
</script>
"""


def test_an_element_inside_a_plain_form_answers_nothing_as_on_mturk(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    """AWS's script serialized crowd elements only inside <crowd-form>; a plain form posts its own fields."""
    hit = open_crowd_hit(offline, live_server, mturk, IN_A_PLAIN_FORM, height=700, head=MTURK_SCRIPT_TAG)
    hit.frame.get_by_role("application", name="Image to annotate").press("n")
    expect(hit.frame.get_by_role("list", name="Boxes").get_by_role("listitem")).to_have_count(1)
    # The element brings no form or Submit button of its own inside the page's form.
    expect(hit.frame.get_by_role("button", name="Submit")).to_have_count(1)
    hit.frame.get_by_label("Anything else").fill("a dog")
    hit.frame.locator("#submitButton").click()
    fields = dict(answer_fields(hit.stored()))
    assert sorted(fields) == ["boxesCopy", "note"]  # no "boxes": the element itself posted nothing
    assert fields["note"] == "a dog"
    assert json.loads(fields["boxesCopy"])["boundingBoxes"] == [
        {"height": 80, "label": "dog", "left": 150, "top": 120, "width": 100}
    ]
    assert hit.blocked == []
