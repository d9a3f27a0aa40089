"""A requester in Chromium launching an MTurk project (a layout over a CSV) from the dashboard.

They follow the link from the zip upload page, fill the form by label, make a
mistake (a reward in words) and find the error next to the field with what
they typed kept, choose the files again, read the plan and the preview of the
first row, and launch. axe passes the form, the form with its error and the
check page. Screenshots go to ``HITFORGE_SCREENSHOTS_DIR`` when it is set.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.test_launch_flow import assert_accessible_as_served
from tests.server.test_dashboard_roles import PASSWORD, make_user
from tests.server.test_launch_upload import Launcher, launcher
from tests.server.test_project_launch import CSV, LAYOUT

pytestmark = pytest.mark.browser
__all__ = ["launcher"]  # the fixture, imported to be used here


def test_a_requester_launches_a_layout_and_a_csv(  # type: ignore[no-untyped-def]
    tmp_path, browser, page, launcher: Launcher, requester_sessions
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    (tmp_path / "layout.html").write_bytes(LAYOUT)
    (tmp_path / "animals.csv").write_bytes(CSV)
    name = f"animals-{uuid.uuid4().hex[:6]}"
    user = make_user(requester_sessions, "requester", access_key=launcher.key.access_key_id)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(launcher.url + "/dashboard/signin")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Launch a campaign").click()
    page.get_by_role("link", name="Launch a layout and a CSV").click()
    expect(page.get_by_role("heading", name="Launch an MTurk project: a layout and a CSV")).to_be_visible()
    assert_accessible_as_served(browser, page, "the project form")

    def fill(reward: str) -> None:
        page.get_by_label("The layout (HTML)").set_input_files(str(tmp_path / "layout.html"))
        page.get_by_label("The input CSV (one HIT per row)").set_input_files(str(tmp_path / "animals.csv"))
        page.get_by_label("Project name").fill(name)
        page.get_by_label("Title workers see").fill("Animal or not")
        page.get_by_label("Description workers see").fill("Say whether a sentence is about an animal.")
        page.get_by_label("Reward per assignment, in US dollars").fill(reward)
        page.get_by_label("Workers per HIT").fill("2")
        page.get_by_role("button", name="Check this project").click()

    fill("five cents")
    # The checks after a click wait for the page it loads: the form is on the page before it too.
    reward = page.get_by_label("Reward per assignment, in US dollars")
    expect(reward).to_have_attribute("aria-invalid", "true")
    assert page.get_by_label("Title workers see").input_value() == "Animal or not"  # kept
    assert page.get_by_label("Project name").input_value() == name
    assert_accessible_as_served(browser, page, "the project form with an error")
    fill("0.05")
    expect(page.get_by_role("heading", name=f"Check of the project {name}")).to_be_visible()
    plan = dict(
        zip(
            page.locator("#plan dt").all_inner_texts(),
            page.locator("#plan dd").all_inner_texts(),
            strict=True,
        )
    )
    assert plan["HITs"] == "4 (one per row), 1 of them gold rows" and plan["Workers per HIT"] == "2"
    assert "The bus is late again." in page.frame_locator("#preview").locator("body").inner_text()
    assert_accessible_as_served(browser, page, "the project's check page")
    page.screenshot(path=str(shots / "launch-project.png"), full_page=True)
    page.get_by_role("button", name="Launch: publish 4 HITs for $0.48").click()
    expect(page.locator("main")).to_contain_text(f"Project {name} is running: 4 HITs published.")
