"""Malformed HIT pages of the kinds real MTurk pages have, worked offline in Chromium.

The reference (mturk-crowd-elements.md, item 4) lists unclosed custom-element regions,
inputs outside the crowd-form and libraries loaded in the wrong order; pages pasted as a
fragment, with no <html>, <head> or <body>, are common too. Each renders and submits as
on MTurk (the browser repairs the markup the same way there); answers through boto3.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import (
    AWS_SCRIPT,
    CrowdHit,
    accept,
    answer_fields,
    offline,
    open_crowd_hit,
)
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

# No region is closed, nor the classifier: </crowd-form> closes them all, as the parser does on MTurk.
UNCLOSED = """
<crowd-form>
  <crowd-classifier name="tone" categories="['Positive', 'Negative']" header="What is the tone?">
    <classification-target><p>I love this phone
    <short-instructions>Pick the tone of the review
    <full-instructions header="How to judge">Read it all
  <crowd-input name="why" label="Why?">
</crowd-form>
"""


def test_unclosed_regions_render_and_submit(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, UNCLOSED, height=700)
    frame = hit.frame
    expect(frame.get_by_text("I love this phone")).to_be_visible()
    frame.get_by_role("radio", name="Negative").click()
    frame.get_by_label("Why?").fill("sarcasm")
    ((name, text),) = answer_fields(hit.submit())
    assert name == "taskAnswers"
    assert json.loads(text) == [{"tone": {"label": "Negative"}, "why": "sarcasm"}]
    assert hit.blocked == []


OUTSIDE = """
<p><label>Your name <input name="before"></label></p>
<crowd-input name="outside" label="Outside the form"></crowd-input>
<crowd-form answer-format="flatten-objects">
  <crowd-input name="inside" label="Inside the form"></crowd-input>
</crowd-form>
<crowd-checkbox name="late" checked>late</crowd-checkbox>
"""


def test_inputs_outside_the_crowd_form_are_not_sent(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, OUTSIDE)
    frame = hit.frame
    frame.get_by_label("Your name").fill("Ann")
    frame.get_by_label("Outside the form").fill("out")
    frame.get_by_label("Inside the form").fill("in")
    # A crowd-form answers for what it holds, as AWS's did: the fields around it go nowhere.
    assert answer_fields(hit.submit()) == [("inside", "in")]
    assert hit.blocked == []


# The page's script runs before hitforge's crowd script (loaded at the end of the body): it sets
# properties on elements that are not upgraded yet, which the elements must take over once defined.
EARLY_SCRIPT = """
<crowd-form>
  <crowd-input name="word" label="A word"></crowd-input>
  <crowd-checkbox name="agree" value="yes">I agree</crowd-checkbox>
  <crowd-slider name="score" label="Score" min="1" max="10"></crowd-slider>
  <crowd-text-area name="note" label="A note"></crowd-text-area>
</crowd-form>
<script>
  document.querySelector("crowd-input").value = "prefilled";
  document.querySelector("crowd-checkbox").checked = true;
  document.querySelector("crowd-slider").value = 7;
  document.querySelector("crowd-text-area").value = "line one";
</script>
"""


def test_properties_set_before_the_crowd_script_loads_are_kept(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, EARLY_SCRIPT, script_attrs=" end")
    frame = hit.frame
    expect(frame.get_by_label("A word")).to_have_value("prefilled")
    expect(frame.get_by_role("checkbox", name="I agree")).to_have_attribute("aria-checked", "true")
    expect(frame.get_by_role("slider", name="Score")).to_have_value("7")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"word": "prefilled", "agree": {"yes": True}, "score": 7, "note": "line one"}]
    assert hit.blocked == []


FRAGMENT = f"""<script src="{AWS_SCRIPT}"></script>
<crowd-form>
  <crowd-input name="caption" label="Describe the picture" required></crowd-input>
</crowd-form>"""


def test_a_fragment_without_html_head_or_body(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(FRAGMENT))
    hit = CrowdHit(page, accept(page, live_server.url, hit_id), hit_id, blocked, mturk)
    hit.frame.get_by_label("Describe the picture").fill("a cat")
    assert answer_fields(hit.submit(by_keyboard=True)) == [("taskAnswers", '[{"caption":"a cat"}]')]
    assert hit.blocked == []
