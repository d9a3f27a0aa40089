"""The rank page in headless Chromium, by keyboard alone: two candidates share a rank, errors, submit."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.templates import SlotArrangement
from tests.helpers import accept_in_browser, launch_template_campaign

pytestmark = pytest.mark.browser


def test_rank_page_by_keyboard_ties_two_candidates_keeps_ranks_on_error_and_stores_item_terms(
    tmp_path, page: Page, live_server, market, requester_sessions
) -> None:
    campaign_id, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rank", name="br-rank"
    )
    frame = accept_in_browser(page, live_server.url, "rank-worker", hit_ids[0])
    items = frame.locator("fieldset.rank-item")
    items.first.wait_for()
    count = items.count()
    assert frame.get_by_role("img", name="Candidate picture C of task 1").count() == 1
    assert (
        frame.get_by_role("img", name="Reference picture: a drawing of two coloured shapes").count() == count
    )
    # Each candidate's rank is a labelled select of "Choose a rank" and 1..3.
    rank_a = frame.get_by_role("combobox", name="Rank of candidate A").first
    assert rank_a.evaluate("s => Array.from(s.options).map(o => o.text)") == [
        "Choose a rank",
        "1 (closest)",
        "2",
        "3 (furthest)",
    ]

    # Candidates A and B tied first, C second, in every task: typed as 1, 1, 2 (dense numbering).
    typed = {
        (slot, letter): {"A": "1", "B": "1", "C": "2"}[letter] for slot in range(count) for letter in "ABC"
    }
    last = (count - 1, "C")
    rank_a.focus()  # by keyboard only from here: type a rank, Tab to the next candidate
    for (slot, letter), value in typed.items():
        if (slot, letter) != last:  # leave the very last candidate without a rank
            page.keyboard.type(value)
        page.keyboard.press("Tab")
    status = items.nth(0).locator("[data-rank-status]")
    assert status.inner_text() == "Your order, rank 1: A and B (tied); rank 2: C."
    assert items.nth(count - 1).locator("[data-rank-status]").inner_text().endswith("Still to rank: C.")
    # Tab from the last candidate leaves the page's form for the submit button.
    page.keyboard.press("Enter")
    summary = frame.locator("#error-summary").inner_text()
    assert "Please fix 1 problem" in summary and f"Task {count}: 1 of 3 candidates has no rank yet" in summary
    items = frame.locator("fieldset.rank-item")
    for (slot, letter), value in typed.items():
        if (slot, letter) != last:  # every rank given is still given
            place = "ABC".index(letter)
            assert items.nth(slot).locator(f'select[name="rank-{slot}-{place}"]').input_value() == value
    frame.get_by_role("combobox", name="Rank of candidate C").nth(count - 1).focus()
    page.keyboard.type("2")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Tab from the last rank lands on Submit
    page.wait_for_selector("#submitted")

    with session_scope(requester_sessions) as session:
        (submission,) = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        order = {
            a.position: a.arrangement["order"]
            for a in session.scalars(
                select(SlotArrangement).where(SlotArrangement.assignment_id == submission.assignment_id)
            )
        }
        stored = submission.answers["answers"]
    # Stored per candidate id, in competition ranks: the two shown first share rank 1, the third is 3.
    for slot in range(count):
        first, second, third = order[slot]
        assert stored[slot] == {first: 1, second: 1, third: 3}
