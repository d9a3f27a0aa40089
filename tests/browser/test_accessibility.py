"""Every kind of page people use, checked by axe-core in Chromium: worker site, HIT pages, dashboard."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import Submission
from tests.browser.accessibility import assert_accessible
from tests.helpers import accept_in_browser, launch_demo_campaign, launch_template_campaign
from tests.server.test_dashboard import staff_in_browser
from tests.server.test_review_queue import seed

pytestmark = pytest.mark.browser


@pytest.fixture
def axe_page(browser) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A page whose context lets axe's injected script run past the pages' CSP."""
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_worker_site_pages_have_no_accessibility_violations(axe_page, live_server) -> None:
    page, base = axe_page, live_server.url
    for path in ("/signin", "/signup"):
        page.goto(base + path)
        assert_accessible(page, path)
    page.get_by_label("User name").fill(f"axe-{uuid.uuid4().hex[:8]}")
    page.get_by_label("Password (at least 8 characters)").fill("a-long-password")
    page.get_by_role("button", name="Sign up").click()
    for path in ("/", "/me", "/qualifications"):
        page.goto(base + path)
        assert_accessible(page, path)


@pytest.mark.parametrize(
    "template",
    [
        "rating",
        "select",
        "write",
        "spans",
        "target",
        "compare",
        "sxs",
        "objects",
        "rank",
        "heatmap",
        "refine",
    ],
)
def test_a_framed_hit_page_has_no_accessibility_violations(
    axe_page, tmp_path, live_server, market, requester_sessions, template: str
) -> None:
    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, template, name=f"axe-{template}"
    )
    accept_in_browser(axe_page, live_server.url, f"axe-{template}-{uuid.uuid4().hex[:6]}", hit_ids[0])
    assert_accessible(axe_page, "the work page around the HIT")
    frame = axe_page.frame(url=lambda url: "/tasks/hit" in url)
    assert frame is not None
    frame.wait_for_load_state()
    assert_accessible(frame, f"the {template} HIT page")


def test_dashboard_pages_have_no_accessibility_violations(
    axe_page, live_server, requester_sessions, market, tmp_path
) -> None:
    campaign_id, _, worker_id, (assignment_id,) = seed(requester_sessions)
    launched, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name=f"axe-{uuid.uuid4().hex[:6]}"
    )
    _, _, _, (rejected_id,) = seed(requester_sessions, decision="reject")
    with session_scope(requester_sessions) as session:
        # Graded work, so that the profile draws its plot of gold over time.
        for n, submission in enumerate(
            session.scalars(select(Submission).where(Submission.worker_id == worker_id))
        ):
            submission.graded = True
            submission.submitted_at = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=n)
    page, base = axe_page, live_server.url
    page.goto(base + "/dashboard/signin")
    assert_accessible(page, "the staff sign-in")
    staff_in_browser(page, base, requester_sessions)
    for path in (
        "/dashboard/",
        "/dashboard/queue",
        f"/dashboard/workers/{campaign_id}/{worker_id}",
        f"/dashboard/assignments/{assignment_id}",
        "/dashboard/audit",
        f"/dashboard/workers/{worker_id}",
        f"/dashboard/assignments/{rejected_id}",
        f"/dashboard/campaigns/{launched}",
        f"/dashboard/campaigns/{launched}/items",
    ):
        page.goto(base + path)
        assert "/signin" not in page.url, path
        # Every action form and table of figures open, as a reviewer about to use them sees them.
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        assert_accessible(page, path)
    page.goto(f"{base}/dashboard/workers/{worker_id}")
    plot = page.locator("#gold-plot img")
    assert plot.evaluate("img => img.complete && img.naturalWidth > 0")
