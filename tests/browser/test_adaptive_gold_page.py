"""Adaptive gold on a campaign's page in Chromium: what it does and how many workers are trusted.

A diligent worker takes the HITs for anyone, the pipeline grants them trust,
and the requester reads it on the campaign page, which has no accessibility
violation (axe). Its screenshot goes to ``HITFORGE_SCREENSHOTS_DIR``
(``docs/screenshots`` holds the one in the docs).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from demo.crowd import Profile
from tests.browser.accessibility import assert_accessible
from tests.helpers import campaign_bot
from tests.quality.test_adaptive_gold import published_adaptive_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_in_browser

pytestmark = pytest.mark.browser


def test_the_campaign_page_says_what_adaptive_gold_does_and_who_is_trusted(
    tmp_path: Path, browser: Any, live_server: Any, market: Any, requester_sessions: Any
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    name = "adaptive-page"
    campaign_id, truth = published_adaptive_campaign(tmp_path, live_server, market, requester_sessions, name)
    bot = campaign_bot(live_server.url, f"{name}-good", Profile("perfect", 1.0), truth, name)
    assert bot.run(max_hits=4).submitted == 2, bot.result.errors
    review(requester_sessions, market)

    context = browser.new_context(bypass_csp=True, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        staff_in_browser(page, live_server.url, requester_sessions)
        page.goto(f"{live_server.url}/dashboard/campaigns/{campaign_id}")
        said = " ".join(page.locator("#adaptive-gold").inner_text().split())
        assert "HITs for anyone carry 3 gold items a page" in said, said
        assert "1 worker is trusted." in said, said
        assert page.get_by_role("heading", name="Adaptive gold").count() == 1
        assert_accessible(page, "the campaign page with adaptive gold")
        page.locator("#adaptive-gold").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "campaign-adaptive-gold.png"), full_page=True)
    finally:
        context.close()
