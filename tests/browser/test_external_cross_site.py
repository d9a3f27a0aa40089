"""An ExternalQuestion page on another site submits through the turkSubmitTo it was given.

The requester's page is served by a second small server and framed as
``http://localhost:<port>`` while the worker site is ``http://127.0.0.1:<port>``:
its post to ``turkSubmitTo + "/mturk/externalSubmit"`` is cross-site, so the
worker's SameSite=Lax session cookie does not come with it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask, Response

from demo.runner import RunningServer, serve_in_thread
from tests.browser.test_htmlquestion_flow import sign_up
from tests.helpers import hit_params

pytestmark = pytest.mark.browser

# A page written for MTurk: it reads its parameters from the URL and posts its form to turkSubmitTo.
REQUESTER_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Caption</title></head><body>
<form id="mturk_form" method="post">
<input type="hidden" name="assignmentId" id="assignmentId">
<p><label for="caption">Describe the picture</label> <input id="caption" name="caption"></p>
<p><input type="submit" id="submitButton" value="Submit"></p>
</form>
<script>
var params = new URLSearchParams(window.location.search);
document.getElementById("assignmentId").value = params.get("assignmentId");
document.getElementById("mturk_form").action = params.get("turkSubmitTo") + "/mturk/externalSubmit";
</script>
</body></html>"""


@pytest.fixture
def other_site() -> Iterator[RunningServer]:
    """The requester's own web server, on another port (and, reached as localhost, another site)."""
    app = Flask("requester-site")
    app.add_url_rule("/task", "task", lambda: Response(REQUESTER_PAGE, mimetype="text/html"))
    running = serve_in_thread(app)
    yield running
    running.stop()


def test_a_page_on_another_site_submits_without_the_workers_cookie(
    page, live_server, mturk, other_site
) -> None:
    assert live_server.url.startswith("http://127.0.0.1:")
    external_url = f"http://localhost:{other_site.server.port}/task"
    hit_id = mturk.create_hit(**hit_params(external_url, MaxAssignments=1))["HIT"]["HITId"]
    sign_up(page, live_server.url)
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    frame = page.frame_locator("#hit-frame")
    frame.get_by_label("Describe the picture").fill("A cat on a red sofa")
    frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted-notice")
    (assignment,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert assignment["AssignmentStatus"] == "Submitted"
    assert "<QuestionIdentifier>caption</QuestionIdentifier>" in assignment["Answer"]
    assert "<FreeText>A cat on a red sofa</FreeText>" in assignment["Answer"]
