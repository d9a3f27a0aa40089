"""The objects page in headless Chromium: seeded boxes edited by mouse and keyboard, stored as triples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect
from sqlalchemy import select

from demo.tasks import save_png, write_jsonl
from demo.tasks.objects import draw_scene
from hits.db import session_scope
from hits.requester.tables.campaigns import HITSlot, PublishedHIT, Submission
from tests.helpers import accept_in_browser, publish_campaign_file, sign_up_in_browser

pytestmark = pytest.mark.browser

#: Every picture's seeds: two right-ish objects, a box around nothing, and one triangle in two pieces.
SEEDS = [
    {"label": "red circle", "box": [20, 20, 60, 60], "description": "a circle"},
    {"label": "blue square", "box": [120, 20, 60, 60], "description": ""},
    {"label": "smudge", "box": [250, 30, 30, 30], "description": ""},
    {"label": "green triangle", "box": [20, 140, 30, 70], "description": "the left half of a triangle"},
    {"label": "green triangle", "box": [55, 140, 30, 70], "description": ""},
]
SHAPES = [
    {"shape": "circle", "colour": "red", "box": [30, 25, 65, 65]},
    {"shape": "square", "colour": "blue", "box": [113, 21, 62, 64]},
    {"shape": "triangle", "colour": "green", "box": [20, 140, 65, 70]},
    {"shape": "square", "colour": "yellow", "box": [200, 140, 60, 60]},
]


def _launch(folder: Path, market, requester_sessions, url: str, name: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """A one-HIT objects campaign of three pictures with the seeds above (no gold); (campaign id, HIT id)."""
    rows = []
    for n in range(3):
        shapes = [
            {**s, "colour": ["red", "blue", "purple"][n] if k == 0 else s["colour"]}
            for k, s in enumerate(SHAPES)
        ]
        image = save_png(folder / "media", draw_scene(shapes))
        rows.append(
            {
                "id": f"pic-{n}",
                "item": {"image": image, "width": 320, "height": 240, "objects": SEEDS, "alt": "Shapes"},
            }
        )
    write_jsonl(folder / "items.jsonl", rows)
    spec = {
        "name": name,
        "template": "objects",
        "title": f"Fix the objects {name}",
        "description": "Fix the boxes and describe the objects.",
        "reward": "0.10",
        "budget": "10.00",
        "assignments_per_hit": 1,
        "gold_per_hit": 0,
        "items_per_hit": 3,
        "items": "items.jsonl",
        "media_dir": "media",
        "auto_approval_delay_seconds": 3600,
    }
    campaign_id = publish_campaign_file(folder, spec, market, requester_sessions, url)
    with session_scope(requester_sessions) as session:
        hit_id = session.scalar(
            select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
        )
    return campaign_id, str(hit_id)


def _objects(item: Locator) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(item.locator("input[data-objects-field]").get_attribute("value") or "[]")


def _drag(page: Page, start: tuple[float, float], end: tuple[float, float]) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=3)
    page.mouse.move(*end, steps=3)
    page.mouse.up()


def _open_hit(page: Page, url: str, hit_id: str, worker: str) -> FrameLocator:
    frame: FrameLocator = accept_in_browser(page, url, worker, hit_id)
    frame.locator("fieldset.objects-item").first.wait_for()
    return frame


def test_worker_edits_deletes_draws_merges_and_describes_and_the_triples_are_stored(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    campaign_id, hit_id = _launch(tmp_path, market, requester_sessions, live_server.url, "br-objects")
    frame = _open_hit(page, live_server.url, hit_id, "objects-worker")
    item = frame.locator("fieldset.objects-item").nth(0)
    assert _objects(item) == SEEDS  # the seeds, boxes drawn and listed
    # The boxes are drawn once the picture has loaded (slow on a loaded machine): waited for, not raced.
    expect(item.locator(".objects-box")).to_have_count(5)
    assert item.locator("li.objects-entry").count() == 5
    assert item.get_by_label("Object 2 label").input_value() == "blue square"
    item.locator("img").scroll_into_view_if_needed()
    img = item.locator("img").bounding_box()
    assert img is not None
    scale = img["width"] / 320  # page pixels per picture pixel

    def at(x: float, y: float) -> tuple[float, float]:
        return img["x"] + x * scale, img["y"] + y * scale

    # Mouse: drag object 1 by (10, 5) picture pixels, then its bottom right corner by (5, 5).
    _drag(page, at(50, 50), at(60, 55))
    assert _objects(item)[0]["box"] == [30, 25, 60, 60]
    handle = item.locator('.objects-box[data-index="0"] .objects-handle.se').bounding_box()
    assert handle is not None
    centre = (handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    _drag(page, centre, (centre[0] + 5 * scale, centre[1] + 5 * scale))
    assert _objects(item)[0]["box"] == [30, 25, 65, 65]
    assert "Resized object 1 (red circle)" in item.locator("[data-status]").inner_text()

    # Keyboard: Tab from box 1 to box 2; arrows move, Shift+arrows resize, Alt+arrows move by ten.
    page.keyboard.press("Tab")
    assert frame.locator(":focus").get_attribute("data-index") == "1"
    for key in ["ArrowRight"] * 3 + ["ArrowDown"] + ["Shift+ArrowRight"] * 2 + ["Shift+ArrowDown"] * 4:
        page.keyboard.press(key)
    page.keyboard.press("Alt+ArrowLeft")
    assert _objects(item)[1]["box"] == [113, 21, 62, 64]
    assert "x 113, y 21, 62 by 64 pixels" in str(frame.locator(":focus").get_attribute("aria-label"))
    # The list mirrors the canvas.
    assert item.get_by_label("Object 2 left edge (x), picture 1").input_value() == "113"

    # Delete the box around nothing by keyboard: Tab to it, Delete.
    page.keyboard.press("Tab")
    assert frame.locator(":focus").get_attribute("aria-label", timeout=2000).startswith("Object 3: smudge")
    page.keyboard.press("Delete")
    assert [o["label"] for o in _objects(item)] == [
        "red circle",
        "blue square",
        "green triangle",
        "green triangle",
    ]
    assert "Deleted object 3 (smudge)" in item.locator("[data-status]").inner_text()

    # Merge the two triangle pieces: one selected from the list, one by Space on its box.
    item.get_by_label("Select object 3 for merging").check()
    item.locator('.objects-box[data-index="3"]').focus()
    page.keyboard.press("Space")
    item.get_by_role("button", name="Merge selected").click()
    merged = _objects(item)[2]
    assert merged == {
        "label": "green triangle",
        "box": [20, 140, 65, 70],
        "description": "the left half of a triangle",
    }
    assert item.locator(".objects-box").count() == 3

    # Draw a missing object on an empty part of the picture; its label gets the focus.
    item.locator("img").scroll_into_view_if_needed()
    img = item.locator("img").bounding_box()
    assert img is not None
    _drag(page, at(200, 140), at(260, 200))
    assert _objects(item)[3]["box"] == [200, 140, 60, 60]
    page.keyboard.type("yellow square")
    item.get_by_label("Object 1 label").fill("red ball")

    descriptions = [
        "A red ball near the top left corner.",
        "A blue square at the top, right of the ball.",
        "A green triangle at the bottom left, pointing up.",
        "A yellow square at the bottom, to the right.",
    ]
    for n, text in enumerate(descriptions, start=1):
        if n != 4:  # the last one stays empty for now: the server refuses it
            item.get_by_label(f"Object {n} description").fill(text)

    # Picture 2, by keyboard only: "Add object", move it, Enter to its label, Tab to its description.
    second = frame.locator("fieldset.objects-item").nth(1)
    second.get_by_role("button", name="Add object").focus()
    page.keyboard.press("Enter")
    assert frame.locator(":focus").get_attribute("data-index") == "5"
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.keyboard.type("purple circle")
    page.keyboard.press("Tab")
    page.keyboard.type("A purple circle drawn in the middle of the picture.")
    assert _objects(second)[5] == {
        "label": "purple circle",
        "box": [115, 90, 80, 60],
        "description": "A purple circle drawn in the middle of the picture.",
    }
    for picture in (1, 2):  # the seeds' empty descriptions, filled in
        other = frame.locator("fieldset.objects-item").nth(picture)
        for k in range(other.locator("li.objects-entry").count()):
            box = other.get_by_label(f"Object {k + 1} description")
            if len(box.input_value()) < 10:
                box.fill(f"Object number {k + 1} of picture {picture + 1}.")

    # A refused submit names the picture, object and field, and keeps every edit.
    frame.get_by_role("button", name="Submit").click()
    summary = frame.locator("#error-summary").inner_text()
    assert "Please fix 1 problem" in summary
    assert "Picture 1: Object 4 (\u201cyellow square\u201d): the description is too short" in summary
    item = frame.locator("fieldset.objects-item").nth(0)
    kept = _objects(item)
    assert [o["label"] for o in kept] == ["red ball", "blue square", "green triangle", "yellow square"]
    assert item.locator(".objects-box").count() == 4
    item.get_by_label("Object 4 description").fill(descriptions[3])
    frame.get_by_role("button", name="Submit").click()
    page.wait_for_selector("#submitted")

    with session_scope(requester_sessions) as session:
        (submission,) = session.scalars(
            select(Submission).join(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
        ).all()
        stored = submission.answers["answers"]
        positions = session.scalars(
            select(HITSlot.position).where(HITSlot.published_hit_id == submission.published_hit_id)
        ).all()
    assert len(stored) == len(positions) == 3
    assert stored[0] == [
        {"label": "red ball", "box": [30, 25, 65, 65], "description": descriptions[0]},
        {"label": "blue square", "box": [113, 21, 62, 64], "description": descriptions[1]},
        {"label": "green triangle", "box": [20, 140, 65, 70], "description": descriptions[2]},
        {"label": "yellow square", "box": [200, 140, 60, 60], "description": descriptions[3]},
    ]
    assert stored[1][5] == {
        "label": "purple circle",
        "box": [115, 90, 80, 60],
        "description": "A purple circle drawn in the middle of the picture.",
    }
    assert [o["label"] for o in stored[2]] == [o["label"] for o in SEEDS]  # untouched but described


def test_preview_shows_the_seeds_without_letting_anyone_edit_them_and_focus_is_visible(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    _, hit_id = _launch(tmp_path, market, requester_sessions, live_server.url, "br-objects-preview")
    sign_up_in_browser(page, live_server.url, "objects-previewer")
    page.goto(f"{live_server.url}/hits/{hit_id}")
    frame = page.frame_locator("#hit-frame")
    item = frame.locator("fieldset.objects-item").first
    item.wait_for()
    expect(item.locator(".objects-box")).to_have_count(5)  # the seeds are shown (once the picture loads) ...
    assert item.locator(".objects-box[tabindex]").count() == 0  # ... but cannot be focused, moved or drawn on
    assert item.locator(".objects-handle").count() == 0
    assert item.get_by_label("Object 1 label").is_disabled()
    assert item.get_by_role("button", name="Add object").is_disabled()
    assert frame.get_by_role("button", name="Submit").count() == 0
    before = _objects(item)
    img = item.locator("img").bounding_box()
    assert img is not None
    _drag(page, (img["x"] + 50, img["y"] + 50), (img["x"] + 90, img["y"] + 90))
    assert _objects(item) == before == SEEDS

    # An assignment's page: a focused box shows a visible outline and its handles.
    page.goto(f"{live_server.url}/")
    page.locator(f'tr[data-hit-id="{hit_id}"] button').click()
    item = page.frame_locator("#hit-frame").locator("fieldset.objects-item").first
    item.wait_for()
    box = item.locator('.objects-box[data-index="0"]')
    box.focus()
    assert box.evaluate("b => getComputedStyle(b).outlineStyle") != "none"
    assert box.locator(".objects-handle.se").is_visible()
    assert box.get_attribute("aria-label") == "Object 1: red circle, x 20, y 20, 60 by 60 pixels"


def test_merging_on_the_page_follows_the_servers_merge_rule(
    tmp_path, page, live_server, market, requester_sessions
) -> None:
    from hits.requester.templates.objects.geometry import merge_objects

    _, hit_id = _launch(tmp_path, market, requester_sessions, live_server.url, "br-objects-merge")
    frame = _open_hit(page, live_server.url, hit_id, "objects-merger")
    item = frame.locator("fieldset.objects-item").nth(2)
    # Three different labels (a tie: the largest piece names the whole), descriptions kept once each.
    for n in (1, 2, 4):
        item.get_by_label(f"Select object {n} for merging").check()
    item.get_by_label("Object 2 description").fill("A CIRCLE")  # the same text as object 1's, in capitals
    item.get_by_role("button", name="Merge selected").click()
    pieces = [SEEDS[0], {**SEEDS[1], "description": "A CIRCLE"}, SEEDS[3]]
    assert _objects(item) == [merge_objects(pieces), SEEDS[2], SEEDS[4]]
    assert _objects(item)[0] == {
        "label": "red circle",
        "box": [20, 20, 160, 190],
        "description": "a circle the left half of a triangle",
    }
    assert "Merged objects 1, 2, 4 into object 1" in item.locator("[data-status]").inner_text()
    # Fewer than two selected: nothing merges, and the page says why.
    item.get_by_label("Select object 2 for merging").check()
    item.get_by_role("button", name="Merge selected").click()
    assert (
        "Select at least two objects for merging first (1 selected)"
        in item.locator("[data-status]").inner_text()
    )
    assert len(_objects(item)) == 3
