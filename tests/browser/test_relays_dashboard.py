"""The recruiting part of a campaign's page in Chromium: its relays, and a held bonus resolved by a person.

A participant's bonus whose pay call ended in a fault is held; the page lists
it with buttons that say what they record, which go through the same code as
``hitforge recruit resolve`` and leave a line in the audit log. The page has
no accessibility violation (axe). Its screenshot goes to
``HITFORGE_SCREENSHOTS_DIR`` (``docs/screenshots`` holds the one in the docs).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.quality.outbox import apply_entries
from hits.requester.recruit.relay import apply_relays
from hits.requester.tables.campaigns import ReviewAction
from tests.browser.accessibility import assert_accessible
from tests.recruit.conftest import prolific, standin
from tests.recruit.test_entry import study
from tests.recruit.test_relays import participant, queue, relay_of
from tests.server.test_dashboard import staff_in_browser

__all__ = ["participant", "prolific", "standin", "study"]  # fixtures, shared with the recruit tests
pytestmark = pytest.mark.browser


def test_held_relays_are_listed_and_resolved_on_the_campaign_page(
    tmp_path: Path,
    browser: Any,
    live_server: Any,
    requester_sessions: Any,
    market: Any,
    standin: Any,
    prolific: Any,
    participant: Any,
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    held_entry = queue(requester_sessions, participant, "bonus")
    message_entry = queue(requester_sessions, participant, "message")
    block_entry = queue(requester_sessions, participant, "block")
    apply_entries(requester_sessions, market, [held_entry, message_entry, block_entry])
    standin.app.state.fail_after["bonus_pay"] = [502]  # paid, then the answer was a fault
    apply_relays(requester_sessions, prolific)
    held = relay_of(requester_sessions, held_entry)
    assert held.status == "held"

    context = browser.new_context(bypass_csp=True, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        staff_in_browser(page, live_server.url, requester_sessions)
        page.goto(f"{live_server.url}/dashboard/campaigns/{participant.campaign_id}")
        table = page.locator("#relay-list")
        assert "1 held" in page.locator("#relays-summary").inner_text()
        rows = table.locator("tbody tr")
        assert rows.count() == 3
        first = rows.nth(0).inner_text()
        assert "bonus of 0.50 USD: Careful work" in first and participant.pid in first
        assert "held" in first and "message: About your work" in table.inner_text()
        assert "added to the study's blocklist group" in table.inner_text()
        # The study at a glance: its places by Prolific status and its money, above the relays.
        assert "1 of 3 places taken" in page.locator("#study-summary").inner_text()
        money = page.locator("#study-money").inner_text()
        assert "In the budget" in money and "$6.00" in money
        assert_accessible(page, "the campaign page with its study and relays")
        page.screenshot(path=str(shots / "campaign-relays.png"), full_page=True)

        page.get_by_label("Note for the audit log").first.fill("Checked the study's bonus payments")
        page.get_by_role("button", name="Record as paid on Prolific").click()
        assert "carried out on Prolific" in page.locator(".flash, [role=status], body").first.inner_text()
        assert "0 held" not in page.locator("#relays-summary").inner_text()
        assert page.get_by_role("button", name="Record as paid on Prolific").count() == 0
    finally:
        context.close()
    assert relay_of(requester_sessions, held_entry).status == "done"
    assert len(standin.app.state.paid) == 1  # recorded, never paid again
    with session_scope(requester_sessions) as session:
        (line,) = session.scalars(
            select(ReviewAction).where(
                ReviewAction.campaign_id == participant.campaign_id,
                ReviewAction.action == "relay recorded as done",
            )
        )
        assert f"relay {held.id}" in line.note and "Checked the study's bonus payments" in line.note
