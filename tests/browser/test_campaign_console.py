"""A requester in Chromium watching a campaign fill up, then pausing and resuming it.

The progress bar moves as bots submit work; the plots load as images; pausing
and resuming take effect on the marketplace. Screenshots of the campaign page
and its items go to ``HITFORGE_SCREENSHOTS_DIR`` (``docs/screenshots`` holds
the ones in the docs), else to a scratch folder.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.quality import outbox
from hits.requester.tables.campaigns import OutboxEntry
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review
from tests.server.test_dashboard import staff_in_browser

pytestmark = pytest.mark.browser


def _apply_pending(sessions, market) -> None:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        ids = list(session.scalars(select(OutboxEntry.id).where(OutboxEntry.status == "pending")))
    outbox.apply_entries(sessions, market, ids)


def test_a_requester_watches_progress_and_pauses_and_resumes(
    tmp_path, page, live_server, market, mturk, requester_sessions
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    name = f"console-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path / "data", market, requester_sessions, live_server.url, hits=6, name=name
    )
    staff_in_browser(page, live_server.url, requester_sessions)
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(live_server.url + "/dashboard/")
    page.get_by_role("link", name=name).click()
    bar = page.locator("#progress-bar")
    assert bar.get_attribute("value") == "0" and bar.get_attribute("max") == "12"

    for n, profile in enumerate(("diligent", "careless", "diligent")):
        bot = campaign_bot(live_server.url, f"{name}-{n}", PROFILES[profile], truth, name, seed=n)
        assert bot.run(max_hits=2).submitted == 2
        review(requester_sessions, market)
        page.reload()
        assert page.locator("#progress-bar").get_attribute("value") == str(2 * (n + 1))
    for plot in page.locator("img.plot").all():
        assert plot.evaluate("img => img.complete && img.naturalWidth > 0")
    page.screenshot(path=str(shots / "campaign-page.png"), full_page=True)

    page.get_by_role("link", name="Browse the items with their answers and consensus").click()
    assert page.locator("section.slot table").count() >= 1
    page.screenshot(path=str(shots / "campaign-items.png"), full_page=True)
    page.go_back()

    page.get_by_role(
        "button", name="Pause: expire its open HITs now (submitted work is still reviewed)"
    ).click()
    assert "paused" in page.locator("#status").inner_text()
    _apply_pending(requester_sessions, market)
    listed = mturk.list_hits(MaxResults=100)["HITs"]
    assert not [
        h for h in listed if h["HITStatus"] == "Assignable" and name in h.get("RequesterAnnotation", name)
    ]
    page.get_by_role("button", name="Resume: open its HITs again for a fresh lifetime").click()
    assert page.locator("#status").inner_text() == "running"
    _apply_pending(requester_sessions, market)
    late = campaign_bot(live_server.url, f"{name}-late", PROFILES["diligent"], truth, name, seed=9)
    assert late.run(max_hits=1).submitted == 1
