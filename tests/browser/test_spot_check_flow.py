"""A reviewer spot-checks approved work in Chromium: the list, the evidence, a disagreement, the record.

The spot-check list and the evidence page with its form pass axe with no
violation; disagreeing (with a note) changes the worker's spot-check record on
the page at once and, at the campaign's threshold, flags the worker, which the
worker's page and the review queue then show.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import Submission
from tests.browser.accessibility import assert_accessible
from tests.server.test_dashboard import staff_in_browser
from tests.server.test_spot_checks import approved_work

pytestmark = pytest.mark.browser


@pytest.fixture
def axe_page(browser) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A page whose context lets axe's injected script run past the pages' CSP."""
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_a_reviewer_disagrees_with_an_approval_and_sees_the_workers_record_change(
    axe_page, live_server, requester_sessions
) -> None:
    page, base = axe_page, live_server.url
    campaign_id, name, worker_id, assignments = approved_work(requester_sessions, count=2, flag_after=1)
    staff_in_browser(page, base, requester_sessions)
    page.set_viewport_size({"width": 1200, "height": 900})

    page.goto(f"{base}/dashboard/queue")
    page.get_by_role("link", name="Spot checks").click()
    page.get_by_label("Campaign").select_option(label=name)
    page.get_by_role("button", name="Show").click()
    table = page.locator("#spot-checks")
    assert "2 spot checks waiting for a reviewer" in table.locator("caption").inner_text()
    assert_accessible(page, "the spot-check list")

    table.get_by_role("link", name=assignments[0]).click()
    section = page.locator("#spot-check")
    assert "0 disagreed of 0 checked, 2 waiting" in section.locator("#spot-tally").inner_text()
    assert_accessible(page, "an assignment's evidence with its spot-check form")
    page.get_by_label("What you found (staff only, in the audit log)").fill(
        "the second rating ignores the picture"
    )
    page.get_by_role("button", name="Disagree: this work should not have passed").click()

    assert "Spot check recorded: you disagreed" in page.get_by_role("status").first.inner_text()
    tally = page.locator("#spot-tally").inner_text()
    assert "1 disagreed of 1 checked, 1 waiting" in tally and "Flagged" in tally
    assert "the second rating ignores the picture" in page.locator("#spot-verdict").inner_text()
    assert page.get_by_role("button", name="Disagree: this work should not have passed").count() == 0
    assert page.locator("#decision").inner_text() == "approved"

    page.goto(f"{base}/dashboard/workers/{campaign_id}/{worker_id}")
    assert "spot checks: reviewers disagreed with 1" in page.locator("main").inner_text()
    page.goto(f"{base}/dashboard/queue?campaign={campaign_id}")
    row = page.locator("#queue tr", has=page.get_by_role("link", name=worker_id))
    assert "Flagged" in row.inner_text()
    with session_scope(requester_sessions) as session:
        decisions = session.scalars(
            select(Submission.decision).where(Submission.worker_id == worker_id)
        ).all()
    assert decisions == ["approve", "approve"]
