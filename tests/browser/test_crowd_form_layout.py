"""A batch layout written with ``<crowd-form>`` (a fragment, as MTurk's project editor
kept it) is worked in Chromium, offline, and submits once with the right answer."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from hits.db import session_scope
from hits.requester.batches.plan import BatchSettings, create_batch
from hits.requester.batches.publish import publish_batch
from tests.batches.test_batch_flow import hit_ids
from tests.browser.test_crowd_form import accept, answer_fields, offline, stored_answer  # noqa: F401

pytestmark = pytest.mark.browser

CROWD_LAYOUT = """<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
<crowd-form>
  <p>How does this review sound? <q>${review}</q></p>
  <crowd-classifier name="sentiment" categories="['Positive', 'Negative', 'Neutral']"
    header="The review's tone"></crowd-classifier>
  <crowd-input name="why" label="Why?"></crowd-input>
</crowd-form>
"""


def test_crowd_form_fragment_is_not_wrapped_in_the_classic_form(
    offline,  # noqa: F811
    live_server,
    market,
    mturk,
    requester_sessions,
    tmp_path: Path,
) -> None:
    page, blocked = offline  # noqa: F811
    (tmp_path / "layout.html").write_text(CROWD_LAYOUT, encoding="utf-8")
    (tmp_path / "reviews.csv").write_text("review\nLoved every minute of it.\n", encoding="utf-8")
    with session_scope(requester_sessions) as session:
        batch_id = create_batch(
            session,
            f"reviews-{uuid.uuid4().hex[:6]}",
            tmp_path / "layout.html",
            tmp_path / "reviews.csv",
            BatchSettings(title="Tone of a review", description="Pick one.", reward="0.05"),  # type: ignore[arg-type]
        ).id
    publish_batch(requester_sessions, market, batch_id)
    (hit_id,) = hit_ids(requester_sessions, batch_id)
    question = mturk.get_hit(HITId=hit_id)["HIT"]["Question"]
    assert "mturk_form" not in question and 'id="submitButton"' not in question

    frame = accept(page, live_server.url, hit_id)
    frame.get_by_role("radio", name="Positive").click()
    frame.get_by_label("Why?").fill("It says so")
    # One submit button on the page: the one crowd-form added.
    submit = frame.get_by_role("button", name="Submit")
    assert submit.count() == 1
    submit.click()
    page.locator("#submitted-notice").wait_for()
    assignments = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert len(assignments) == 1
    fields = answer_fields(stored_answer(mturk, hit_id))
    assert [name for name, _ in fields] == ["taskAnswers"]
    assert json.loads(fields[0][1]) == [{"sentiment": {"label": "Positive"}, "why": "It says so"}]
    assert blocked == []
