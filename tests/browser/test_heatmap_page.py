"""The heatmap page in headless Chromium: pick a sentence, strength slider, boxes, ratings, own prompt."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import FrameLocator, Page
from sqlalchemy import select

from demo.tasks.heatmap import MODELS
from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.heatmaps import HeatmapRequest
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates.heatmap import QUESTIONS
from server.requester.hit_pages.heatmap_views import NO_HEATMAP
from tests.helpers import launch_template_campaign
from tests.templates.test_heatmap_live import TIME_LIMIT, launch, model_server, private_server

__all__ = ["model_server", "private_server"]  # fixtures shared with the HTTP tests

pytestmark = pytest.mark.browser


def _opacity(frame: FrameLocator, slot: int, part: str) -> list[str]:
    overlays = frame.locator(f"#slot-{slot} section.round-{part} img.heat-overlay")
    return [overlays.nth(k).evaluate("img => getComputedStyle(img).opacity") for k in range(overlays.count())]


def _rate(frame: FrameLocator, slot: int, part: str, value: int, skip_last: bool = False) -> None:
    panels = frame.locator(f"#slot-{slot} section.round-{part} section.model-panel")
    for k in range(panels.count()):
        for n, q in enumerate(QUESTIONS):
            if skip_last and k == panels.count() - 1 and n == len(QUESTIONS) - 1:
                continue
            panels.nth(k).locator(f'input[type="radio"][name$="-{q}"][value="{value}"]').check()


def _open_hit(page: Page, base: str, hit_id: str, username: str) -> FrameLocator:
    """A new worker signs up and accepts the HIT: its framed page, once its items are there."""
    page.goto(base + "/signup")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password (at least 8 characters)").fill("a-long-password")
    page.get_by_role("button", name="Sign up").click()
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    frame = page.frame_locator("#hit-frame")
    frame.locator("fieldset.heatmap-item").first.wait_for()
    return frame


def _rate_shown(frame: FrameLocator, slot: int, value: int) -> None:
    """Give ``value`` to every question of every heatmap shown in both rounds (missing ones cannot be)."""
    for part in ("report", "custom"):
        for radio in frame.locator(
            f'#slot-{slot} section.round-{part} input[type="radio"][value="{value}"]'
        ).all():
            if radio.is_enabled():
                radio.check()


def _submitted(
    page: Page, frame: FrameLocator, requester_sessions, hit_id: str, keys: bool = False
) -> Submission:  # type: ignore[no-untyped-def]
    """Submit the page (``keys``: by keyboard, focus and Enter); the HIT's one stored submission."""
    if keys:
        frame.get_by_role("button", name="Submit").focus()
        page.keyboard.press("Enter")
    else:
        frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")
    with session_scope(requester_sessions) as session:
        (stored,) = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.mturk_hit_id == hit_id)
        ).all()
        return stored


def test_heatmap_page_by_a_worker_slider_boxes_sentence_lock_ratings_and_own_prompt(
    tmp_path, page: Page, live_server, market, requester_sessions
) -> None:
    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "heatmap", name="br-heatmap"
    )
    frame = _open_hit(page, live_server.url, hit_ids[0], "heatmap-worker")
    items = frame.locator("fieldset.heatmap-item")
    count = items.count()
    # Before a sentence is chosen no heatmap is on the page and nothing can be rated.
    assert frame.locator("img.heat-overlay").count() == 0
    assert frame.locator("section.round-report .heatmap-models").first.is_hidden()
    assert frame.locator('section.model-panel input[type="radio"]:enabled').count() == 0

    for slot in range(count):
        report = frame.locator(f"#slot-{slot} section.round-report")
        # By keyboard: focus the first sentence, Space picks it, Tab to the button, Enter shows the heatmaps.
        report.get_by_role("radio").first.focus()
        page.keyboard.press("Space")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        report.locator("img.heat-overlay").nth(len(MODELS) - 1).wait_for()
        assert report.locator("img.heat-overlay").count() == len(MODELS)
        assert "Heatmaps shown: 3 of 3" in report.locator(".heatmap-status").inner_text()
        # The choice is fixed: the other sentences cannot be picked any more.
        assert report.locator(".sentence-choices input:enabled").count() == 1
        if slot == 0:
            # Reloaded, the page brings back the choice and its heatmaps from the server, still fixed.
            report.evaluate("() => { document.body.dataset.before = '1'; location.reload(); }")
            frame.locator("body:not([data-before])").wait_for()  # the reloaded document, not the old one
            report.locator("img.heat-overlay").nth(len(MODELS) - 1).wait_for()
            assert report.get_by_role("radio").first.is_checked()
            assert report.locator(".sentence-choices input:enabled").count() == 1
            assert report.get_by_role("button", name="Show the heatmaps for this sentence").is_hidden()

        # The strength slider, by keyboard: each step changes every overlay's opacity.
        assert set(_opacity(frame, slot, "report")) == {"0.6"}
        slider = report.get_by_label(f"Heatmap strength, report sentence, image {slot + 1}")
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert set(_opacity(frame, slot, "report")) == {"0.7"}
        page.keyboard.press("Home")
        assert set(_opacity(frame, slot, "report")) == {"0"}
        slider.fill("85")
        assert set(_opacity(frame, slot, "report")) == {"0.85"}

        # Ground-truth boxes (the demo's first sentence has one): Space toggles them on and off.
        toggle = report.get_by_label("Show ground-truth boxes")
        assert toggle.is_enabled()
        boxes = report.locator("svg.heat-boxes")
        assert boxes.first.is_hidden() and boxes.first.locator("rect").count() == 1
        toggle.focus()
        page.keyboard.press("Space")
        assert all(boxes.nth(k).is_visible() for k in range(boxes.count()))
        page.keyboard.press("Space")
        assert boxes.first.is_hidden()

        _rate(frame, slot, "report", 4)

        custom = frame.locator(f"#slot-{slot} section.round-custom")
        assert custom.get_by_label("Show ground-truth boxes").count() == 0  # never for own prompts
        assert custom.locator("svg").count() == 0
        custom.get_by_label("Your sentence about the image").fill(f"a bright spot, upper left {slot}")
        custom.get_by_label("Your sentence about the image").press("Enter")
        custom.locator("img.heat-overlay").nth(len(MODELS) - 1).wait_for()
        _rate(frame, slot, "custom", 2, skip_last=slot == count - 1)

    # One question left open: the error names it, and everything the worker did is still there.
    frame.get_by_role("button", name="Submit").click()
    summary = frame.locator("#error-summary")
    summary.wait_for()
    assert f"Image {count}: rate every heatmap for your own sentence (1 still open)" in summary.inner_text()
    last_custom = frame.locator(f"#slot-{count - 1} section.round-custom")
    last_custom.locator("img.heat-overlay").nth(len(MODELS) - 1).wait_for()  # heatmaps made again
    frame.locator("#slot-0 section.round-report img.heat-overlay").nth(len(MODELS) - 1).wait_for()
    assert (
        frame.locator('section.round-report input[type="radio"][value="4"]:checked').count() == count * 3 * 3
    )
    assert (
        last_custom.get_by_label("Your sentence about the image").input_value()
        == f"a bright spot, upper left {count - 1}"
    )
    _rate(frame, count - 1, "custom", 2)
    submission = _submitted(page, frame, requester_sessions, hit_ids[0])
    with session_scope(requester_sessions) as session:
        arranged = session.scalars(
            select(SlotArrangement).where(SlotArrangement.assignment_id == submission.assignment_id)
        ).all()
    stored = submission.answers["answers"]
    assert len(arranged) == count
    for slot, answer in enumerate(stored):
        assert answer["sentence"] == 0 and answer["prompt"] == f"a bright spot, upper left {slot}"
        assert answer["report"] == {m: dict.fromkeys(QUESTIONS, 4) for m in MODELS}  # model names again
        assert answer["custom"] == {m: dict.fromkeys(QUESTIONS, 2) for m in MODELS}


def test_a_slow_or_failing_model_leaves_the_page_usable_and_is_marked_missing(
    tmp_path, page: Page, live_server, private_server, model_server, market, requester_sessions
) -> None:
    """The page is served (and asks for heatmaps) where the operator lets models on its network be called."""
    hit_id, _ = launch(tmp_path, market, requester_sessions, private_server.url, model_server, "br-hm-fail")
    frame = _open_hit(page, live_server.url, hit_id, "heatmap-worker-2")
    for slot in range(2):
        # Round one first (own prompts wait for its choice); its slow and failing models too.
        report = frame.locator(f"#slot-{slot} section.round-report")
        report.get_by_role("radio").nth(slot).check()
        report.get_by_role("button", name="Show the heatmaps for this sentence").click()
        report.locator(".heatmap-status").filter(has_text="Heatmaps shown").wait_for()
        custom = frame.locator(f"#slot-{slot} section.round-custom")
        custom.get_by_label("Your sentence about the image").fill("a shadow at the top left")
        started = time.monotonic()
        custom.get_by_role("button", name="Make heatmaps for my sentence").click()
        status = custom.locator(".heatmap-status")
        status.filter(has_text="Heatmaps shown").wait_for()
        assert time.monotonic() - started < TIME_LIMIT + 10  # the slow model (30 s) is not waited for
        assert "2 of 5" in status.inner_text() and "3 could not be made" in status.inner_text()
        messages = custom.locator(".model-message:visible")
        assert messages.count() == 3 and set(messages.all_inner_texts()) == {NO_HEATMAP}
        assert custom.locator("img.heat-overlay:visible").count() == 2
        for panel in custom.locator("section.model-panel").all():
            failed = panel.locator(".model-message").is_visible()
            assert panel.locator('input[type="radio"]:enabled').count() == (0 if failed else 15)
        # Everything else still works: the slider, ratings, submitting.
        custom.get_by_label(f"Heatmap strength, your sentence, image {slot + 1}").fill("30")
        assert set(_opacity(frame, slot, "custom")) == {"0.3"}
        _rate_shown(frame, slot, 3)
    for slot, answer in enumerate(_submitted(page, frame, requester_sessions, hit_id).answers["answers"]):
        assert answer["sentence"] == slot and answer["prompt"] == "a shadow at the top left"
        assert {m for m, r in answer["custom"].items() if r is None} == {
            "sloth-remote",
            "crashy-remote",
            "garble-remote",
        }
        assert answer["custom"]["quokkaformer"] == dict.fromkeys(QUESTIONS, 3)


def _overlays(frame: FrameLocator, slot: int, part: str) -> dict[str, str | None]:
    """Each model panel's token -> the overlay it shows (None: marked missing)."""
    panels = frame.locator(f"#slot-{slot} section.round-{part} section.model-panel")
    shown: dict[str, str | None] = {}
    for panel in panels.all():
        overlay = panel.locator("img.heat-overlay")
        visible = overlay.count() == 1 and overlay.is_visible()
        shown[str(panel.get_attribute("data-token"))] = overlay.get_attribute("src") if visible else None
    return shown


def _calls(requester_sessions, assignment_id: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        rows = session.scalars(
            select(HeatmapRequest.call_id).where(HeatmapRequest.assignment_id == assignment_id)
        )
        return len(set(rows))


def test_a_reload_brings_back_the_heatmaps_of_both_rounds_to_rate_and_submit(
    tmp_path, page: Page, live_server, private_server, model_server, market, requester_sessions
) -> None:
    """Live heatmaps (some models failing) survive a reload: the same ones, no model asked again."""
    hit_id, _ = launch(tmp_path, market, requester_sessions, private_server.url, model_server, "br-hm-reload")
    frame = _open_hit(page, live_server.url, hit_id, "heatmap-worker-3")
    prompts = ["a shadow at the top left", "something bright lower right"]
    before = {}
    for slot in range(2):
        report = frame.locator(f"#slot-{slot} section.round-report")
        report.get_by_role("radio").nth(1).check()
        report.get_by_role("button", name="Show the heatmaps for this sentence").click()
        report.locator(".heatmap-status").filter(has_text="Heatmaps shown").wait_for()
        custom = frame.locator(f"#slot-{slot} section.round-custom")
        custom.get_by_label("Your sentence about the image").fill(prompts[slot])
        custom.get_by_role("button", name="Make heatmaps for my sentence").click()
        custom.locator(".heatmap-status").filter(has_text="Heatmaps shown").wait_for()
        before[slot] = (_overlays(frame, slot, "report"), _overlays(frame, slot, "custom"))
        assert sum(src is not None for src in before[slot][1].values()) == 2  # the built-in, the good remote
    assignment_id = str(frame.locator('input[name="assignmentId"]').input_value())
    calls = _calls(requester_sessions, assignment_id)
    assert calls == 4

    page.reload()
    frame = page.frame_locator("#hit-frame")
    for slot in range(2):
        custom = frame.locator(f"#slot-{slot} section.round-custom")
        custom.locator(".heatmap-status").filter(has_text="Heatmaps shown: 2 of 5").wait_for()
        report = frame.locator(f"#slot-{slot} section.round-report")
        report.locator(".heatmap-status").filter(has_text="Heatmaps shown").wait_for()
        # The very heatmaps shown before, under the same tokens, the same ones marked missing.
        assert (_overlays(frame, slot, "report"), _overlays(frame, slot, "custom")) == before[slot]
        assert custom.get_by_label("Your sentence about the image").input_value() == prompts[slot]
        assert report.get_by_role("radio").nth(1).is_checked()
        assert report.locator(".sentence-choices input:enabled").count() == 1
        assert custom.locator(".model-message:visible").count() == 3
        _rate_shown(frame, slot, 2)
    assert _calls(requester_sessions, assignment_id) == calls  # nothing was asked of the models again
    answers = _submitted(page, frame, requester_sessions, hit_id).answers["answers"]
    for slot, answer in enumerate(answers):
        assert answer["sentence"] == 1 and answer["prompt"] == prompts[slot]
        assert answer["custom"]["zebranet-seven"] == dict.fromkeys(QUESTIONS, 2)
        assert answer["custom"]["quokkaformer"] == dict.fromkeys(QUESTIONS, 2)
        assert {m for m, r in answer["custom"].items() if r is None} == {
            "sloth-remote",
            "crashy-remote",
            "garble-remote",
        }


def _rate_by_keyboard(page: Page, frame: FrameLocator, slot: int, part: str, value: int) -> None:
    """Every question of every heatmap shown, by keyboard: Tab into each group, arrows to ``value``."""
    groups = frame.locator(f"#slot-{slot} section.round-{part} .rating-group")
    for k in range(groups.count()):
        first = groups.nth(k).get_by_role("radio").first
        if first.is_disabled():
            continue  # a heatmap that did not come: marked missing, nothing to rate
        first.focus()
        page.keyboard.press("Space")  # a radio group is entered on its first answer; Space picks it
        for _ in range(value - 1):
            page.keyboard.press("ArrowRight")  # each arrow moves the choice one answer on


def test_ratings_by_keyboard_alone_and_no_box_toggle_for_a_sentence_without_boxes(
    tmp_path, page: Page, live_server, model_server, market, requester_sessions
) -> None:
    models = {
        "zebranet-seven": {"provider": "builtin", "spread": 0.1},
        "otterscope": {"provider": "builtin", "spread": 0.2, "decoys": 1},
    }
    hit_id, _ = launch(
        tmp_path, market, requester_sessions, live_server.url, model_server, "br-hm-keys", models=models
    )
    frame = _open_hit(page, live_server.url, hit_id, "heatmap-keys")
    for slot in range(2):
        report = frame.locator(f"#slot-{slot} section.round-report")
        # The second sentence ("The right side is clear.") has no ground-truth boxes.
        report.get_by_role("radio").first.focus()
        page.keyboard.press("ArrowDown")  # moves the choice to the second sentence
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        report.locator(".heatmap-status").filter(has_text="Heatmaps shown: 2 of 2").wait_for()
        toggle = report.get_by_label("Show ground-truth boxes")
        assert toggle.is_disabled() and not toggle.is_checked()
        assert report.locator("svg.heat-boxes:visible").count() == 0
        _rate_by_keyboard(page, frame, slot, "report", 4)
        custom = frame.locator(f"#slot-{slot} section.round-custom")
        custom.get_by_label("Your sentence about the image").focus()
        page.keyboard.type(f"a pale spot at the lower right {slot}")
        page.keyboard.press("Enter")
        custom.locator(".heatmap-status").filter(has_text="Heatmaps shown: 2 of 2").wait_for()
        _rate_by_keyboard(page, frame, slot, "custom", 2)
    answers = _submitted(page, frame, requester_sessions, hit_id, keys=True).answers["answers"]
    for slot, answer in enumerate(answers):
        assert answer["sentence"] == 1 and answer["prompt"] == f"a pale spot at the lower right {slot}"
        assert answer["report"] == {m: dict.fromkeys(QUESTIONS, 4) for m in models}
        assert answer["custom"] == {m: dict.fromkeys(QUESTIONS, 2) for m in models}
