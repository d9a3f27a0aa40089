"""A QA reviewer in Chromium opens held assignments of several templates: marks drawn where they belong.

Screenshots of the pages go to ``HITFORGE_SCREENSHOTS_DIR`` when it is set, else to a scratch
folder. The pages are checked as served (their Content-Security-Policy in force, so nothing
drawn may depend on inline styles), then again under axe for accessibility.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from PIL import Image
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.staff import assign_campaign
from hits.requester.tables.campaigns import Campaign, StaffUser
from tests.browser.accessibility import assert_accessible
from tests.server.test_dashboard import staff_session
from tests.server.test_review_queue import seed

pytestmark = pytest.mark.browser

BLANK = "data:image/svg+xml," + quote(
    "<svg xmlns='http://www.w3.org/2000/svg' width='400' height='320'>"
    "<rect width='400' height='320' fill='#bcd'/></svg>"
)
CAT = {"label": "cat", "left": 153, "top": 130, "width": 102, "height": 70}
PAIR = {
    "image": "scene.png",
    "candidates": [
        {"id": "c1", "text": "A cat on a sofa.", "system": "captioner-A"},
        {"id": "c2", "text": "A sofa.", "system": "captioner-B"},
    ],
}
PREFERENCES = {
    "comprehensiveness": -1,
    "specificity": 0,
    "hallucinations": 1,
    "tldr": 2,
    "human_likeness": -2,
}
OBJECTS = {"image": "scene.png", "width": 400, "height": 300, "objects": []}
TARGET = {
    "image": "scene.png",
    "width": 400,
    "height": 300,
    "box": {"x": 40, "y": 30, "width": 160, "height": 90},
    "expression": "the cat",
    "item_id": "t1",
    "system": "refgen",
}
HEATMAP = {
    "image": "scene.png",
    "width": 400,
    "height": 300,
    "models": ["m-a", "m-b"],
    "sentences": [{"text": "A cat.", "boxes": [{"x": 10, "y": 10, "width": 50, "height": 40}]}],
}
RANK = {
    "image": "scene.png",
    "candidates": [{"id": f"r{n}", "image": "scene.png", "system": f"gen-{n}"} for n in (1, 2, 3)],
}
RATED = {"coverage": 4, "share": 3, "intuitive": 2}
#: template -> what seed() stores: (item payload, gold payload, gold key, [item answer, gold answer]).
CASES: dict[str, tuple[dict[str, Any], dict[str, Any], Any, list[Any]]] = {
    "objects": (
        OBJECTS,
        OBJECTS,
        {"objects": [{"label": "cat", "box": [100, 60, 200, 150]}]},
        [
            [{"label": "cat", "box": [100, 75, 200, 150], "description": "a cat"}],
            [{"label": "cat", "box": [120, 60, 160, 120], "description": "a cat"}],
        ],
    ),
    "target": (TARGET, TARGET, {"category": "A"}, ["O", "A"]),
    "sxs": (PAIR, PAIR, {"preferences": {"tldr": 1}}, [PREFERENCES, PREFERENCES]),
    "batch": (
        {"image_url": BLANK},
        {"image_url": BLANK},
        {"annotatedResult.boundingBoxes": json.dumps([{**CAT, "left": 150}])},
        [
            {
                "taskAnswers": json.dumps(
                    [
                        {
                            "annotatedResult": {
                                "boundingBoxes": [CAT, {**CAT, "label": "dog", "left": 20, "top": 15}],
                                "inputImageProperties": {"height": 320, "width": 400},
                            }
                        }
                    ]
                )
            },
            {
                "annotatedResult.boundingBoxes": json.dumps([CAT]),
                "annotatedResult.inputImageProperties.height": "320",
                "annotatedResult.inputImageProperties.width": "400",
            },
        ],
    ),
    "compare": (PAIR, PAIR, {"order": ["c1", "c2"]}, [["c2", "c1"], ["c1", "c2"]]),
    "heatmap": (
        HEATMAP,
        HEATMAP,
        {"sentences": {"0": {"m-a": {"coverage": 4}}}},
        [{"sentence": 0, "report": {"m-a": RATED, "m-b": None}, "prompt": "a cat", "custom": {"m-a": RATED}}]
        * 2,
    ),
    "rank": (
        RANK,
        RANK,
        {"ranks": {"r1": 1, "r2": 2, "r3": 3}},
        [{"r1": 2, "r2": 1, "r3": 2}, {"r1": 1, "r2": 3, "r3": 2}],
    ),
    "refine": (
        {"image": "scene.png", "previous": "A cat."},
        {"image": "scene.png"},
        {},
        ["A grey cat sleeps.", "x"],
    ),
    "write": (
        {"image": "scene.png", "example": "A dog."},
        {"image": "scene.png"},
        {},
        ["A cat sleeps.", "x"],
    ),
    "rating": (
        {"image": "scene.png", "sentence": "A cat sleeps on a sofa."},
        {"image": "scene.png", "sentence": "Two green triangles."},
        {"rating": 4},
        ["3", "1"],
    ),
    "select": (
        {"image": "scene.png", "sentences": ["A cat on a sofa.", "A dog in the snow."]},
        {"image": "scene.png", "sentences": ["A grey cat.", "A red bus."]},
        {"correct": [0]},
        [[1], [1]],
    ),
    "spans": (
        {"image": "scene.png", "correct": "A grey cat sleeps.", "generated": "A blue cat sleeps here."},
        {"image": "scene.png", "correct": "A red bus.", "generated": "A green bus."},
        {"mistakes": [[2, 7]], "missing": []},
        [{"mistakes": [[2, 6]], "missing": []}, {"mistakes": [[8, 11]], "missing": []}],
    ),
}
#: template -> texts the evidence page must show, as rendered (the item, the worker's answer, gold's).
SHOWN: dict[str, list[str]] = {
    "compare": ["captioner-B", "captioner-A"],
    "rank": ["gen-1", "gen-2", "gen-3"],
    "heatmap": ["A cat."],
    "refine": ["A cat.", "grey", "sleeps"],
    "write": ["A cat sleeps."],
    "rating": ["A cat sleeps on a sofa.", "the worker's rating", "expected"],
    "select": ["A dog in the snow.", "ticked", "describes it"],
    "spans": ["A blue cat sleeps here."],
}


def _held(requester_sessions, media: Path, template: str) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A held assignment of ``template`` whose campaign serves pictures from ``media``: (campaign, id)."""
    item, gold, key, answers = CASES[template]
    _, name, _, (assignment_id,) = seed(
        requester_sessions,
        template=template,
        item_payload=item,
        gold_payload=gold,
        gold_answer=key or {"none": 0},
        answers=answers,
    )
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None
        campaign.spec = {**campaign.spec, "media_path": str(media)}
    return name, assignment_id


def _reviewer_in(context, base: str, requester_sessions, campaigns: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Sign a QA reviewer in, assigned ``campaigns``, and give ``context`` their cookies."""
    http = staff_session(base, requester_sessions, role="qa")
    with session_scope(requester_sessions) as session:
        user = session.scalars(select(StaffUser).order_by(StaffUser.id.desc())).first()
        assert user is not None and user.role == "qa"
        for name in campaigns:
            assign_campaign(session, user.username, name)
    context.add_cookies([{"name": c.name, "value": c.value or "", "url": base} for c in http.cookies])


def _boxes_where_they_belong(page, slot: int, expected: dict[str, list[tuple[float, ...]]]) -> None:  # type: ignore[no-untyped-def]
    """The marks of the ``slot``-th item are drawn over its picture where their pixel boxes say."""
    section = page.locator("section.slot").nth(slot)
    frame = section.locator(".drawn-frame").first
    picture = frame.locator("img, svg.drawn-blank").first
    assert picture.evaluate("e => e.tagName === 'svg' || (e.complete && e.naturalWidth > 0)"), "not loaded"
    width, height = (
        float(frame.get_attribute("data-width") or 0),
        float(frame.get_attribute("data-height") or 0),
    )
    shown = picture.bounding_box()
    assert shown is not None and shown["width"] > 50
    scale_x, scale_y = shown["width"] / width, shown["height"] / height
    for who, boxes in expected.items():
        rects = frame.locator(f"svg.drawn-marks g.mark-{who} rect.line")
        assert rects.count() == len(boxes), who
        for n, (x, y, w, h) in enumerate(boxes):
            got = rects.nth(n).bounding_box()
            assert got is not None
            want = (shown["x"] + x * scale_x, shown["y"] + y * scale_y, w * scale_x, h * scale_y)
            have = (got["x"], got["y"], got["width"], got["height"])
            # (a rect's box includes half its stroke on each side)
            assert all(abs(a - b) <= 3 for a, b in zip(have, want, strict=True)), (who, n, have, want)


def test_a_reviewer_sees_boxes_drawn_where_they_belong_and_the_pages_pass_axe(
    browser, tmp_path, live_server, requester_sessions
) -> None:
    shots = Path(os.environ.get("HITFORGE_SCREENSHOTS_DIR") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (400, 300), (180, 200, 220)).save(tmp_path / "scene.png")
    held = {template: _held(requester_sessions, tmp_path, template) for template in CASES}
    base = live_server.url
    # As served: the page's own CSP in force.
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        _reviewer_in(context, base, requester_sessions, [name for name, _ in held.values()])
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(f"{base}/dashboard/assignments/{held['objects'][1]}")
        _boxes_where_they_belong(page, 0, {"given": [(100, 75, 200, 150)]})
        _boxes_where_they_belong(page, 1, {"given": [(120, 60, 160, 120)], "wanted": [(100, 60, 200, 150)]})
        page.goto(f"{base}/dashboard/assignments/{held['target'][1]}")
        _boxes_where_they_belong(page, 0, {"given": [(40, 30, 160, 90)]})
        page.goto(f"{base}/dashboard/assignments/{held['batch'][1]}")
        _boxes_where_they_belong(page, 0, {"given": [(153, 130, 102, 70), (20, 15, 102, 70)]})
        _boxes_where_they_belong(page, 1, {"given": [(153, 130, 102, 70)], "wanted": [(150, 130, 102, 70)]})
        assert "boundingBoxes" not in page.content()
        page.goto(f"{base}/dashboard/assignments/{held['sxs'][1]}")
        table = page.locator("section.slot").first.locator("table.preferences")
        assert "captioner-A (c1) marginally better" in table.inner_text()
        assert "captioner-B (c2) substantially better" in table.inner_text()
        # Every other template: the item, the worker's answer and gold's, as text on the page.
        for template, texts in SHOWN.items():
            page.goto(f"{base}/dashboard/assignments/{held[template][1]}")
            shown = page.locator("main").inner_text()
            for text in texts:
                assert text in shown, (template, text)
            assert page.locator("section.slot").count() == 2, template  # the item and the gold item
        # The spans page marks the worker's span and gold's in the text itself.
        page.goto(f"{base}/dashboard/assignments/{held['spans'][1]}")
        item, gold = page.locator("section.slot").nth(0), page.locator("section.slot").nth(1)
        assert item.locator("mark.given").all_inner_texts() == ["blue"]
        assert gold.locator("mark.wanted").all_inner_texts() == ["green"]
    finally:
        context.close()
    # Under axe (its script needs the CSP bypassed), every template's evidence page.
    axe_context = browser.new_context(bypass_csp=True, viewport={"width": 1100, "height": 900})
    try:
        _reviewer_in(axe_context, base, requester_sessions, [name for name, _ in held.values()])
        page = axe_context.new_page()
        page.set_default_timeout(15_000)
        for template, (_, assignment_id) in held.items():
            page.goto(f"{base}/dashboard/assignments/{assignment_id}")
            assert "/signin" not in page.url
            assert_accessible(page, f"the evidence of a {template} assignment")
            page.screenshot(path=str(shots / f"evidence-{template}.png"), full_page=True)
    finally:
        axe_context.close()
