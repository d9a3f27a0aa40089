"""<crowd-form> pages written in MTurk's style, worked in Chromium with the network cut off.

Every request that leaves the loopback is refused (and recorded), so a page that
references AWS's crowd-html-elements.js only works if hitforge served its own.
Answers are read back through boto3 and compared with what MTurk stored.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pytest
from lxml import etree
from playwright.sync_api import expect

from hits.wire.documents import xml_to_answers
from hits.wire.xml_schemas import validate_answers
from tests.browser.test_htmlquestion_flow import sign_up
from tests.helpers import document_loaded
from tests.server.worker_helpers import create_hit, html_question

pytestmark = pytest.mark.browser

AWS_SCRIPT = "https://assets.crowd.aws/crowd-html-elements.js"
AWS_SCRIPT_NO_POLYFILL = "https://assets.crowd.aws/crowd-html-elements-without-ce-polyfill.js"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@pytest.fixture
def offline(page) -> Iterator[tuple[Any, list[str]]]:  # type: ignore[no-untyped-def]
    """The page, with every non-loopback request aborted and its URL recorded."""
    blocked: list[str] = []

    def route(route, request) -> None:  # type: ignore[no-untyped-def]
        host = urlsplit(request.url).hostname or ""
        if request.url.startswith(("data:", "blob:", "about:")) or host in LOOPBACK:
            route.continue_()
        else:
            blocked.append(request.url)
            route.abort()

    page.route("**/*", route)
    yield page, blocked


def crowd_page(body: str, script: str = AWS_SCRIPT, head: str = "", script_attrs: str = "") -> str:
    """A whole page; ``script_attrs`` " end" puts the script after the body's content."""
    tag = f'<script src="{script}"{script_attrs.replace(" end", "")}></script>'
    start = '<!DOCTYPE html><html><head><meta charset="utf-8">'
    if script_attrs == " end":
        return f"{start}{head}</head><body>{body}{tag}</body></html>"
    return f"{start}{tag}{head}</head><body>{body}</body></html>"


def accept(page, base: str, hit_id: str, loaded: bool = True):  # type: ignore[no-untyped-def]
    """Sign up, accept the HIT from the list and return its frame (``loaded``: once it has loaded)."""
    sign_up(page, base)
    page.goto(base + "/")
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    frame = page.frame_locator("#hit-frame")
    if loaded:
        # The elements measure their pictures once loaded: wait for the frame's load event, not just
        # its first element (a script is on every page here, never on the frame's blank first document).
        document_loaded(frame.locator("script").first)
    return frame


def stored_answer(mturk, hit_id: str) -> str:  # type: ignore[no-untyped-def]
    """The Answer XML of the HIT's one assignment, through GetAssignment."""
    (listed,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    answer = str(mturk.get_assignment(AssignmentId=listed["AssignmentId"])["Assignment"]["Answer"])
    validate_answers(answer)
    return answer


@dataclass
class CrowdHit:
    """A crowd-element HIT accepted by a new worker in the offline browser."""

    page: Any
    frame: Any
    hit_id: str
    blocked: list[str]
    mturk: Any

    def submit(self, *, by_keyboard: bool = False) -> str:
        """Press the form's Submit button (Enter on it, or a click) and return the stored Answer XML."""
        button = self.frame.get_by_role("button", name="Submit")
        if by_keyboard:
            button.press("Enter")
        else:
            button.click()
        return self.stored()

    def stored(self) -> str:
        """Wait for the worker site's notice that the work was handed in; the Answer XML through boto3."""
        self.page.locator("#submitted-notice").wait_for()
        return stored_answer(self.mturk, self.hit_id)


def open_crowd_hit(  # type: ignore[no-untyped-def]
    offline, live_server, mturk, body: str, height: int = 500, loaded: bool = True, **page: str
) -> CrowdHit:
    """Create an HTMLQuestion HIT of ``body`` (``page``: ``crowd_page``'s options) by boto3; accept it.

    ``loaded``: return once the HIT's frame has loaded (see ``accept``).
    """
    browser_page, blocked = offline
    hit_id = create_hit(mturk, html_question(crowd_page(body, **page), height=height))
    frame = accept(browser_page, live_server.url, hit_id, loaded=loaded)
    return CrowdHit(browser_page, frame, hit_id, blocked, mturk)


def answer_fields(xml: str) -> list[tuple[str, str]]:
    """Every (QuestionIdentifier, FreeText) pair, in order, repeats kept."""
    root = etree.fromstring(xml.encode())
    ns = {"q": root.nsmap[None]}
    pairs = []
    for answer in root.findall("q:Answer", ns):
        name = answer.findtext("q:QuestionIdentifier", namespaces=ns) or ""
        pairs.append((name, answer.findtext("q:FreeText", namespaces=ns) or ""))
    return pairs


FORM_BODY = """
<crowd-form{format}>
  <crowd-input name="caption" label="Describe the picture"></crowd-input>
  <crowd-input name="extra" label="Anything else"></crowd-input>
  <crowd-text-area name="comments" label="Comments" rows="2"></crowd-text-area>
  <crowd-checkbox name="tags" value="cat">cat</crowd-checkbox>
  <crowd-checkbox name="tags" value="dog">dog</crowd-checkbox>
  <p>Outdoors?
    <label><input type="radio" name="outdoors" value="yes"> yes</label>
    <label><input type="radio" name="outdoors" value="no"> no</label></p>
  <p><label>Your city <input name="city"></label></p>
  <input type="hidden" name="unused" value="">
  <button type="button" id="example" onclick="this.textContent = 'Shown'">Show an example</button>
  <div id="later"></div>
</crowd-form>
<script>
  // Added at run time, as some templates do: it must still be submitted.
  var late = document.createElement("crowd-input");
  late.setAttribute("name", "added");
  late.setAttribute("label", "Added by script");
  document.getElementById("later").appendChild(late);
</script>
"""


def fill_form_by_keyboard(frame) -> None:  # type: ignore[no-untyped-def]
    frame.get_by_label("Describe the picture").fill('Two <cats> & a "dog"')
    frame.get_by_label("Comments").fill("line one\nline two")
    frame.get_by_role("checkbox", name="cat").focus()
    frame.get_by_role("checkbox", name="cat").press("Space")
    frame.get_by_label("no").check()
    frame.get_by_label("Your city").fill("Zürich")
    frame.get_by_label("Added by script").fill("late value")
    # The page has no submit button: crowd-form added one, reachable by keyboard.
    frame.get_by_role("button", name="Submit").focus()
    frame.get_by_role("button", name="Submit").press("Enter")


@pytest.mark.parametrize("script", [AWS_SCRIPT, AWS_SCRIPT_NO_POLYFILL])
def test_crowd_form_default_format_is_one_task_answers_field(offline, live_server, mturk, script) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, FORM_BODY.format(format=""), script=script)
    frame = hit.frame
    fill_form_by_keyboard(frame)
    fields = answer_fields(hit.stored())
    assert [name for name, _ in fields] == ["taskAnswers"]
    # Empty fields are left out; checkboxes of one name merge; native radios answer per option.
    assert json.loads(fields[0][1]) == [
        {
            "caption": 'Two <cats> & a "dog"',
            "comments": "line one\nline two",
            "tags": {"cat": True, "dog": False},
            "outdoors": {"yes": False, "no": True},
            "city": "Zürich",
            "added": "late value",
        }
    ]
    assert hit.blocked == []


# Pages load the script in every way: plainly, deferred, async, or at the end of the body.
@pytest.mark.parametrize("script_attrs", ["", " defer", " async", " end"])
def test_crowd_form_flatten_objects_is_one_field_per_dotted_path(  # type: ignore[no-untyped-def]
    offline, live_server, mturk, script_attrs
) -> None:
    body = FORM_BODY.format(format=' answer-format="flatten-objects"')
    hit = open_crowd_hit(offline, live_server, mturk, body, script_attrs=script_attrs)
    frame = hit.frame
    fill_form_by_keyboard(frame)
    fields = answer_fields(hit.stored())
    assert sorted(fields) == sorted(
        [
            ("caption", 'Two <cats> & a "dog"'),
            ("comments", "line one\nline two"),
            ("tags.cat", "true"),
            ("tags.dog", "false"),
            ("outdoors.yes", "false"),
            ("outdoors.no", "true"),
            ("city", "Zürich"),
            ("added", "late value"),
        ]
    )
    assert hit.blocked == []


def test_preview_cannot_submit_and_shows_the_page(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    page, blocked = offline
    hit_id = create_hit(mturk, html_question(crowd_page(FORM_BODY.format(format=""))))
    sign_up(page, live_server.url)
    page.goto(f"{live_server.url}/hits/{hit_id}")
    frame = page.frame_locator("#hit-frame")
    assert frame.get_by_label("Describe the picture").is_visible()
    assert frame.get_by_role("button", name="Submit").is_disabled()
    # The page's own buttons that do not submit keep working in preview.
    frame.get_by_role("button", name="Show an example").click()
    expect(frame.locator("#example")).to_have_text("Shown")
    assert blocked == []


CHECKED_BODY = """
<crowd-form>
  <crowd-input name="word" label="A word" required></crowd-input>
  <crowd-button form-action="submit">Send</crowd-button>
</crowd-form>
<p id="note"></p>
<script>
  document.querySelector("crowd-form").onsubmit = function (event) {
    if (document.querySelector("crowd-input").value === "bad") {
      event.preventDefault();
      document.getElementById("note").textContent = "not that word";
    }
  };
</script>
"""


def test_required_fields_and_the_pages_onsubmit_can_stop_submitting(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    hit = open_crowd_hit(offline, live_server, mturk, CHECKED_BODY)
    frame = hit.frame
    # The page has its own submit button: no second one is added.
    expect(frame.get_by_role("button")).to_have_count(1)
    frame.get_by_role("button", name="Send").click()
    assert "required" in frame.get_by_role("alert").inner_text()
    frame.get_by_label("A word").fill("bad")
    frame.get_by_role("button", name="Send").click()
    assert frame.locator("#note").inner_text() == "not that word"
    assert mturk.list_assignments_for_hit(HITId=hit.hit_id)["Assignments"] == []
    frame.get_by_label("A word").fill("good")
    frame.get_by_label("A word").press("Enter")
    assert xml_to_answers(hit.stored()) == {"taskAnswers": '[{"word":"good"}]'}
    assert hit.blocked == []


def test_async_script_that_runs_while_the_page_is_still_being_parsed(offline, live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    held = []
    # A parser-blocking script that answers only when the test says so: the async crowd
    # script then runs while the rest of the page is not parsed yet.
    page, _ = offline
    page.route("**/hitforge-test-slow.js", lambda route, request: held.append(route))
    slow = f'<script src="{live_server.url}/static/hitforge-test-slow.js"></script>'
    body = slow + FORM_BODY.format(format="")
    # The frame cannot load while the script is held.
    hit = open_crowd_hit(offline, live_server, mturk, body, loaded=False, script_attrs=" async")
    frame = hit.frame
    deadline = time.monotonic() + 30  # the frame asks for the held script (later on a loaded machine)
    while not held and time.monotonic() < deadline:
        hit.page.wait_for_timeout(100)  # lets Playwright run the route handler
    assert len(held) == 1
    held[0].fulfill(body="/* parsed on */", content_type="text/javascript")
    fill_form_by_keyboard(frame)
    ((name, text),) = answer_fields(hit.stored())
    assert name == "taskAnswers" and json.loads(text)[0]["added"] == "late value"
    assert hit.blocked == []
