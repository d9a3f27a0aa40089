"""A worker in a real browser: sign up, accept, rate inside the frame, submit."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from tests.helpers import accept_in_browser, launch_demo_campaign

pytestmark = pytest.mark.browser


def test_worker_rates_pairs_in_the_framed_page_by_keyboard_and_mouse(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=1, name="browser-1"
    )
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    frame = accept_in_browser(page, live_server.url, "browser-worker", hit_id)
    frame.get_by_role("radiogroup", name="Rating for pair 1").get_by_label("4").check()
    # Submitting with pairs unrated keeps the first answer and explains the rest.
    frame.get_by_role("button", name="Submit").click()
    alert = frame.locator("#error-summary")
    assert "Please fix 2 problems" in alert.inner_text()
    assert frame.get_by_role("radiogroup", name="Rating for pair 1").get_by_label("4").is_checked()
    # The keyboard works: focus a radio and choose with the arrow keys.
    frame.get_by_role("radiogroup", name="Rating for pair 2").get_by_label("4").focus()
    page.keyboard.press("ArrowRight")  # moves to the next radio ("3") and checks it
    assert frame.get_by_role("radiogroup", name="Rating for pair 2").get_by_label("3").is_checked()
    frame.get_by_role("radiogroup", name="Rating for pair 3").get_by_label("1").click()
    frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")
    assert "your work was submitted" in page.inner_text("#submitted")
    with session_scope(requester_sessions) as session:
        stored = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
    assert [s.answers for s in stored] == [{"answers": [4, 3, 1]}]
