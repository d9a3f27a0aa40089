"""Documented attributes of AWS's crowd elements that hitforge had left out, worked in Chromium, offline.

- crowd-slider: ``secondary-progress`` drawn in the track in the page's
  ``--crowd-slider-secondary-color``; ``required``; no ``value`` starts at ``min``.
- crowd-input ``type="file"`` (AWS names it as an example type): the input's
  ``accept`` reaches the chooser, and the answer is the name the browser gives.
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
