"""select, write and spans: validation, gold scoring, answer round trip, rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from hits.requester.templates import get_template
from hits.requester.templates.write import quality_signals
from tests.helpers import render_task_page


def test_select_validation_scoring_round_trip() -> None:
    t = get_template("select")
    ok = t.parse_answers({"select-0-1": "on", "select-0-3": "on", "select-1-none": "on"}, 2)
    assert ok.ok and ok.answers == [[1, 3], []]
    assert t.answers_from_fields(dict(t.answer_fields(ok.answers)), 2) == ok.answers
    bad = t.parse_answers({"select-0-none": "on", "select-0-2": "on"}, 2)
    assert "untick one or the other" in bad.errors["select-0"]
    assert "tick every sentence" in bad.errors["select-1"]
    assert t.score_gold([1, 3], {"correct": [1, 2, 3]}, {}) == pytest.approx(2 / 3)
    assert t.score_gold([], {"correct": []}, {}) == 1.0
    assert t.score_gold([], {"correct": [0]}, {}) == 0.0


def test_write_validation_and_signals() -> None:
    t = get_template("write")
    assert not t.has_gold
    ok = t.parse_answers({"sentence-0": "A dog runs on the beach.", "sentence-1": "Dr. Lee rides a bike"}, 2)
    assert ok.ok and t.answers_from_fields(dict(t.answer_fields(ok.answers)), 2) == ok.answers
    bad = t.parse_answers({"sentence-0": "A dog. A cat.", "sentence-1": " ", "sentence-2": "x" * 100}, 3)
    assert "single sentence" in bad.errors["sentence-0"]
    assert "write one sentence" in bad.errors["sentence-1"]
    assert "100 characters" in bad.errors["sentence-2"]
    dup = t.parse_answers({"sentence-0": "A dog runs.", "sentence-1": "a dog runs"}, 2)
    assert "same sentence as for picture 1" in dup.errors["sentence-1"]
    copied = t.check_against_items(
        t.parse_answers({"sentence-0": "A dog runs."}, 1), [{"example": "A dog runs"}]
    )
    assert "copies the example" in copied.errors["sentence-0"]
    signals = quality_signals(
        {"i1": {"w1": "A dog runs", "w2": "a dog runs."}, "i2": {"w1": "Teh cat", "w2": "A cat"}}
    )
    assert signals["w1"].duplicate_rate == 0.5 and signals["w1"].spelling_error_rate == pytest.approx(1 / 5)


def test_spans_validation_scoring_round_trip() -> None:
    t = get_template("spans")
    ok = t.parse_answers({"spans-0": '{"mistakes": [[5, 9], [0, 2]], "missing": []}'}, 1)
    assert ok.ok and ok.answers == [{"mistakes": [[0, 2], [5, 9]], "missing": []}]
    assert t.answers_from_fields(dict(t.answer_fields(ok.answers)), 1) == ok.answers
    for raw, message in [
        ("", "JavaScript"),
        ('{"mistakes": [[3, 3]], "missing": []}', "must start before it ends"),
        ('{"mistakes": [[0, 4], [2, 6]], "missing": []}', "overlap"),
    ]:
        assert message in t.parse_answers({"spans-0": raw}, 1).errors["spans-0"]
    item = {"generated": "A black dog on a beach", "correct": "A brown dog on a sandy beach"}
    long = t.check_against_items(
        t.parse_answers({"spans-0": '{"mistakes": [[0, 99]], "missing": []}'}, 1), [item]
    )
    assert "past the end" in long.errors["spans-0"]
    # mistakes: marked {black, dog} vs key {black}: F1 = 2/3; missing: both empty = 1.
    answer = {"mistakes": [[2, 11]], "missing": []}
    assert t.score_gold_item(answer, {"mistakes": [[2, 7]], "missing": []}, item, {}) == pytest.approx(5 / 6)


@pytest.mark.parametrize(
    ("name", "slot", "label"),
    [
        ("select", {"image_url": "/i.jpg", "sentences": ["A dog.", "A cat."]}, "No caption is correct"),
        ("write", {"image_url": "/i.jpg", "example": "A dog."}, "Your sentence for picture 1"),
        (
            "spans",
            {"image_url": "/i.jpg", "correct": "A dog.", "generated": "A cat."},
            "GENERATED description",
        ),
    ],
)
def test_pages_render(tmp_path: Path, name: str, slot: dict[str, object], label: str) -> None:
    html = render_task_page(name, [slot], tmp_path, errors={"x-0": "Problem here."})
    assert label in html and "<legend>" in html
