"""HTMLQuestion and QuestionForm HITs worked in Chromium, created through boto3."""

from __future__ import annotations

import uuid

import pytest

from hits.wire.documents import xml_to_answers
from hits.wire.xml_schemas import validate_answers
from tests.helpers import sign_up_in_browser
from tests.server.worker_helpers import (
    MTURK_HTML,
    create_hit,
    free_text,
    html_question,
    question_form,
    selection,
)

pytestmark = pytest.mark.browser


def sign_up(page, base: str) -> None:  # type: ignore[no-untyped-def]
    sign_up_in_browser(page, base, f"browser-{uuid.uuid4().hex[:8]}")


def test_htmlquestion_runs_sandboxed_with_the_local_external_hit_script(page, live_server, mturk) -> None:
    hit_id = create_hit(mturk, html_question(MTURK_HTML), MaxAssignments=2)
    sign_up(page, live_server.url)
    # In preview the stand-in script disables submitting, as MTurk's did.
    page.goto(f"{live_server.url}/hits/{hit_id}")
    preview = page.frame_locator("#hit-frame")
    assert preview.locator("#submitButton").is_disabled()
    assert preview.locator("#assignmentId").input_value() == "ASSIGNMENT_ID_NOT_AVAILABLE"
    page.goto(live_server.url + "/")
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    frame = page.frame_locator("#hit-frame")
    frame.get_by_label("Describe the picture").fill("Two <cats> & a dog")
    frame.get_by_label("cat").check()
    frame.get_by_label("dog").check()
    assignment_id = frame.locator("#assignmentId").input_value()
    assert assignment_id and assignment_id != "ASSIGNMENT_ID_NOT_AVAILABLE"
    # The requester's script runs in an opaque origin: the site's pages and cookies are out of reach.
    body = frame.locator("body")
    assert body.evaluate("() => self.origin") == "null"
    reach = "() => { try { return window.parent.document.title; } catch (e) { return 'blocked'; } }"
    assert body.evaluate(reach) == "blocked"
    frame.locator("#submitButton").click()
    # The frame shows "submitted" and, as it cannot navigate the page, tells the work page,
    # which moves on to the HIT list.
    page.locator("#submitted-notice").wait_for()
    assert page.url.startswith(live_server.url + "/?")
    (stored,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert stored["AssignmentId"] == assignment_id
    validate_answers(stored["Answer"])
    assert xml_to_answers(stored["Answer"]) == {"caption": "Two <cats> & a dog", "tags": "cat|dog"}


def test_question_form_by_keyboard_and_mouse(page, live_server, mturk) -> None:
    form = question_form(
        selection("mood", "How does the picture feel?", [("calm", "Calm"), ("busy", "Busy")]),
        selection("size", "How big is the dog?", [("s", "Small"), ("l", "Large")], style="dropdown"),
        free_text("note", "Anything else to say?", '<Length maxLength="40"/>', required=False),
        free_text("count", "How many animals are there?", '<IsNumeric minValue="0" maxValue="50"/>'),
    )
    hit_id = create_hit(mturk, form)
    sign_up(page, live_server.url)
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    page.get_by_role("radiogroup", name="How does the picture feel?").get_by_label("Busy").check()
    page.get_by_label("How many animals are there?").fill("lots")
    page.get_by_role("button", name="Submit").click()
    summary = page.locator("#error-summary")
    assert "Please fix 2 problems" in summary.inner_text()
    assert page.get_by_label("Busy").is_checked()
    assert page.get_by_label("How many animals are there?").input_value() == "lots"
    # Fix by keyboard: the radio group answers to arrow keys, the dropdown to typing.
    page.get_by_label("Busy").focus()
    page.keyboard.press("ArrowUp")
    assert page.get_by_label("Calm").is_checked()
    page.get_by_label("How big is the dog?").select_option("l")
    page.get_by_label("How many animals are there?").fill("3")
    page.get_by_label("Anything else to say?").fill("A fine dog")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")
    (stored,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert xml_to_answers(stored["Answer"]) == {
        "mood": "calm",
        "size": "l",
        "note": "A fine dog",
        "count": "3",
    }
