"""A HIT page that loads jQuery and jQuery UI from their public CDNs, worked offline in Chromium.

As MTurk requesters wrote them: jQuery UI's script and a theme's stylesheet from
code.jquery.com or Google's CDN, a slider and a datepicker writing into hidden inputs
of the mturk_form. They only work if hitforge served its copies; the answer is read
through boto3 ``get_assignment``.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from hits.wire.documents import xml_to_answers
from server.cdn.cdn_map import load_cdn_map
from tests.browser.test_crowd_form import accept, offline, stored_answer
from tests.server.worker_helpers import create_hit, html_question, mturk_form_page

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, used by name below

CODE_JQUERY = """
<link rel="stylesheet" href="https://code.jquery.com/ui/1.12.1/themes/smoothness/jquery-ui.css">
<script src="https://code.jquery.com/jquery-1.12.4.min.js"></script>
<script src="https://code.jquery.com/ui/1.12.1/jquery-ui.min.js"></script>
"""
GOOGLE = """
<link rel="stylesheet" href="//ajax.googleapis.com/ajax/libs/jqueryui/1.13.2/themes/base/jquery-ui.css">
<script src="https://ajax.googleapis.com/ajax/libs/jquery/3.6.0/jquery.min.js"></script>
<script src="https://ajax.googleapis.com/ajax/libs/jqueryui/1.13.2/jquery-ui.min.js"></script>
"""


def jquery_ui_page(head: str) -> str:
    """An MTurk-style page: a slider and a datepicker, each writing a hidden input of mturk_form."""
    return mturk_form_page(
        """<p>How sure are you? <span id="shown">5</span></p>
<div id="confidence"></div>
<input type="hidden" name="confidence" id="confidence-value" value="5">
<p><label for="day">When was the photo taken?</label> <input id="day" readonly></p>
<input type="hidden" name="day" id="day-value">
<input type="hidden" name="versions" id="versions">
<input type="submit" id="submitButton" value="Submit">""",
        head,
        """  $(function () {
    $("#confidence").slider({min: 1, max: 10, value: 5, slide: function (event, ui) {
      $("#shown").text(ui.value);
      $("#confidence-value").val(ui.value);
    }});
    $("#day").datepicker({dateFormat: "yy-mm-dd", defaultDate: "2024-03-14", altField: "#day-value",
                           altFormat: "dd/mm/yy"});
    $("#versions").val("jQuery " + $.fn.jquery + ", jQuery UI " + $.ui.version);
  });""",
    )


@pytest.mark.parametrize(
    ("head", "versions"),
    [(CODE_JQUERY, "jQuery 1.12.4, jQuery UI 1.12.1"), (GOOGLE, "jQuery 3.7.1, jQuery UI 1.13.3")],
    ids=["code.jquery.com", "googleapis"],
)
def test_jquery_ui_widgets_render_and_submit_offline(offline, live_server, mturk, head, versions) -> None:  # type: ignore[no-untyped-def]
    assert not load_cdn_map().missing, "CDN libraries not installed: run make or scripts/cdn-libraries.sh"
    page, blocked = offline
    failed: list[str] = []  # the theme's icon images too must be served
    page.on("response", lambda response: failed.append(response.url) if response.status >= 400 else None)
    hit_id = create_hit(mturk, html_question(jquery_ui_page(head), height=700))
    frame = accept(page, live_server.url, hit_id)
    # The theme applies: the slider's handle is a styled, focusable jQuery UI handle.
    handle = frame.locator("#confidence .ui-slider-handle")
    expect(handle).to_be_visible()
    assert handle.evaluate("h => getComputedStyle(h).position") == "absolute"
    assert frame.locator("#confidence").evaluate("s => getComputedStyle(s).position") == "relative"
    # The slider by keyboard: Home to 1, then three steps up.
    handle.focus()
    for key in ["Home", "ArrowRight", "ArrowRight", "ArrowUp"]:
        handle.press(key)
    expect(frame.locator("#shown")).to_have_text("4")
    # The datepicker opens on the page's default month; a day is picked with the mouse.
    frame.locator("#day").click()
    calendar = frame.locator("#ui-datepicker-div")
    expect(calendar).to_be_visible()
    expect(calendar.locator(".ui-datepicker-title")).to_have_text("March 2024")
    next_icon = calendar.locator(".ui-datepicker-next .ui-icon")
    assert "ui-icons" in next_icon.evaluate("i => getComputedStyle(i).backgroundImage")
    assert (
        next_icon.evaluate(
            """async i => {
            const url = getComputedStyle(i).backgroundImage.slice(5, -2);
            const image = new Image();
            image.src = url;
            await image.decode();
            return image.naturalWidth;
        }"""
        )
        == 256
    )
    calendar.locator("a", has_text="21").click()
    expect(frame.locator("#day")).to_have_value("2024-03-21")
    frame.locator("#submitButton").click()
    page.locator("#submitted-notice").wait_for()
    answers = xml_to_answers(stored_answer(mturk, hit_id))
    assert answers == {"confidence": "4", "day": "21/03/2024", "versions": versions}
    assert blocked == [] and failed == []
