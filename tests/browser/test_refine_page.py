"""The refine page in a real browser: start from scratch, put the text back, refusals keep the text."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from tests.helpers import accept_in_browser
from tests.workflows.helpers import write_refine_workflow
from tests.workflows.test_refine_blinding import _round_hit

pytestmark = pytest.mark.browser


def test_a_worker_starts_over_puts_the_text_back_and_submits_an_improvement(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    path, _ = write_refine_workflow(tmp_path, "refine-browser", pictures=1, complete=0)
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    assert run_step(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit").published == 1
    hit_id = _round_hit(requester_sessions, workflow_id, 1)
    frame = accept_in_browser(page, live_server.url, "refine-browser-worker", hit_id)
    box = frame.get_by_label("Description of picture 1")
    seed = "A drawing of two coloured shapes."
    assert box.input_value() == seed

    frame.get_by_role("button", name="Start from scratch").click()
    assert box.input_value() == ""
    frame.get_by_role("button", name="Submit").click()
    frame.locator("#error-summary", has_text="write a description").wait_for()
    assert frame.get_by_label("Description of picture 1").get_attribute("aria-invalid") == "true"

    frame.get_by_role("button", name="Put the description back").click()
    assert frame.get_by_label("Description of picture 1").input_value() == seed
    frame.get_by_role("button", name="Submit").click()
    frame.locator("#error-summary", has_text="unchanged").wait_for()  # the page is served again

    better = "A red circle sits above a blue square on a pale grey background."
    frame.get_by_role("button", name="Start from scratch").click()
    frame.get_by_label("Description of picture 1").press_sequentially(better)
    frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")
    with session_scope(requester_sessions) as session:
        stored = session.scalars(
            select(Submission.answers).join(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id)
        ).all()
    assert stored == [{"answers": [better]}]
