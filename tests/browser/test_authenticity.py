"""Typing records in Chromium: one worker types a `write` page, another pastes; the paster's work is held.

The page's typing record (``/static/authenticity.js``) travels with the answers
to the marketplace, comes back through the sync, and lives on the submission;
the review holds the pasted work for a person and its evidence page says why.
"""

from __future__ import annotations

import contextlib
import json
import uuid

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.wire.authenticity import API_MEMBER, FIELD, parse_summary
from tests.browser.test_crowd_form import answer_fields, offline, open_crowd_hit
from tests.helpers import launch_template_campaign, sign_up_in_browser
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_in_browser

pytestmark = pytest.mark.browser
__all__ = ["offline"]  # the fixture, imported for the crowd-element test

TYPED = [
    "A small red circle sits left of a blue square.",
    "Two green triangles point up above a yellow line.",
    "One purple square is drawn inside a larger circle.",
]
PASTED = [
    "Here we see an orange oval resting under three stars.",
    "The drawing holds a black arrow crossing a pink band.",
    "Grey dots form a ring around a single white diamond.",
]

# A paste as a person's Ctrl+V makes it, for a browser whose clipboard the test cannot reach:
# the paste event with the text, then the text inserted where the caret is.
_SYNTHETIC_PASTE = """(el, text) => {
    const data = new DataTransfer();
    data.setData("text/plain", text);
    const init = {clipboardData: data, bubbles: true, cancelable: true, composed: true};
    const event = new ClipboardEvent("paste", init);
    if (el.dispatchEvent(event)) {
        el.ownerDocument.execCommand("insertText", false, text);
    }
}"""


def _accept(page, base: str, worker: str, hit_id: str):  # type: ignore[no-untyped-def]
    sign_up_in_browser(page, base, worker)
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    frame = page.frame_locator("#hit-frame")
    frame.get_by_label("Your sentence for picture 1").wait_for()
    return frame


def _paste(page, field, text: str) -> None:  # type: ignore[no-untyped-def]
    """Paste ``text`` into ``field``: the real Ctrl+V when the clipboard works headless, else its events."""
    field.click()
    with contextlib.suppress(Exception):  # no clipboard in this browser: the same events, made by hand
        page.evaluate("t => navigator.clipboard.writeText(t)", text)
        page.keyboard.press("Control+V")
    if field.input_value() != text:
        field.fill("")
        field.evaluate(_SYNTHETIC_PASTE, text)
    assert field.input_value() == text


def _stored(sessions, campaign_id: int) -> dict[str, Submission]:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        rows = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        session.expunge_all()
    return {s.worker_id: s for s in rows}


def test_typed_and_pasted_pages_leave_different_records_and_the_paste_is_held(
    tmp_path, browser, page, live_server, market, mturk, requester_sessions
) -> None:
    name = f"auth-{uuid.uuid4().hex[:6]}"
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "write", hits=1, name=name
    )
    # The work page tells the worker what is recorded.
    typist_frame = _accept(page, live_server.url, f"{name}-typist", hit_ids[0])
    assert "What you type is never recorded" in page.locator("#typing-record").inner_text()
    for k, text in enumerate(TYPED):
        typist_frame.get_by_label(f"Your sentence for picture {k + 1}").click()
        page.keyboard.type(text, delay=70)  # about 14 keystrokes a second: a quick typist
    typist_frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")

    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        paster = context.new_page()
        paster.set_default_timeout(15_000)
        paster_frame = _accept(paster, live_server.url, f"{name}-paster", hit_ids[0])
        for k, text in enumerate(PASTED):
            _paste(paster, paster_frame.get_by_label(f"Your sentence for picture {k + 1}"), text)
        paster_frame.get_by_role("button", name="Submit").click()
        paster.wait_for_selector("#submitted")
    finally:
        context.close()

    # The marketplace holds each record beside the answer, which stays what MTurk would store.
    for hit_id in hit_ids:
        for assignment in mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]:
            assert FIELD not in assignment["Answer"]
        assert all(
            parse_summary(a.get(API_MEMBER)) for a in market.assignments_for_hit(hit_id, ["Submitted"])
        )
    review(requester_sessions, market)
    stored = _stored(requester_sessions, campaign_id)
    assert len(stored) == 2
    typist, pasted = _typist_and_paster(stored)

    typed_chars = sum(len(t) for t in TYPED)
    assert typist.answers == {"answers": TYPED}  # the record is not an answer
    t = typist.authenticity
    assert t is not None and parse_summary(json.dumps({"v": 1, **t})) == t
    assert t["chars"] == typed_chars and t["pastes"] == 0 and t["pasted"] == 0
    assert typed_chars <= t["keys"] <= typed_chars + 3
    assert t["fields"] == 3 and t["first_ms"] > 0 and t["typing_ms"] > 0

    pasted_chars = sum(len(t) for t in PASTED)
    assert pasted.answers == {"answers": PASTED}
    p = pasted.authenticity
    assert p is not None
    assert p["chars"] == pasted_chars and p["pastes"] == 3 and p["pasted"] == pasted_chars
    assert p["keys"] == 0  # Ctrl+V is a paste, not typing

    # Held for a person, on the paste signal; the typed work is not held on its record.
    assert pasted.decision == "held"
    assert pasted.evidence["held_for"] == "authenticity"
    assert pasted.evidence["authenticity"]["suspicious"] == ["paste"]
    assert (typist.evidence or {}).get("held_for") != "authenticity"
    assert "authenticity" not in (typist.evidence or {})

    staff_in_browser(page, live_server.url, requester_sessions)
    page.goto(f"{live_server.url}/dashboard/assignments/{pasted.assignment_id}")
    said = page.locator("#signals").inner_text()
    assert "Signal paste: most of the text was pasted into the page, not typed there" in said
    assert f"pasted {pasted_chars} of {pasted_chars} characters in 3 pastes" in said
    assert "never reject work on their own" in said
    page.goto(f"{live_server.url}/dashboard/assignments/{typist.assignment_id}")
    said = page.locator("#signals").inner_text()
    assert "Signal paste" not in said and f"{t['keys']} keystrokes" in said


def _typist_and_paster(stored: dict[str, Submission]) -> tuple[Submission, Submission]:
    typist = next(s for s in stored.values() if s.answers.get("answers") == TYPED)
    paster = next(s for s in stored.values() if s.answers.get("answers") == PASTED)
    return typist, paster


CROWD_BODY = """
<crowd-form>
  <crowd-text-area name="story" label="Your story" rows="3"></crowd-text-area>
  <crowd-input name="title" label="A title"></crowd-input>
</crowd-form>
"""


def test_typing_inside_crowd_elements_shadow_fields_is_counted_and_sent_beside_the_answer(
    offline, live_server, mturk, market
) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, CROWD_BODY)
    story, title = "A quiet fox crossed the frozen river.", "Fox"
    hit.frame.get_by_label("Your story").click()
    hit.page.keyboard.type(story, delay=40)
    hit.frame.get_by_label("A title").click()
    hit.page.keyboard.type(title, delay=40)
    answer = hit.submit()
    # The answer is what MTurk's crowd form would send, and nothing else.
    ((name, value),) = answer_fields(answer)
    assert name == "taskAnswers" and json.loads(value) == [{"story": story, "title": title}]
    (listed,) = market.assignments_for_hit(hit.hit_id, ["Submitted"])
    record = parse_summary(listed.get(API_MEMBER))
    assert record is not None
    typed = len(story) + len(title)
    assert record["chars"] == typed and record["keys"] >= typed and record["pastes"] == 0
    assert record["fields"] == 2  # the two fields inside the elements' shadow roots
