"""A requester in Chromium launching a campaign from a zip, then watching, pausing and downloading it.

Signed in as a requester user, they upload a ``target`` campaign's zip, read
the check and the preview of its first HIT, launch it and land on its page;
the progress bar moves as bots work, pausing and resuming reach the
marketplace, and the three result files download. The page's figures are
checked against the marketplace read through boto3. The upload and check
pages pass axe. Screenshots of both go to ``HITFORGE_SCREENSHOTS_DIR``
(``docs/screenshots`` holds the ones in the docs), else to a scratch folder.
"""

from __future__ import annotations

import csv
import io
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from demo.crowd import PROFILES, Bot
from demo.tasks import get_demo_task
from hits.db import session_scope
from hits.requester.mturk import Marketplace
from hits.requester.quality import outbox
from hits.requester.tables.campaigns import Campaign, OutboxEntry
from tests.browser.accessibility import assert_accessible
from tests.helpers import document_loaded
from tests.quality.test_followups import review
from tests.server.test_dashboard_roles import PASSWORD, make_user
from tests.server.test_launch_upload import Launcher, launcher, write_campaign, zip_of

pytestmark = pytest.mark.browser
__all__ = ["launcher"]  # the fixture, imported to be used here

HITS = 3
ASSIGNMENTS_PER_HIT = 2


def _apply_pending(sessions, market: Marketplace, campaign_id: int) -> None:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        ids = list(
            session.scalars(
                select(OutboxEntry.id).where(
                    OutboxEntry.status == "pending", OutboxEntry.campaign_id == campaign_id
                )
            )
        )
    outbox.apply_entries(sessions, market, ids)


def _marketplace_figures(mturk: Any, name: str) -> dict[str, int]:
    """HITs and assignments by status of the campaign, as the marketplace tells its requester."""
    hits = [
        h for p in mturk.get_paginator("list_hits").paginate() for h in p["HITs"] if h["Title"].endswith(name)
    ]
    figures = {"hits": len(hits), "Submitted": 0, "Approved": 0, "Rejected": 0}
    for hit in hits:
        for a in mturk.list_assignments_for_hit(HITId=hit["HITId"], MaxResults=100)["Assignments"]:
            figures[a["AssignmentStatus"]] += 1
    return figures


def _decided(page: Any, words: str) -> int:
    row = page.locator("#assignments-by-decision tr", has_text=words)
    return int(row.locator("td.num").inner_text()) if row.count() else 0


def _bot(url: str, name: str, n: int, truth: dict[str, Any]) -> Bot:
    task = get_demo_task("target")
    bot = Bot(url, f"{name}-{n}", PROFILES["diligent"], truth, seed=n, fill_form=task.fill_form)
    bot.title_filter = f"{task.title} {name}"
    return bot


def _download(page: Any, name: str) -> str:
    with page.expect_download() as info:
        page.locator("#downloads").get_by_role("link", name=name).click()
    path = info.value.path()
    assert info.value.suggested_filename.endswith(name)
    return Path(path).read_text(encoding="utf-8")


def assert_accessible_as_served(browser, page, what: str) -> None:  # type: ignore[no-untyped-def]
    """axe on the page's URL, opened with the same sign-in in a context that lets axe's script in.

    The flow itself runs under the pages' own Content-Security-Policy; only axe's copy bypasses it.
    """
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    try:
        context.add_cookies(page.context.cookies())
        checked = context.new_page()
        checked.goto(page.url)
        assert_accessible(checked, what)
    finally:
        context.close()


def test_a_requester_launches_a_campaign_from_a_zip_and_runs_it(
    tmp_path, browser, page, live_server, launcher: Launcher, requester_sessions
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    name = f"shapes-{uuid.uuid4().hex[:6]}"
    files = tmp_path / "campaign"
    files.mkdir()
    truth = write_campaign(files, name, hits=HITS)
    archive = tmp_path / f"{name}.zip"
    archive.write_bytes(zip_of(files, top=name))
    market = Marketplace.connect(live_server.url, launcher.key.access_key_id, launcher.key.secret_access_key)

    # Signing in as a requester user of the server's account, through the form.
    user = make_user(requester_sessions, "requester", access_key=launcher.key.access_key_id)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(launcher.url + "/dashboard/signin")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Launch a campaign").click()
    assert page.get_by_role("heading", name="Launch a campaign").is_visible()
    assert_accessible_as_served(browser, page, "the upload page")
    page.get_by_label("The campaign's zip").set_input_files(str(archive))
    page.screenshot(path=str(shots / "launch-upload.png"), full_page=True)
    page.get_by_role("button", name="Check this campaign").click()

    # The check: the plan, and the first HIT's page as a worker sees it.
    assert page.get_by_role("heading", name=f"Check of the campaign {name}").is_visible()
    plan = dict(
        zip(
            page.locator("#plan dt").all_inner_texts(),
            page.locator("#plan dd").all_inner_texts(),
            strict=True,
        )
    )
    assert plan["HITs"] == str(HITS) and plan["assignments"] == str(HITS * ASSIGNMENTS_PER_HIT)
    assert plan["total cost"] == "$0.72" and plan["budget"] == "$10.00"
    preview = page.frame_locator("#preview")
    items = preview.locator("fieldset.target-item")
    items.first.wait_for()
    assert items.count() == 6
    document_loaded(items.first)  # the frame's pictures, not only its markup
    for img in preview.locator("fieldset.target-item img").all():
        assert img.evaluate("img => img.complete && img.naturalWidth > 0")
    assert_accessible_as_served(browser, page, "the check page")
    items.first.scroll_into_view_if_needed()  # the screenshot shows an item, not only the instructions
    page.screenshot(path=str(shots / "launch-check.png"), full_page=True)

    # Launching lands on the campaign's page.
    page.get_by_role("button", name=f"Launch: publish {HITS} HITs for $0.72").click()
    assert page.get_by_role("heading", name=name, exact=True).is_visible()
    assert f"Campaign {name} is running: {HITS} HITs published." in page.locator("main").inner_text()
    bar = page.locator("#progress-bar")
    assert bar.get_attribute("value") == "0" and bar.get_attribute("max") == str(HITS * ASSIGNMENTS_PER_HIT)
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None
        campaign_id = campaign.id

    # Bots work; the bar moves.
    done = 0
    for n in range(2):
        assert _bot(live_server.url, name, n, truth).run(max_hits=2).submitted == 2
        done += 2
        review(requester_sessions, market)
        page.reload()
        assert page.locator("#progress-bar").get_attribute("value") == str(done)

    # Pause and resume reach the marketplace.
    page.get_by_role(
        "button", name="Pause: expire its open HITs now (submitted work is still reviewed)"
    ).click()
    assert "paused" in page.locator("#status").inner_text()
    _apply_pending(requester_sessions, market, campaign_id)
    listed = launcher.mturk.list_hits(MaxResults=100)["HITs"]
    mine = [h for h in listed if h["Title"].endswith(name)]
    assert mine and not [h for h in mine if h["HITStatus"] == "Assignable"]
    page.get_by_role("button", name="Resume: open its HITs again for a fresh lifetime").click()
    assert page.locator("#status").inner_text() == "running"
    _apply_pending(requester_sessions, market, campaign_id)
    assert _bot(live_server.url, name, 9, truth).run(max_hits=1).submitted == 1
    done += 1
    review(requester_sessions, market)
    page.reload()
    assert page.locator("#progress-bar").get_attribute("value") == str(done)

    # The page's figures are the marketplace's.
    figures = _marketplace_figures(launcher.mturk, name)
    facts = page.locator("#facts").inner_text()
    assert f"{figures['hits']} HITs" in facts and figures["hits"] == HITS
    submitted = figures["Submitted"] + figures["Approved"] + figures["Rejected"]
    assert int(page.locator("#progress-bar").get_attribute("value") or "-1") == submitted == done
    assert _decided(page, "approved") == figures["Approved"]
    assert _decided(page, "rejected") == figures["Rejected"]

    # The three downloads.
    answers = [json.loads(line) for line in _download(page, "answers.jsonl").splitlines() if line.strip()]
    assert len(answers) == done
    batch = list(csv.DictReader(io.StringIO(_download(page, "batch.csv"))))
    assert len(batch) == done and {row["HITId"] for row in batch} <= {
        h["HITId"] for h in launcher.mturk.list_hits(MaxResults=100)["HITs"]
    }
    labels = list(csv.reader(io.StringIO(_download(page, "labels.csv"))))
    assert labels[0] == ["item_id", "label", "confidence", "votes", "method"] and len(labels) > 1
