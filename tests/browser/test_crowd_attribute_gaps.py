"""Documented attributes of AWS's crowd elements that hitforge had left out, worked in Chromium, offline.

- crowd-slider: ``secondary-progress`` drawn in the track in the page's
  ``--crowd-slider-secondary-color``; ``required``; no ``value`` starts at ``min``.
- crowd-input ``type="file"`` (AWS names it as an example type): the input's
  ``accept`` reaches the chooser, and the answer is the name the browser gives.
- crowd-fab and crowd-icon-button: ``title`` names the button, ``icon`` may be
  an image URL, a fab's ``label`` stands in for an icon, and ``disabled`` stops
  the clicks AWS's examples listen for on the element.
- crowd-text-area grows with its text (up to ``max-rows``), as AWS documents.
- crowd-instructions: AWS's default link text and its three tabbed pages.
- crowd-toast: only one shows at a time.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

SLIDERS = """
<style>crowd-slider { --crowd-slider-secondary-color: rgb(255, 0, 0); }</style>
<crowd-form>
  <crowd-slider name="watched" label="Watched" min="0" max="200" value="50" secondary-progress="150">
  </crowd-slider>
  <crowd-slider name="rating" label="Rating" min="1" max="7" required></crowd-slider>
  <crowd-slider name="untouched" label="Untouched" min="10" max="20"></crowd-slider>
</crowd-form>
"""


def share_of_track(slider, part: str) -> float:  # type: ignore[no-untyped-def]
    """How much of the slider's track ``part`` covers (0 to 1), as drawn."""
    track = slider.locator(".track").bounding_box()
    bar = slider.locator(part).bounding_box()
    assert track is not None and bar is not None
    return float(bar["width"] / track["width"])


def test_slider_secondary_progress_required_and_default_value(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, SLIDERS)
    watched = hit.frame.locator("crowd-slider[name=watched]")
    # secondary-progress 150 of 0-200 covers three quarters of the track, in the page's colour.
    expect(watched.locator(".secondary")).to_be_visible()
    assert share_of_track(watched, ".secondary") == pytest.approx(0.75, abs=0.01)
    assert share_of_track(watched, ".primary") == pytest.approx(0.25, abs=0.01)
    colour = "e => getComputedStyle(e).backgroundColor"
    assert watched.locator(".secondary").evaluate(colour) == "rgb(255, 0, 0)"
    # A page's script moves it as a video buffers (the property reflects the attribute).
    watched.evaluate("e => { e.secondaryProgress = 200; }")
    assert share_of_track(watched, ".secondary") == pytest.approx(1.0, abs=0.01)
    # required: an untouched slider without a preset value stops the submit.
    hit.frame.get_by_role("button", name="Submit").click()
    expect(hit.frame.get_by_role("alert")).to_contain_text("Rating")
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    hit.frame.get_by_role("slider", name="Rating").press("ArrowRight")
    ((_, text),) = answer_fields(hit.submit())
    # Without a value a slider starts at its min, as AWS's did (a native range starts half way).
    assert json.loads(text) == [{"watched": 50, "rating": 2, "untouched": 10}]
    assert hit.blocked == []


FILE_INPUT = """
<crowd-form answer-format="flatten-objects">
  <crowd-input name="photo" type="file" label="Your photo" accept="image/*"></crowd-input>
  <crowd-input name="caption" label="Caption"></crowd-input>
</crowd-form>
"""


def test_crowd_input_type_file_answers_the_name_the_browser_gives(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, FILE_INPUT)
    chooser = hit.frame.get_by_label("Your photo")
    expect(chooser).to_have_attribute("type", "file")
    expect(chooser).to_have_attribute("accept", "image/*")
    chooser.set_input_files({"name": "holiday.png", "mimeType": "image/png", "buffer": b"\x89PNG\r\n\x1a\n"})
    hit.frame.get_by_label("Caption").fill("a beach")
    # crowd-form posts text only, so MTurk stored what the browser's file input reads: the
    # "C:\fakepath\" name browsers give a page, never the file's bytes.
    fields = sorted(answer_fields(hit.submit()))
    assert fields == [("caption", "a beach"), ("photo", "C:\\fakepath\\holiday.png")]
    assert hit.blocked == []


ICON = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='8' height='8'/%3E"
ISSUE_BUTTONS = f"""
<crowd-form>
  <crowd-input label="Report an Issue" name="template-issues"></crowd-input>
  <crowd-fab id="report" icon="report-problem" title="Issue"></crowd-fab>
  <crowd-fab id="custom" icon="{ICON}" title="Custom"></crowd-fab>
  <crowd-fab id="letter" label="R"></crowd-fab>
  <crowd-icon-button id="off" icon="report-problem" title="Off" disabled></crowd-icon-button>
</crowd-form>
<script>
  // As AWS's crowd-fab and crowd-icon-button examples do: a click on the element submits.
  [report, off].forEach(function (button) {{
    button.addEventListener("click", function () {{ document.querySelector("crowd-form").submit(); }});
  }});
</script>
"""


def test_fab_and_icon_button_title_icon_url_label_and_disabled(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, ISSUE_BUTTONS)
    frame = hit.frame
    # title names the button (the tooltip AWS documents); an icon that is a URL is an image.
    expect(frame.get_by_role("button", name="Issue")).to_have_count(1)
    expect(frame.locator("#custom button img")).to_have_attribute("src", ICON)
    # label: one character shown instead of an icon.
    expect(frame.get_by_role("button", name="R")).to_have_text("R")
    frame.get_by_label("Report an Issue").fill("the picture is blank")
    # disabled: neither a click nor a script's click() reaches the page's listener.
    off = frame.locator("#off")
    expect(frame.get_by_role("button", name="Off")).to_be_disabled()
    box = off.bounding_box()
    assert box is not None
    hit.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    off.evaluate("e => e.click()")
    hit.page.wait_for_timeout(500)
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    frame.get_by_role("button", name="Issue").click()
    ((_, text),) = answer_fields(hit.stored())
    assert json.loads(text) == [{"template-issues": "the picture is blank"}]
    assert hit.blocked == []


TEXT_AREAS = """
<crowd-form>
  <crowd-text-area name="transcription" label="Transcription" rows="2"></crowd-text-area>
  <crowd-text-area name="notes" label="Notes" rows="2" max-rows="3"></crowd-text-area>
</crowd-form>
"""


def test_text_area_grows_with_its_text_up_to_max_rows(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, TEXT_AREAS)
    five_lines = "one\ntwo\nthree\nfour\nfive"
    for label in ["Transcription", "Notes"]:
        hit.frame.get_by_label(label).fill(five_lines)
    # Without max-rows it grows to show every line, as AWS's did; with it, it stops there and scrolls.
    expect(hit.frame.get_by_label("Transcription")).to_have_attribute("rows", "5")
    expect(hit.frame.get_by_label("Notes")).to_have_attribute("rows", "3")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"transcription": five_lines, "notes": five_lines}]
    assert hit.blocked == []


INSTRUCTIONS = """
<crowd-form>
  <crowd-instructions>
    <short-summary><p>Write three words about the image.</p></short-summary>
    <detailed-instructions><p>Name what a friend would need to know.</p></detailed-instructions>
    <positive-example><p>Highway, cars, gas station</p></positive-example>
    <negative-example><p>Trees, outside, daytime</p></negative-example>
  </crowd-instructions>
  <crowd-input name="tag1" label="Word 1"></crowd-input>
</crowd-form>
"""


def test_instructions_default_link_text_and_three_tabbed_pages(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, INSTRUCTIONS)
    frame = hit.frame
    # AWS's default link text, and its three pages: Summary, Detailed Instructions, Examples
    # (the regions are the page's own elements, shown in the dialog's pages).
    frame.get_by_role("button", name="Click for instructions").click()
    dialog = frame.get_by_role("dialog", name="Instructions")
    expect(dialog.get_by_role("tab")).to_have_text(["Summary", "Detailed Instructions", "Examples"])
    expect(frame.get_by_text("Write three words about the image.")).to_be_visible()
    expect(frame.get_by_text("Name what a friend would need to know.")).to_be_hidden()
    dialog.get_by_role("tab", name="Summary").press("ArrowRight")
    expect(dialog.get_by_role("tab", name="Detailed Instructions")).to_be_focused()
    expect(frame.get_by_text("Name what a friend would need to know.")).to_be_visible()
    expect(frame.get_by_text("Write three words about the image.")).to_be_hidden()
    dialog.get_by_role("tab", name="Examples").click()
    expect(frame.get_by_text("Highway, cars, gas station")).to_be_visible()
    expect(frame.get_by_text("Trees, outside, daytime")).to_be_visible()
    hit.page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    frame.get_by_label("Word 1").fill("highway")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"tag1": "highway"}]
    assert hit.blocked == []


TOASTS = """
<crowd-form>
  <crowd-toast id="first" duration="0" text="First note"></crowd-toast>
  <crowd-toast id="second" duration="800" text="Second note"></crowd-toast>
  <crowd-input name="website" label="Website"></crowd-input>
</crowd-form>
"""


def test_only_one_toast_shows_at_a_time(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, TOASTS)
    frame = hit.frame
    frame.locator("#first").evaluate("e => e.show()")
    expect(frame.get_by_text("First note")).to_be_visible()
    # Opening another closes the first, as AWS documents; the second goes after its duration.
    frame.locator("#second").evaluate("e => e.show()")
    expect(frame.get_by_text("Second note")).to_be_visible()
    expect(frame.get_by_text("First note")).to_be_hidden()
    expect(frame.get_by_text("Second note")).to_be_hidden()
    frame.get_by_label("Website").fill("http://example.com")
    ((_, text),) = answer_fields(hit.submit())
    assert json.loads(text) == [{"website": "http://example.com"}]
    assert hit.blocked == []
