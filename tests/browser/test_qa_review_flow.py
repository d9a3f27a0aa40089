"""A QA reviewer in Chromium, end to end on a real campaign worked by simulated workers.

The reviewer signs in, opens the queue, opens a held assignment and finds the
pictures, the sentences, the worker's ratings and the gold answers rendered;
rejects it with a reason; the rejection reaches the marketplace through the
outbox, the worker reads the reason on /me, and the audit log names the
reviewer; a bulk approval of a selection states the money first, then decides
each selected assignment once, on the marketplace too. Screenshots of the
pages go to ``HITFORGE_SCREENSHOTS_DIR`` when it is set (``docs/screenshots``
holds the ones in the docs), else to a scratch folder.
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
from hits.requester.tables.campaigns import OutboxEntry, Submission
from tests.helpers import campaign_bot, document_loaded, launch_demo_campaign
from tests.quality.test_followups import review
from tests.quality.test_signal_flags import UNDECIDED_STRICT
from tests.server.test_dashboard import staff_in_browser

pytestmark = pytest.mark.browser


def _shot(page, folder: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_a_reviewer_rejects_held_work_with_a_reason_the_worker_reads(
    tmp_path, page, live_server, market, mturk, requester_sessions
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    name = f"qa-{uuid.uuid4().hex[:6]}"
    campaign_id, truth = launch_demo_campaign(
        tmp_path / "data",
        market,
        requester_sessions,
        live_server.url,
        hits=4,
        name=name,
        quality=UNDECIDED_STRICT,
        gold_per_hit=2,
    )
    diligent = campaign_bot(live_server.url, f"{name}-good", PROFILES["diligent"], truth, name)
    copycat = campaign_bot(live_server.url, f"{name}-flat", PROFILES["copycat"], truth, name, seed=1)
    assert diligent.run(max_hits=3).submitted == 3
    assert copycat.run(max_hits=3).submitted == 3
    review(requester_sessions, market)
    worker_id = copycat.result.worker_id

    http = staff_in_browser(page, live_server.url, requester_sessions)
    page.set_viewport_size({"width": 1200, "height": 900})
    page.goto(live_server.url + "/dashboard/queue")
    queue = page.locator("#queue")
    row = queue.locator("tr", has=page.get_by_role("link", name=worker_id))
    assert name in row.inner_text() and "Flagged" in row.inner_text()
    _shot(page, shots, "qa-queue")
    row.get_by_role("link", name=worker_id).click()
    assert page.get_by_role("button", name="Clear the flag: approve 3 held assignments").is_visible()
    _shot(page, shots, "qa-worker")

    page.locator("#submissions a").first.click()
    slots = page.locator("section.slot")
    assert slots.count() == 4  # two sentences and two gold items per HIT
    gold = page.locator("section.slot.gold").first
    assert "expected" in gold.inner_text() and "rating" in gold.inner_text()
    pictures = page.locator("section.slot img")
    assert pictures.count() == 4
    # The click returns before the pictures have loaded: wait for the page's load event (CI, loaded,
    # once found a picture with no width yet).
    document_loaded(pictures.first)
    assert all(pictures.nth(i).evaluate("img => img.naturalWidth > 0") for i in range(pictures.count()))
    assert "gave the same answer to nearly every item" in page.locator("#signals").inner_text()
    _shot(page, shots, "qa-assignment")
    assignment_id = page.locator("h1").inner_text().split()[-1]

    page.get_by_label("Reason the worker reads if rejected").fill("Every sentence got the same rating.")
    page.get_by_label("Note for the audit log (staff only)").fill("flat ratings across pictures")
    page.get_by_role("button", name="Reject (the worker reads the reason): this 1 assignment").click()
    assert page.locator("#decision").inner_text() == "rejected"

    # The outbox applies it through the API (what the Celery task does once the request commits).
    with session_scope(requester_sessions) as session:
        entry_id = session.scalars(
            select(OutboxEntry.id).where(OutboxEntry.action == "reject", OutboxEntry.target == assignment_id)
        ).one()
    outbox.apply_entry(requester_sessions, market, entry_id)
    stored = mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]
    assert stored["AssignmentStatus"] == "Rejected"
    assert stored["RequesterFeedback"] == "Every sentence got the same rating."
    me = copycat.http.get(live_server.url + "/me").text
    assert "Every sentence got the same rating." in me

    page.goto(f"{live_server.url}/dashboard/audit?campaign={campaign_id}")
    log = page.locator("#audit-log tbody tr").first.inner_text()
    assert http.cookies and "admin-" in log and assignment_id in log and "flat ratings" in log
    _shot(page, shots, "qa-audit")
    with session_scope(requester_sessions) as session:
        decided = session.scalar(select(Submission.decision).where(Submission.assignment_id == assignment_id))
    assert decided == "reject"

    # A bulk approval of the worker's two other held assignments: the money first, then each once.
    page.goto(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}")
    boxes = page.locator('input[name="submission"][form="bulk"]')
    assert boxes.count() == 2
    chosen = [boxes.nth(i).get_attribute("aria-label").split()[-1] for i in range(2)]  # type: ignore[union-attr]
    for i in range(2):
        boxes.nth(i).check()
    page.get_by_role(
        "button", name="Approve the selected held assignments (shows what it pays first)"
    ).click()
    money = page.locator("#money").inner_text()
    assert "in rewards" in money and "in fees" in money
    page.get_by_role("button", name="Approve these 2 assignments and pay").click()
    assert "2 assignments approved" in page.content()
    with session_scope(requester_sessions) as session:
        bulk = session.scalars(
            select(OutboxEntry.id).where(OutboxEntry.action == "approve", OutboxEntry.target.in_(chosen))
        ).all()
    assert len(bulk) == 2
    for entry_id in bulk:
        outbox.apply_entry(requester_sessions, market, entry_id)
    for approved in chosen:
        assert mturk.get_assignment(AssignmentId=approved)["Assignment"]["AssignmentStatus"] == "Approved"
    page.goto(f"{live_server.url}/dashboard/audit?campaign={campaign_id}")
    log = page.locator("#audit-log").inner_text()
    assert all(approved in log for approved in chosen)

    # The worker's profile plots their gold accuracy over time against the threshold.
    page.goto(f"{live_server.url}/dashboard/workers/{worker_id}")
    assert page.locator("#gold-plot img").evaluate("img => img.complete && img.naturalWidth > 0")
    drawn = http.get(f"{live_server.url}/dashboard/workers/{worker_id}/plots/gold.svg").text
    assert "threshold 60%" in drawn and "<script" not in drawn
    _shot(page, shots, "qa-profile")
    # The worker page's actions, as a reviewer about to send a bonus sees them.
    page.goto(f"{live_server.url}/dashboard/workers/{campaign_id}/{worker_id}")
    page.get_by_text("Send a bonus").click()
    assert page.get_by_role("button", name=f"Pay this bonus to {worker_id}").is_visible()
    _shot(page, shots, "qa-actions")
