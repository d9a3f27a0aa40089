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
