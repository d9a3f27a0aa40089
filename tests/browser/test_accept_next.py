"""MTurk's "accept the next HIT" box in Chromium: a submission in the frame opens the next HIT."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.browser.test_htmlquestion_flow import sign_up
from tests.server.worker_helpers import MTURK_HTML, create_hit, html_question

pytestmark = pytest.mark.browser


def test_ticking_accept_next_moves_from_each_submission_to_the_groups_next_hit(
    page, live_server, mturk
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = {create_hit(mturk, html_question(MTURK_HTML), Title=f"Next {tag}") for _ in range(2)}
    sign_up(page, live_server.url)
    page.goto(f"{live_server.url}/?q={tag}")
    page.locator("tr[data-hit-type-id] button").click()
    page.get_by_label("Accept the next HIT of this group when I submit").check()
    worked = []
    for caption in ("first", "second"):
        frame = page.frame_locator("#hit-frame")
        worked.append(re.search(r"hitId=(\w+)", page.locator("#hit-frame").get_attribute("src") or "")[1])  # type: ignore[index]
        frame.get_by_label("Describe the picture").fill(caption)
        first_url = page.url
        frame.locator("#submitButton").click()
        page.wait_for_url(lambda url, before=first_url: url != before)
    # After the second submission the group is used up: the list says so.
    assert "no more HITs in this group" in page.inner_text("body")
    assert set(worked) == hit_ids
    for hit_id in hit_ids:
        (stored,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
        assert stored["AssignmentStatus"] == "Submitted"


def test_accept_next_works_on_a_campaign_page_that_hands_off_to_the_whole_window(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    """A campaign's HIT page posts its hand-off to the top window (target=_top), which replaces the
    work page before its script can act: the box's choice must survive that (7 of 7 lost before)."""
    from tests.helpers import accept_in_browser, launch_template_campaign

    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=2, name="next-campaign"
    )
    accept_in_browser(page, live_server.url, f"next-{uuid.uuid4().hex[:6]}", hit_ids[0])
    page.get_by_label("Accept the next HIT of this group when I submit").check()
    worked = []
    for _ in hit_ids:
        frame = page.frame_locator("#hit-frame")
        worked.append(re.search(r"hitId=(\w+)", page.locator("#hit-frame").get_attribute("src") or "")[1])  # type: ignore[index]
        groups = frame.get_by_role("radiogroup")
        for k in range(groups.count()):
            groups.nth(k).get_by_role("radio").first.check()
        before = page.url
        frame.get_by_role("button", name="Submit").click()
        # Through the submitted page, on to the group's next HIT (or the list once it is used up).
        page.wait_for_url(lambda url, before=before: url != before and "externalSubmit" not in url)
        if len(worked) < len(hit_ids):
            assert "/work/" in page.url
            assert page.get_by_label("Accept the next HIT of this group when I submit").is_checked()
    assert set(worked) == set(hit_ids)
    assert "no more HITs in this group" in page.inner_text("body")
