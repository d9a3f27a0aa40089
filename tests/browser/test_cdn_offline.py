"""HIT pages that load jQuery, Bootstrap and Font Awesome from public CDNs, worked in
Chromium with every request outside the loopback refused.

The pages are written as requesters wrote them for MTurk: CDN URLs (some with an
``integrity`` hash of the CDN's file), a Bootstrap component driven by jQuery, icon
fonts referenced from the stylesheets. They only work if hitforge served its copies;
the answer is read back through boto3 ``get_assignment``.
"""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from playwright.sync_api import expect

from hits.wire.documents import xml_to_answers
from server.cdn.cdn_map import load_cdn_map
from tests.browser.test_crowd_form import accept, offline, stored_answer
from tests.server.worker_helpers import create_hit, html_question, mturk_form_page

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, used by name below

# A well-formed hash that matches no file: a browser that kept it would refuse the script.
STALE_SRI = "sha384-" + base64.b64encode(hashlib.sha384(b"the CDN's own build").digest()).decode()

CLASSIC_HEAD = f"""
<link href="https://s3.amazonaws.com/mturk-public/bs30/css/bootstrap.min.css" rel="stylesheet" />
<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/font-awesome/4.7.0/css/font-awesome.min.css">
<script src="https://code.jquery.com/jquery-3.5.1.min.js" integrity="{STALE_SRI}"
        crossorigin="anonymous"></script>
<script src="//maxcdn.bootstrapcdn.com/bootstrap/3.3.7/js/bootstrap.min.js"></script>
"""
MODERN_HEAD = f"""
<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.0/dist/css/bootstrap.min.css"
      integrity="{STALE_SRI}" crossorigin="anonymous">
<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css">
<script src="https://ajax.googleapis.com/ajax/libs/jquery/3.6.0/jquery.min.js"></script>
<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.0/dist/js/bootstrap.bundle.min.js"></script>
<script src="https://cdn.example.org/analytics/tracker.js"></script>
"""
# (toggle attribute, the class a shown collapse gets, the icon, the fonts that load, a button's colour)
CLASSIC = (
    "data-toggle",
    "in",
    "fa fa-star",
    ["FontAwesome: loaded", "Glyphicons Halflings: loaded"],
    "rgb(51, 122, 183)",
)
MODERN = ("data-bs-toggle", "show", "fa-solid fa-star", ["Font Awesome 6 Free: loaded"], "rgb(13, 110, 253)")


def mturk_page(head: str, toggle: str, icon: str) -> str:
    """An MTurk-style HTMLQuestion page: its form, a collapse opened by a button, jQuery filling a field."""
    return mturk_form_page(
        f"""<div class="container">
  <button type="button" id="reveal" class="btn btn-primary" {toggle}="collapse" data-target="#question"
          data-bs-target="#question"><i id="icon" class="{icon}"></i> Show the question</button>
  <div id="question" class="collapse">
    <label for="caption">Describe the picture</label>
    <input id="caption" name="caption" class="form-control"> <span class="glyphicon glyphicon-ok"></span>
  </div>
  <input type="hidden" name="jquery" id="jquery">
  <input type="submit" id="submitButton" class="btn btn-success" value="Submit">
</div>""",
        head,
        """  $(function () { $("#jquery").val("jQuery " + $.fn.jquery); });""",
    )


@pytest.mark.parametrize(
    ("head", "expected"),
    [(CLASSIC_HEAD, CLASSIC), (MODERN_HEAD, MODERN)],
    ids=["bootstrap3-fontawesome4", "bootstrap5-fontawesome6"],
)
def test_cdn_page_renders_and_submits_offline(offline, live_server, mturk, head, expected) -> None:  # type: ignore[no-untyped-def]
    assert not load_cdn_map().missing, "CDN libraries not installed: run make or scripts/cdn-libraries.sh"
    page, blocked = offline
    toggle, shown, icon, fonts, primary = expected
    hit_id = create_hit(mturk, html_question(mturk_page(head, toggle, icon)))
    frame = accept(page, live_server.url, hit_id)
    # Bootstrap's stylesheet applies, and its collapse (driven by jQuery in 3.x) works.
    button = frame.locator("#reveal")
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") == primary
    question = frame.locator("#question")
    assert not question.is_visible()
    button.click()
    question.locator("#caption").wait_for(state="visible")
    expect(question).to_have_class(re.compile(rf"(^|\s){shown}(\s|$)"))  # after the transition
    # The icon fonts referenced from the stylesheets loaded (CORS requests from the sandboxed frame).
    faces = frame.locator("body").evaluate(
        """async () => {
            await document.fonts.ready;
            return [...document.fonts].map(f => f.family.replace(/"/g, "") + ": " + f.status);
        }""",
    )
    assert set(fonts) <= {face for face in faces if face.endswith(": loaded")}, faces
    icon_font = frame.locator("#icon").evaluate("i => getComputedStyle(i, '::before').fontFamily")
    assert fonts[0].split(":")[0] in icon_font
    frame.get_by_label("Describe the picture").fill("A cat on a mat")
    frame.locator("#submitButton").click()
    page.locator("#submitted-notice").wait_for()
    answers = xml_to_answers(stored_answer(mturk, hit_id))
    jquery_version = "jQuery 3.7.1"  # 3.5.1 and 3.6.0 were asked for: the nearest 3.x installed
    assert answers == {"caption": "A cat on a mat", "jquery": jquery_version}
    # Nothing went to a CDN; only a script that no map serves was tried (and the page worked without it).
    assert blocked in ([], ["https://cdn.example.org/analytics/tracker.js"])
    assert ("cdn.example.org" in head) == bool(blocked)
