"""Every template's page driven in headless Chromium as a worker would: mouse, keyboard, errors, submit."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Locator, Page
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from tests.helpers import accept_in_browser, launch_template_campaign

pytestmark = pytest.mark.browser


@dataclass
class _OpenHIT:
    """A template's HIT, accepted by a new worker in the browser: its page framed on the worker site."""

    page: Page
    frame: FrameLocator
    campaign_id: int
    requester_sessions: Any

    @staticmethod
    def count(found: Locator) -> int:
        """How many elements ``found`` finds on the framed page, once it has loaded."""
        found.first.wait_for()  # count() does not wait for the frame to load
        return found.count()

    def submit(self) -> None:
        self.frame.get_by_role("button", name="Submit").click()

    def submit_and_read_stored(self) -> list[Any]:
        """Submit, wait until the worker site takes the work; the campaign's answers stored per assignment."""
        self.submit()
        self.page.wait_for_selector("#submitted")
        return self.stored()

    def stored(self) -> list[Any]:
        """The answers stored for the campaign, one list per submitted assignment."""
        with session_scope(self.requester_sessions) as session:
            rows = session.scalars(
                select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == self.campaign_id)
            ).all()
            return [s.answers["answers"] for s in rows]


@pytest.fixture
def open_hit(tmp_path, page, live_server, market, requester_sessions) -> Callable[[str], _OpenHIT]:  # type: ignore[no-untyped-def]
    """``open_hit(template)``: a one-HIT campaign of ``template``, its HIT accepted in the browser."""

    def open_(template: str) -> _OpenHIT:
        campaign_id, _, hit_ids = launch_template_campaign(
            tmp_path, market, requester_sessions, live_server.url, template, name=f"br-{template}"
        )
        frame = accept_in_browser(page, live_server.url, f"{template}-worker", hit_ids[0])
        return _OpenHIT(page, frame, campaign_id, requester_sessions)

    return open_


def test_select_page_none_excludes_the_rest_and_keeps_ticks_on_error(page, open_hit) -> None:
    hit = open_hit("select")
    frame = hit.frame
    first = frame.locator("fieldset.pair").nth(0)
    first.get_by_role("checkbox").nth(1).check()
    first.get_by_role("checkbox").nth(2).check()
    # "No caption is correct" clears the ticked sentences, and a sentence clears it again.
    first.get_by_label("No caption is correct").check()
    assert not first.get_by_role("checkbox").nth(1).is_checked()
    first.get_by_role("checkbox").nth(1).check()
    assert not first.get_by_label("No caption is correct").is_checked()
    hit.submit()
    summary = frame.locator("#error-summary").inner_text()  # waits for the re-rendered page
    slots = frame.locator("fieldset.pair").count()
    assert f"Please fix {slots - 1} problem" in summary
    assert frame.locator("fieldset.pair").nth(0).get_by_role("checkbox").nth(1).is_checked()
    for k in range(1, slots):
        # By keyboard: focus the box and press space.
        box = frame.locator("fieldset.pair").nth(k).get_by_label("No caption is correct")
        box.focus()
        page.keyboard.press("Space")
    assert hit.submit_and_read_stored() == [[[1]] + [[]] * (slots - 1)]


def test_write_page_refuses_blank_and_repeated_sentences_without_losing_text(page, open_hit) -> None:
    hit = open_hit("write")
    frame = hit.frame
    count = hit.count(frame.get_by_role("textbox"))
    frame.get_by_label("Your sentence for picture 1").fill("A red circle beside a blue square.")
    frame.get_by_label("Your sentence for picture 2").fill("a red circle beside a blue square")
    hit.submit()
    summary = frame.locator("#error-summary").inner_text()
    assert "same sentence as for picture 1" in summary
    kept = frame.get_by_label("Your sentence for picture 1").input_value()
    assert kept == "A red circle beside a blue square."
    assert frame.get_by_label("Your sentence for picture 2").get_attribute("aria-invalid") == "true"
    sentences = [f"Picture number {k + 1} shows two coloured shapes." for k in range(count)]
    for k, text in enumerate(sentences):
        frame.get_by_label(f"Your sentence for picture {k + 1}").fill(text)
    assert hit.submit_and_read_stored() == [sentences]


def test_target_page_by_letter_keys_and_mouse(page, open_hit) -> None:
    hit = open_hit("target")
    frame = hit.frame
    items = frame.locator("fieldset.target-item")
    count = hit.count(items)
    assert frame.locator("fieldset.target-item svg rect").count() == 2 * count  # every item shows its frame
    items.nth(0).get_by_role("radio").first.click()  # A, by mouse
    hit.submit()
    assert f"Please fix {count - 1} problem" in frame.locator("#error-summary").inner_text()
    assert frame.locator("fieldset.target-item").nth(0).locator('input[value="A"]').is_checked()
    letters = "omfa"
    for k in range(1, count):
        # The letter keys pick a category for the item that has focus.
        frame.locator("fieldset.target-item").nth(k).get_by_role("radio").first.focus()
        page.keyboard.press(letters[k % 4])
    expected = ["A"] + [letters[k % 4].upper() for k in range(1, count)]
    assert hit.submit_and_read_stored() == [expected]


def _drag_over(page: Page, element_id: str, start: int, end: int) -> None:
    """Select characters [start, end) of the element's text with a real mouse drag."""
    box = page.evaluate(
        """([id, start, end]) => {
            const el = document.getElementById(id);
            el.scrollIntoView({block: "center"});
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            const range = document.createRange();
            let node, seen = 0, placed = 0;
            while ((node = walker.nextNode())) {
                const next = seen + node.textContent.length;
                if (!placed && start < next) { range.setStart(node, start - seen); placed = 1; }
                if (placed && end <= next) { range.setEnd(node, end - seen); placed = 2; break; }
                seen = next;
            }
            if (placed !== 2) { return null; }
            const r = range.getBoundingClientRect();
            return {x: r.left, y: r.top, w: r.width, h: r.height};
        }""",
        [element_id, start, end],
    )
    assert box, f"characters {start}-{end} are not in #{element_id}"
    y = box["y"] + box["h"] / 2
    page.mouse.move(box["x"] + 1, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["w"] / 2, y, steps=4)
    page.mouse.move(box["x"] + box["w"] - 1, y, steps=4)
    page.mouse.up()


def _word(text: str, index: int) -> tuple[int, int]:
    """Offsets of the text's ``index``-th word."""
    return [(m.start(), m.end()) for m in re.finditer(r"\w+", text)][index]


def _marks(page: Page, slot: int) -> dict[str, list[list[int]]]:
    return json.loads(page.locator(f"#spans-{slot}").input_value())


def test_spans_page_marks_by_mouse_drags_switches_modes_by_keys_and_unmarks(page, open_hit) -> None:
    hit = open_hit("spans")
    # The page works standalone too: open the framed page's own address.
    page.goto(page.locator("#hit-frame").get_attribute("src") or "")
    generated = page.locator("#generated-0").inner_text()
    correct = page.locator("#correct-0").inner_text()
    start, end = _word(generated, 1)  # the first shape's colour
    _drag_over(page, "generated-0", start + 1, end - 1)  # part of a word snaps to the whole word
    assert _marks(page, 0) == {"mistakes": [[start, end]], "missing": []}
    # Dragging over a CORRECT text in mode 1 marks nothing and says how to switch.
    at, last = _word(correct, -1)
    _drag_over(page, "correct-0", at, last)
    assert "Press 2" in page.locator("#spans-status").inner_text()
    page.locator("body").press("2")
    _drag_over(page, "correct-0", at, last)
    assert _marks(page, 0)["missing"] == [[at, last]]
    # Selecting a marked span again removes it.
    page.locator("body").press("1")
    _drag_over(page, "generated-0", start, end)
    assert _marks(page, 0) == {"mistakes": [], "missing": [[at, last]]}
    _drag_over(page, "generated-0", start, end)
    page.get_by_role("button", name="Submit").click()  # on the page itself, not in a frame
    page.wait_for_selector("#submitted")
    stored = hit.stored()
    assert len(stored) == 1
    assert stored[0][0] == {"mistakes": [[start, end]], "missing": [[at, last]]}
    assert all(answer == {"mistakes": [], "missing": []} for answer in stored[0][1:])


def test_compare_page_places_swap_keep_on_error_and_two_way_choice(page, open_hit) -> None:
    hit = open_hit("compare")
    frame = hit.frame
    items = frame.locator("fieldset.compare-item")
    count = hit.count(items)
    sizes = [items.nth(k).locator("section.candidate").count() for k in range(count)]
    ranked = next(k for k, n in enumerate(sizes) if n > 2)
    assert 2 in sizes, sizes  # the page has both kinds: places and a two-way choice
    places = items.nth(ranked).locator("select")
    status = items.nth(ranked).locator("[data-compare-status]")
    # Taking a place another description holds swaps them, and says so.
    places.nth(0).select_option("1")
    places.nth(1).select_option("1")
    assert places.nth(0).input_value() == ""
    assert status.inner_text() == "Description A has no place now."
    places.nth(0).select_option("2")
    places.nth(0).focus()
    page.keyboard.press("1")  # by keyboard: type the place on the focused list
    assert (places.nth(0).input_value(), places.nth(1).input_value()) == ("1", "2")
    assert status.inner_text() == "Description B moved to place 2."
    hit.submit()
    assert f"Please fix {count} problem" in frame.locator("#error-summary").inner_text()
    items = frame.locator("fieldset.compare-item")
    places = items.nth(ranked).locator("select")
    assert (places.nth(0).input_value(), places.nth(1).input_value()) == ("1", "2")  # kept
    expected = []
    for k in range(count):
        item = items.nth(k)
        if sizes[k] > 2:
            selects = item.locator("select")
            names = [selects.nth(j).get_attribute("name") or "" for j in range(sizes[k])]
            for j in range(sizes[k]):
                selects.nth(j).select_option(str(j + 1))  # best first, in page order
            expected.append([n.split("-", 2)[2] for n in names])
        else:
            item.get_by_label("Description B is better").check()
            expected.append(
                (item.get_by_label("Description B is better").get_attribute("value") or "").split(",")
            )
    assert hit.submit_and_read_stored() == [expected]
