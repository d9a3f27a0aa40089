"""<crowd-button form-action="reset"> and form-action="submit" inside a crowd-form, offline in Chromium.

AWS documents crowd-form as extending <form> and crowd-button's ``form-action`` as making
it that form's submit or reset button. Reset puts every field, crowd element or native
control, back to what the page preset (and fires the form's ``reset`` event); a
crowd-button without ``form-action`` does neither. The answer is read through boto3.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.helpers import tab_to

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

BODY = """
<crowd-form>
  <crowd-input name="word" label="A word" value="preset"></crowd-input>
  <crowd-text-area name="note" label="A note"></crowd-text-area>
  <crowd-checkbox name="tags" value="cat" checked>cat</crowd-checkbox>
  <crowd-checkbox name="tags" value="dog">dog</crowd-checkbox>
  <crowd-slider name="score" label="Score" min="3" max="9"></crowd-slider>
  <crowd-classifier name="tone" categories="['good', 'bad']" header="Tone">
    <classification-target>Hello</classification-target>
  </crowd-classifier>
  <label>Size <select name="size"><option>small</option><option selected>medium</option></select></label>
  <label><input type="checkbox" name="agree"> agree</label>
  <label>City <input name="city" value="Bern"></label>
  <crowd-input name="must" label="Required word" required></crowd-input>
  <crowd-button form-action="reset">Start over</crowd-button>
  <button type="reset">Clear</button>
  <crowd-button id="plain">Nothing</crowd-button>
  <crowd-button form-action="submit" variant="primary">Send</crowd-button>
</crowd-form>
<p id="resets">0</p>
<script>
  document.querySelector("crowd-form").addEventListener("reset", function () {
    var count = document.getElementById("resets");
    count.textContent = String(Number(count.textContent) + 1);
  });
</script>
"""

PRESET = {
    "word": "preset",
    "tags": {"cat": True, "dog": False},
    "score": 3,
    "size": "medium",
    "agree": {"on": False},
    "city": "Bern",
}


def change_everything(frame) -> None:  # type: ignore[no-untyped-def]
    frame.get_by_label("A word").fill("changed")
    frame.get_by_label("A note").fill("a note")
    frame.get_by_role("checkbox", name="cat").click()
    frame.get_by_role("checkbox", name="dog").click()
    frame.get_by_role("slider", name="Score").press("End")
    frame.get_by_role("radio", name="bad").click()
    frame.get_by_label("Size").select_option("small")
    frame.get_by_label("agree").check()
    frame.get_by_label("City").fill("Lyon")


def test_reset_buttons_restore_the_preset_answers_and_submit_sends_them(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, BODY, height=900)
    frame, keys = hit.frame, hit.page.keyboard
    # The page has its own submit button: crowd-form adds none.
    expect(frame.get_by_role("button", name="Submit")).to_have_count(0)
    change_everything(frame)
    # Sending with the required field empty shows the problem and sends nothing.
    frame.get_by_role("button", name="Send").click()
    expect(frame.get_by_role("alert")).to_contain_text("required")
    # A crowd-button without form-action neither submits nor resets.
    frame.locator("#plain").click()
    expect(frame.get_by_label("A word")).to_have_value("changed")
    # Start over, by keyboard: every field is back to what the page preset, the problem is gone.
    tab_to(hit.page, frame.get_by_role("button", name="Start over"))
    keys.press("Enter")
    expect(frame.locator("#resets")).to_have_text("1")
    expect(frame.get_by_role("alert")).to_have_count(0)
    assert frame.locator("crowd-form").evaluate("f => f.value") == PRESET
    # The native reset button inside the crowd-form resets it too.
    change_everything(frame)
    frame.get_by_role("button", name="Clear").click()
    expect(frame.locator("#resets")).to_have_text("2")
    assert frame.locator("crowd-form").evaluate("f => f.value") == PRESET
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    frame.get_by_label("Required word").fill("yes")
    frame.get_by_role("radio", name="good").click()  # a classifier always needs a choice
    tab_to(hit.page, frame.get_by_role("button", name="Send"))
    keys.press("Enter")
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers"
    assert json.loads(text) == [{**PRESET, "tone": {"label": "good"}, "must": "yes"}]
    assert hit.blocked == []


def test_a_page_can_cancel_the_reset(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    body = BODY.replace('addEventListener("reset", function () {', "onreset = function (event) {")
    end = "count.textContent) + 1);\n  "
    body = body.replace(end + "});", end + "event.preventDefault(); };")
    hit = open_crowd_hit(offline, live_server, mturk, body, height=900)
    frame = hit.frame
    frame.get_by_label("A word").fill("kept")
    frame.get_by_role("button", name="Start over").click()
    expect(frame.locator("#resets")).to_have_text("1")
    expect(frame.get_by_label("A word")).to_have_value("kept")
    frame.get_by_label("Required word").fill("yes")
    frame.get_by_role("radio", name="good").click()
    frame.get_by_role("button", name="Send").click()
    ((_, text),) = answer_fields(hit.stored())
    assert json.loads(text)[0]["word"] == "kept"
    assert hit.blocked == []
