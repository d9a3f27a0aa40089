"""externalHIT_v1.js as MTurk's behaved: turkGetParam's raw values and turkSetAssignmentID's
named form and button, in an HTMLQuestion and on an ExternalQuestion page of another site.

Every request outside the loopback is refused (the ``offline`` fixture), so the
script that runs is hitforge's; answers are read back through boto3.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from flask import Flask, Response

from demo.runner import RunningServer, serve_in_thread
from hits.wire.documents import xml_to_answers
from tests.browser.test_crowd_form import accept, offline, stored_answer
from tests.helpers import hit_params
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # a fixture, used by name

# MTurk's script tag; a form of the page's own name and a button not called submitButton.
CUSTOM_FORM = """<!DOCTYPE html><html><head><meta charset="utf-8">
<script src="{script}"></script></head><body>
<p id="submit-to"></p><p id="missing"></p>
<form id="answers" method="post">
<input type="hidden" id="assignmentId" name="assignmentId">
<label for="note">Note</label> <input id="note" name="note">
<input type="submit" id="send" value="Send">
</form>
<script>
document.getElementById("submit-to").textContent = turkGetParam("turkSubmitTo", "none");
document.getElementById("missing").textContent = turkGetParam("nothing", "fallback");
turkSetAssignmentID("answers", "send");
</script></body></html>"""
MTURK_SCRIPT = "https://s3.amazonaws.com/mturk-public/externalHIT_v1.js"


def raw_param(url: str, name: str) -> str:
    """``name``'s value in ``url``'s query, as written (still URL-encoded)."""
    for pair in urlsplit(url).query.split("&"):
        key, _, value = pair.partition("=")
        if key == name:
            return value
    raise AssertionError(f"{name} not in {url}")


def test_turk_get_param_is_raw_and_a_named_form_submits(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(CUSTOM_FORM.format(script=MTURK_SCRIPT)))
    frame = accept(page, live_server.url, hit_id)
    frame_url = str(page.locator("#hit-frame").get_attribute("src"))
    # As MTurk's regex lookup: the value exactly as in the URL, percent-escapes and all.
    submit_to = raw_param(frame_url, "turkSubmitTo")
    assert "%3A%2F%2F" in submit_to
    assert frame.locator("#submit-to").inner_text() == submit_to
    assert frame.locator("#missing").inner_text() == "fallback"
    assert frame.locator("#assignmentId").input_value() == raw_param(frame_url, "assignmentId")
    frame.get_by_label("Note").fill("cats & dogs")
    frame.locator("#send").click()
    page.locator("#submitted-notice").wait_for()
    assert xml_to_answers(stored_answer(mturk, hit_id)) == {"note": "cats & dogs"}
    assert blocked == []


def test_preview_disables_the_named_button_with_mturks_words(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, _ = offline
    hit_id = create_hit(mturk, html_question(CUSTOM_FORM.format(script=MTURK_SCRIPT)))
    accept(page, live_server.url, hit_id, loaded=False)  # signs up; the preview is what is looked at
    page.goto(f"{live_server.url}/hits/{hit_id}")
    preview = page.frame_locator("#hit-frame")
    button = preview.locator("#send")
    assert button.is_disabled()
    assert button.get_attribute("value") == "You must ACCEPT the HIT before you can submit the results."


@pytest.fixture
def other_site() -> Iterator[tuple[RunningServer, dict[str, str]]]:
    """The requester's own web server: serves ``pages[name]`` at ``/name``."""
    pages: dict[str, str] = {}
    app = Flask("requester-site")
    app.add_url_rule("/<name>", "page", lambda name: Response(pages[name], mimetype="text/html"))
    running = serve_in_thread(app)
    yield running, pages
    running.stop()


CROWD_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8">
<script src="{script}"></script></head><body>
<crowd-form><crowd-input name="word" label="A word"></crowd-input></crowd-form>
</body></html>"""


@pytest.mark.parametrize("kind", ["external-hit", "crowd-form"])
def test_an_external_question_page_loading_hitforges_scripts_submits_to_turk_submit_to(  # type: ignore[no-untyped-def]
    offline, live_server, mturk, other_site, kind
) -> None:
    page, blocked = offline
    running, pages = other_site
    if kind == "external-hit":
        pages[kind] = CUSTOM_FORM.format(script=f"{live_server.url}/static/mturk/externalHIT_v1.js")
    else:
        pages[kind] = CROWD_PAGE.format(script=f"{live_server.url}/static/crowd/crowd-html-elements.js")
    url = f"http://localhost:{running.server.port}/{kind}"
    hit_id = mturk.create_hit(**hit_params(url, MaxAssignments=1))["HIT"]["HITId"]
    frame = accept(page, live_server.url, hit_id)
    if kind == "external-hit":
        frame.get_by_label("Note").fill("from afar")
        frame.locator("#send").click()
        expected = {"note": "from afar"}
    else:
        frame.get_by_label("A word").fill("afar")
        frame.get_by_role("button", name="Submit").click()
        expected = {"taskAnswers": '[{"word":"afar"}]'}
    page.locator("#submitted-notice").wait_for()
    assert xml_to_answers(stored_answer(mturk, hit_id)) == expected
    assert blocked == []
