"""Every spelling of MTurk's and AWS's script URLs that HIT pages use gets hitforge's copy.

Pages written for MTurk load its scripts by full URL, by ``http:`` or by a
protocol-relative URL (``//host/path``, which inherits the page's scheme: on
hitforge's plain-HTTP worker site that is ``http://assets.crowd.aws/...``).
Each page is worked in Chromium with every non-loopback request refused, so a
spelling the worker site does not rewrite leaves the page without its script.
"""

from __future__ import annotations

import json

import pytest

from hits.wire.documents import xml_to_answers
from tests.browser.test_crowd_form import accept, answer_fields, offline, open_crowd_hit, stored_answer
from tests.server.worker_helpers import MTURK_HTML, create_hit, html_question

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for this module's tests

MTURK_SCRIPT = "https://s3.amazonaws.com/mturk-public/externalHIT_v1.js"


@pytest.mark.parametrize(
    "script",
    [
        "//s3.amazonaws.com/mturk-public/externalHIT_v1.js",
        "//mturk-public.s3.amazonaws.com/externalHIT_v1.js",
        "http://s3.amazonaws.com/mturk-public/externalHIT_v1.js",
    ],
)
def test_external_hit_script_by_any_spelling(offline, live_server, mturk, script) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    assert MTURK_SCRIPT in MTURK_HTML
    hit_id = create_hit(mturk, html_question(MTURK_HTML.replace(MTURK_SCRIPT, script)))
    frame = accept(page, live_server.url, hit_id)
    frame.get_by_label("Describe the picture").fill("A cat")
    frame.get_by_label("dog").check()
    frame.locator("#submitButton").click()
    page.locator("#submitted-notice").wait_for()
    assert xml_to_answers(stored_answer(mturk, hit_id)) == {"caption": "A cat", "tags": "dog"}
    assert blocked == []


CROWD_BODY = '<crowd-form><crowd-input name="word" label="A word"></crowd-input></crowd-form>'


@pytest.mark.parametrize(
    "script",
    [
        "//assets.crowd.aws/crowd-html-elements.js",
        "//assets.crowd.aws/crowd-html-elements-without-ce-polyfill.js",
        "http://assets.crowd.aws/crowd-html-elements-without-ce-polyfill.js",
    ],
)
def test_crowd_elements_script_by_any_spelling(offline, live_server, mturk, script) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, CROWD_BODY, script=script)
    frame = hit.frame
    frame.get_by_label("A word").fill("owl")
    ((name, text),) = answer_fields(hit.submit())
    assert (name, json.loads(text)) == ("taskAnswers", [{"word": "owl"}])
    assert hit.blocked == []
