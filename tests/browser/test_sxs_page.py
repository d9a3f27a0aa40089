"""The sxs page in headless Chromium, worked by keyboard alone: five metrics per picture, errors, submit."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates.sxs import METRICS, SCALE
from tests.helpers import accept_in_browser, launch_template_campaign

pytestmark = pytest.mark.browser


def _choose(page: Page, value: int) -> None:
    """On a radio group that has the focus and nothing chosen: Space takes the first, arrows move on."""
    page.keyboard.press("Space")
    for _ in range(value + 2):
        page.keyboard.press("ArrowRight")


def test_sxs_page_by_keyboard_keeps_choices_on_error_and_stores_item_terms(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "sxs", name="br-sxs"
    )
    frame = accept_in_browser(page, live_server.url, "sxs-worker", hit_ids[0])
    items = frame.locator("fieldset.sxs-item")
    items.first.wait_for()
    count = items.count()
    assert frame.get_by_role("heading", name="Left description").count() == count
    # Each question is a labelled radio group of the five choices.
    group = frame.get_by_role("radiogroup", name="Human-likeness, picture 1")
    assert [
        group.get_by_role("radio").nth(k).evaluate("r => r.labels[0].innerText.trim()") for k in range(5)
    ] == [text for _, text in SCALE]

    wanted = {(s, m): (s + k) % 5 - 2 for s in range(count) for k, m in enumerate(METRICS)}
    last = (count - 1, list(METRICS)[-1])
    # By keyboard only: focus the first question, then Tab from group to group.
    frame.get_by_role("radiogroup", name="Comprehensiveness, picture 1").get_by_role("radio").first.focus()
    for (slot, metric), value in wanted.items():
        if (slot, metric) != last:  # leave the very last question open
            _choose(page, value)
        page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.tagName") == "IFRAME"
    frame.get_by_role("button", name="Submit").press("Enter")
    summary = frame.locator("#error-summary").inner_text()
    assert "Please fix 1 problem" in summary and f"Picture {count}: choose for Human-likeness" in summary
    items = frame.locator("fieldset.sxs-item")
    for (slot, metric), value in wanted.items():
        if (slot, metric) != last:  # everything chosen is still chosen
            checked = items.nth(slot).locator(f'input[name="sxs-{slot}-{metric}"]:checked')
            assert checked.get_attribute("value") == str(value)
    open_group = frame.get_by_role("radiogroup", name=f"Human-likeness, picture {count}")
    open_group.get_by_role("radio").first.focus()
    _choose(page, wanted[last])
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Tab from the last question lands on Submit
    page.wait_for_selector("#submitted")

    with session_scope(requester_sessions) as session:
        (submission,) = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        published = session.get(PublishedHIT, submission.published_hit_id)
        assert published is not None
        left = {
            a.position: a.arrangement["left"]
            for a in session.scalars(
                select(SlotArrangement).where(SlotArrangement.assignment_id == submission.assignment_id)
            )
        }
        firsts = {slot.position: slot.payload["candidates"][0]["id"] for slot in published.slots}
        stored = submission.answers["answers"]
    for slot in range(count):
        sign = 1 if left[slot] == firsts[slot] else -1  # left/right back to the item's first/second
        assert stored[slot] == {m: sign * wanted[(slot, m)] for m in METRICS}
