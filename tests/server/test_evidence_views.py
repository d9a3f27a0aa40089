"""Each template's own evidence view: the item, the worker's answer and gold's, as text and drawings.

Every page is read as a reviewer reads it (the rendered HTML); answers must show in
words or drawn marks, never as JSON, and every text from an item stays text.
"""

from __future__ import annotations

import json
from typing import Any

from bs4 import BeautifulSoup, Tag

from tests.server.test_dashboard import staff_session
from tests.server.test_review_queue import seed

SCRIPT = "<script>alert(1)</script>"


def evidence(live_server, requester_sessions, template: str, **seeded: Any) -> tuple[str, Tag, Tag]:  # type: ignore[no-untyped-def]
    """The held assignment's evidence page: (raw HTML, the item's slot, the gold slot)."""
    _, _, _, (assignment_id,) = seed(requester_sessions, template=template, **seeded)
    http = staff_session(live_server.url, requester_sessions)
    response = http.get(f"{live_server.url}/dashboard/assignments/{assignment_id}")
    assert response.status_code == 200
    assert SCRIPT not in response.text  # item texts are escaped
    item, gold = BeautifulSoup(response.text, "html.parser").select("section.slot")[:2]
    return response.text, item, gold


def text(tag: Tag | None) -> str:
    assert tag is not None
    return " ".join(tag.get_text().split())


def items(tag: Tag, selector: str) -> list[str]:
    return [text(li) for li in tag.select(selector)]


def drawn(tag: Tag, who: str) -> list[tuple[float, float, float, float]]:
    """The boxes drawn for ``who`` ("given": the worker, "wanted": gold) in the slot's SVG."""
    return [
        tuple(float(str(r[k])) for k in ("x", "y", "width", "height"))  # type: ignore[misc]
        for r in tag.select(f"svg.drawn-marks g.mark-{who} rect.line")
    ]


def test_sxs_names_the_systems_and_says_each_preference_in_words(live_server, requester_sessions) -> None:
    pair = {
        "image": "sxs.png",
        "candidates": [
            {"id": "c1", "text": f"First text {SCRIPT}", "system": "captioner-A"},
            {"id": "c2", "text": "Second text", "system": "captioner-B"},
        ],
    }
    page, item, gold = evidence(
        live_server,
        requester_sessions,
        "sxs",
        item_payload=pair,
        gold_payload=pair,
        gold_answer={"preferences": {"comprehensiveness": -2, "specificity": 1}},
        answers=[
            {"comprehensiveness": -1, "specificity": 2, "hallucinations": 0, "tldr": 1, "human_likeness": -2},
            {"comprehensiveness": 0, "specificity": 1, "hallucinations": 0, "tldr": 0, "human_likeness": 0},
        ],
    )
    assert "captioner-A (c1)" in text(item) and "captioner-B (c2)" in text(item)
    assert "First text " + SCRIPT in text(item)  # shown as text
    rows = {
        text(r.th): [text(td) for td in r.select("td")] for r in item.select("table.preferences tbody tr")
    }
    assert rows["Comprehensiveness"] == ["captioner-A (c1) marginally better"]
    assert rows["Specificity"] == ["captioner-B (c2) substantially better"]
    assert rows["Hallucinations"] == ["about the same"]
    gold_rows = {
        text(r.th): [text(td) for td in r.select("td")] for r in gold.select("table.preferences tbody tr")
    }
    assert gold_rows["Comprehensiveness"] == [
        "about the same",
        "captioner-A (c1) substantially better (off by 2 steps)",
    ]
    assert gold_rows["Specificity"] == [
        "captioner-B (c2) marginally better",
        "captioner-B (c2) marginally better (the same)",
    ]
    assert gold_rows["Hallucinations"][1] == "not in the key"
    assert "comprehensiveness" not in page  # the metric ids of the stored JSON are not on the page


def test_compare_shows_the_workers_order_and_golds_with_systems(live_server, requester_sessions) -> None:
    three = {
        "image": "cmp.png",
        "candidates": [
            {"id": "c1", "text": f"One {SCRIPT}", "system": "sys-one"},
            {"id": "c2", "text": "Two", "system": "sys-two"},
            {"id": "c3", "text": "Three", "system": ""},
        ],
    }
    _, item, gold = evidence(
        live_server,
        requester_sessions,
        "compare",
        item_payload=three,
        gold_payload=three,
        gold_answer={"order": ["c1", "c2", "c3"]},
        answers=[["c2", "c1", "c3"], ["c3", "c2", "c1"]],
    )
    assert items(item, "ol.order-given li") == ["sys-two (c2)", "sys-one (c1)", "no system named (c3)"]
    assert item.select("ol.order-wanted") == []
    assert items(gold, "ol.order-given li") == ["no system named (c3)", "sys-two (c2)", "sys-one (c1)"]
    assert items(gold, "ol.order-wanted li") == ["sys-one (c1)", "sys-two (c2)", "no system named (c3)"]
    places = [[text(c) for c in row.select("th, td")] for row in gold.select("table.candidates tbody tr")]
    assert places[0] == ["sys-one (c1)", f"One {SCRIPT}", "3", "1"]


def test_compare_with_two_says_which_the_worker_chose(live_server, requester_sessions) -> None:
    two = {
        "image": "cmp.png",
        "candidates": [{"id": "a", "text": "A text", "system": "left-sys"}, {"id": "b", "text": "B text"}],
    }
    _, item, _ = evidence(
        live_server,
        requester_sessions,
        "compare",
        item_payload=two,
        gold_payload=two,
        gold_answer={"order": ["a", "b"]},
        answers=[["b", "a"], ["a", "b"]],
    )
    assert "The worker chose no system named (b) as the better description." in text(item)


def test_rank_shows_ranks_ties_and_golds_by_candidate(live_server, requester_sessions) -> None:
    item_payload = {
        "image": "ref.png",
        "candidates": [
            {"id": "r1", "image": "r1.png", "system": "gen-1"},
            {"id": "r2", "image": "r2.png", "system": "gen-2"},
            {"id": "r3", "image": "r3.png", "system": "gen-3"},
        ],
        "condition": SCRIPT,
    }
    _, item, gold = evidence(
        live_server,
        requester_sessions,
        "rank",
        item_payload=item_payload,
        gold_payload=item_payload,
        gold_answer={"ranks": {"r1": 1, "r2": 2, "r3": 3}},
        answers=[{"r1": 3, "r2": 1, "r3": 1}, {"r1": 1, "r2": 1, "r3": 3}],
    )
    assert items(item, "ol.order-given li") == ["gen-2 (r2), tied", "gen-3 (r3), tied", "gen-1 (r1)"]
    assert [li["value"] for li in item.select("ol.order-given li")] == ["1", "1", "3"]
    assert items(gold, "ol.order-wanted li") == ["gen-1 (r1)", "gen-2 (r2)", "gen-3 (r3)"]
    rows = [[text(c) for c in row.select("th, td")] for row in gold.select("table.candidates tbody tr")]
    assert rows == [["", "gen-1 (r1)", "1", "1"], ["", "gen-2 (r2)", "1", "2"], ["", "gen-3 (r3)", "3", "3"]]
    assert len(gold.select("table.candidates img")) == 3


def test_objects_are_drawn_over_the_picture_with_golds_dashed_and_listed(
    live_server, requester_sessions
) -> None:
    picture = {
        "image": "obj.png",
        "width": 400,
        "height": 300,
        "objects": [{"label": "dog", "box": [0, 0, 50, 50]}],
    }
    _, item, gold = evidence(
        live_server,
        requester_sessions,
        "objects",
        item_payload=picture,
        gold_payload=picture,
        gold_answer={"objects": [{"label": "dog", "box": [12, 20, 100, 50], "aliases": ["puppy"]}]},
        answers=[
            [
                {"label": SCRIPT, "box": [10, 20, 100, 50], "description": "a brown dog"},
                {"label": "ball", "box": [200, 150, 40, 40], "description": "a red ball"},
            ],
            [{"label": "dog", "box": [10, 20, 100, 50], "description": "a dog lying down"}],
        ],
    )
    assert drawn(item, "given") == [(10, 20, 100, 50), (200, 150, 40, 40)] and drawn(item, "wanted") == []
    svg = item.select_one("svg.drawn-marks")
    assert svg is not None and svg["viewbox"] == "0 0 400 300"  # (the parser lowers names)
    assert items(item, "ol.marks-given li") == [
        f"{SCRIPT}: left 10, top 20, 100 × 50",
        "ball: left 200, top 150, 40 × 40",
    ]
    assert "a red ball" in text(item)
    assert drawn(gold, "given") == [(10, 20, 100, 50)] and drawn(gold, "wanted") == [(12, 20, 100, 50)]
    assert items(gold, "ul.marks-wanted li") == ["G1. dog: left 12, top 20, 100 × 50"]
    assert "dashed" in text(gold) and "puppy" in text(gold)


def test_target_draws_the_frame_and_names_the_workers_category_and_golds(
    live_server, requester_sessions
) -> None:
    target = {
        "image": "t.png",
        "width": 640,
        "height": 480,
        "box": {"x": 100, "y": 50, "width": 200, "height": 120},
        "expression": f"the dog {SCRIPT}",
        "item_id": "e-17",
        "system": "refgen-2",
    }
    _, item, gold = evidence(
        live_server,
        requester_sessions,
        "target",
        item_payload=target,
        gold_payload=target,
        gold_answer={"category": "A"},
        answers=["M", "F"],
    )
    assert drawn(item, "given") == [(100, 50, 200, 120)]
    assert items(item, "ol.marks-given li") == ["the marked object: left 100, top 50, 200 × 120"]
    assert "refgen-2" in text(item) and f"the dog {SCRIPT}" in text(item)
    (given,) = item.select("li.given")
    assert text(given).startswith("M: Misaligned") and item.select("li.wanted") == []
    (gold_given,), (gold_wanted,) = gold.select("li.given"), gold.select("li.wanted")
    assert text(gold_given).startswith("F: False") and text(gold_wanted).startswith("A: Adequate")
    assert "The worker chose F (False" in text(gold) and "gold expects A (Adequate" in text(gold)


def test_heatmap_draws_the_chosen_sentences_regions_and_tabulates_ratings(
    live_server, requester_sessions
) -> None:
    study = {
        "image": "xray.png",
        "width": 500,
        "height": 400,
        "models": ["model-a", "model-b"],
        "sentences": [
            {
                "text": f"Opacity in the left lung {SCRIPT}",
                "boxes": [{"x": 30, "y": 40, "width": 120, "height": 90}],
            },
            {"text": "The heart is enlarged."},
        ],
    }
    rated = {"coverage": 4, "share": 3, "intuitive": 5}
    _, item, gold = evidence(
        live_server,
        requester_sessions,
        "heatmap",
        item_payload=study,
        gold_payload=study,
        gold_answer={"sentences": {"0": {"model-a": {"coverage": 2}}, "1": {"model-a": {"coverage": 5}}}},
        answers=[
            {"sentence": 0, "report": {"model-a": rated, "model-b": None}, "prompt": "my own", "custom": {}},
            {"sentence": 0, "report": {"model-a": rated, "model-b": rated}, "prompt": "mine", "custom": {}},
        ],
    )
    assert drawn(item, "given") == [(30, 40, 120, 90)]
    (chosen,) = item.select("li.given")
    assert f"Opacity in the left lung {SCRIPT}" in text(chosen) and "chosen by the worker" in text(chosen)
    report = item.select_one("table.heatmap-ratings")
    assert report is not None
    rows = {text(r.th): [text(td) for td in r.select("td")] for r in report.select("tbody tr")}
    assert rows["model-a"][0].startswith("4 (60-80%") and rows["model-a"][2].startswith("5 (5: nearly")
    assert rows["model-b"] == ["No heatmap came for this model: not rated."]
    gold_report = gold.select_one("table.heatmap-ratings")
    assert gold_report is not None
    assert "expected 2" in text(gold_report) and "expected 5" not in text(gold_report)


def test_refine_shows_the_change_word_by_word(live_server, requester_sessions) -> None:
    before = {"image": "r.png", "previous": f"A dog sits on a mat. {SCRIPT}"}
    _, item, _ = evidence(
        live_server,
        requester_sessions,
        "refine",
        item_payload=before,
        gold_payload=before,
        gold_answer={"text": "unused"},
        answers=["A brown dog sits on the mat.", "A dog sits on a mat."],
    )
    diff = item.select_one("p.word-diff")
    assert diff is not None
    assert [text(i) for i in diff.select("ins")] == ["brown", "the"]
    assert [text(d) for d in diff.select("del")] == ["a", SCRIPT]
    assert text(diff) == f"A brown dog sits on a the mat. {SCRIPT}"
    counts = item.select_one("p.counts")
    assert counts is not None and text(counts).startswith("28 characters, 7 words"), text(counts)


def test_write_shows_the_sentence_and_its_counts(live_server, requester_sessions) -> None:
    _, item, _ = evidence(
        live_server,
        requester_sessions,
        "write",
        item_payload={"image": "w.png", "example": f"An example {SCRIPT}"},
        answers=["Two cats sleep on a red sofa.", 1],
    )
    assert text(item.select_one("p.written-text")) == "Two cats sleep on a red sofa."
    assert "29 characters (under 100 allowed), 7 words." in text(item)
    assert f"An example {SCRIPT}" in text(item)


def _crowd(boxes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"boundingBoxes": boxes, "inputImageProperties": {"height": 320, "width": 400}}


def test_a_crowd_bounding_box_layout_is_drawn_not_shown_as_json(live_server, requester_sessions) -> None:
    picture = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='400' height='320'/%3E"
    cat = {"label": "cat", "left": 153, "top": 130, "width": 102, "height": 70}
    page, item, gold = evidence(
        live_server,
        requester_sessions,
        "batch",
        item_payload={"image_url": picture, "caption": SCRIPT},
        gold_payload={"image_url": "https://example.org/pets/cat.jpg"},
        gold_answer={"annotatedResult.boundingBoxes": json.dumps([{**cat, "left": 150}])},
        answers=[
            {"taskAnswers": json.dumps([{"annotatedResult": _crowd([cat]), "comments": f"ok {SCRIPT}"}])},
            {
                "annotatedResult.boundingBoxes": json.dumps([cat, {**cat, "label": "dog", "left": 10}]),
                "annotatedResult.inputImageProperties.height": "320",
                "annotatedResult.inputImageProperties.width": "400",
            },
            # More answers than the HIT has slots: listed apart, and drawn there too.
            {"taskAnswers": json.dumps([{"extra": _crowd([{**cat, "label": "fox"}])}])},
        ],
    )
    assert "boundingBoxes" not in page and "inputImageProperties" not in page
    assert drawn(item, "given") == [(153, 130, 102, 70)]
    assert item.select_one("img")["src"] == picture  # type: ignore[index]
    assert items(item, "ol.marks-given li") == ["cat: left 153, top 130, 102 × 70"]
    assert f"ok {SCRIPT}" in text(item)  # the form's other fields, as text
    assert drawn(gold, "given") == [(153, 130, 102, 70), (10, 130, 102, 70)]
    assert drawn(gold, "wanted") == [(150, 130, 102, 70)]
    assert items(gold, "ul.marks-wanted li") == ["G1. cat: left 150, top 130, 102 × 70"]
    # A picture on another site is not loaded: a link, and the marks on a blank of its size.
    assert gold.select("img") == [] and gold.select_one("svg.drawn-blank") is not None
    link = gold.find("a", string="open the picture")
    assert link is not None and link["href"] == "https://example.org/pets/cat.jpg"
    apart = BeautifulSoup(page, "html.parser").find(
        "section", attrs={"aria-label": "Answers without an item"}
    )
    assert isinstance(apart, Tag) and apart.select_one("svg.drawn-blank") is not None
    assert drawn(apart, "given") == [(153, 130, 102, 70)]
    assert items(apart, "ol.marks-given li") == ["fox: left 153, top 130, 102 × 70"]


def test_a_template_view_falls_back_to_the_generic_one_for_answers_of_another_shape(
    live_server, requester_sessions
) -> None:
    _, item, _ = evidence(
        live_server,
        requester_sessions,
        "objects",
        item_payload={"image": "o.png", "width": 10, "height": 10, "note": SCRIPT},
        answers=[{"unexpected": "shape"}, 1],
    )
    assert "answer unexpected: shape" in text(item).replace(" :", ":") and SCRIPT in text(item)
