"""Gold values written as JSON (crowd annotation elements) are compared structurally: numbers
within the tolerance, boxes by overlap, annotations paired whatever their order; per-field
tolerances come from the batch settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hits.requester.batches.plan import load_settings_file
from hits.requester.fileerrors import InputFileErrors
from hits.requester.templates.batch import batch_template
from hits.requester.templates.batch.gold import score_fields
from hits.requester.templates.batch.matching import Tolerance, structures_match, tolerance_for
from tests.batches.test_batch_gold import make

CAT = {"label": "cat", "left": 100, "top": 50, "width": 80, "height": 60}
DOG = {"label": "dog", "left": 300, "top": 200, "width": 120, "height": 90}


def shifted(box: dict[str, Any], dx: int, dy: int = 0) -> dict[str, Any]:
    return {**box, "left": box["left"] + dx, "top": box["top"] + dy}


def crowd(value: object, name: str = "annotatedResult") -> dict[str, str]:
    """A <crowd-form> answer in its default format, as the marketplace stores it."""
    return {"taskAnswers": json.dumps([{name: value}])}


def test_numbers_text_and_nested_objects() -> None:
    tol = Tolerance(number=0.5)
    assert structures_match({"a": {"n": 3.4, "s": "x"}}, {"a": {"n": 3, "s": "x"}}, tol)
    assert not structures_match({"a": {"n": 3.6, "s": "x"}}, {"a": {"n": 3, "s": "x"}}, tol)
    assert not structures_match({"a": {"n": 3, "s": "X"}}, {"a": {"n": 3, "s": "x"}}, tol)
    assert structures_match(
        {"a": {"n": 3, "s": " X "}}, {"a": {"n": 3, "s": "x"}}, Tolerance(normalise_text=True)
    )
    # Keys the gold leaves out are not checked; a key it gives must be there.
    assert structures_match({"a": 1, "extra": [1]}, {"a": 1}, Tolerance())
    assert not structures_match({"b": 1}, {"a": 1}, Tolerance())
    # A shape that differs (a list for an object, an object for a number) is wrong.
    assert not structures_match([1], {"a": 1}, Tolerance()) and not structures_match(
        {"a": {}}, {"a": 1}, Tolerance()
    )
    # Lists of plain values are in order, except the multi-select classifiers' labels (a set).
    assert not structures_match(["b", "a"], ["a", "b"], Tolerance())
    assert structures_match({"labels": ["b", "a"]}, {"labels": ["a", "b"]}, Tolerance())
    assert not structures_match({"labels": ["a", "a"]}, {"labels": ["a", "b"]}, Tolerance())
    assert structures_match({"yes": True}, {"yes": "true"}, Tolerance())


def test_boxes_match_by_overlap_and_pair_up_whatever_their_order() -> None:
    key = {"boundingBoxes": [CAT, DOG], "inputImageProperties": {"width": 640, "height": 480}}
    near = {
        "boundingBoxes": [shifted(DOG, 6, -4), shifted(CAT, -5, 3)],
        "inputImageProperties": {"width": 640, "height": 480},
    }
    assert structures_match(near, key, Tolerance())
    # Far off: the cat's box moved by most of its width shares under half its area (IoU 0.18).
    far = {**near, "boundingBoxes": [shifted(CAT, 55), DOG]}
    assert not structures_match(far, key, Tolerance())
    assert structures_match(far, key, Tolerance(iou=0.15))
    # A right box with the wrong label, an extra box or a missing one fails the field.
    assert not structures_match({**near, "boundingBoxes": [{**CAT, "label": "dog"}, DOG]}, key, Tolerance())
    assert not structures_match({**near, "boundingBoxes": [CAT, DOG, shifted(DOG, 200)]}, key, Tolerance())
    assert not structures_match({**near, "boundingBoxes": [CAT]}, key, Tolerance())
    # Two boxes each near both expected ones still need a one-to-one pairing: two cats for a cat
    # and a dog fail, and the greedy first choice does not spoil a pairing that exists.
    assert not structures_match(
        {"boundingBoxes": [CAT, shifted(CAT, 2)]}, {"boundingBoxes": [CAT, DOG]}, Tolerance()
    )
    a = {"label": "x", "left": 0, "top": 0, "width": 100, "height": 100}
    b = {"label": "x", "left": 40, "top": 0, "width": 100, "height": 100}
    # The first answer fits both keys, the second only key a: pairing the first with a (as a
    # greedy pass in order would) leaves the second without a key; the one-to-one pairing exists.
    assert structures_match(
        {"boundingBoxes": [shifted(a, 20), shifted(a, -5)]}, {"boundingBoxes": [a, b]}, Tolerance(iou=0.4)
    )
    assert structures_match({"boundingBoxes": []}, {"boundingBoxes": []}, Tolerance())


def test_keypoints_and_vertices_within_a_distance_in_any_drawing_order() -> None:
    eye = {"label": "eye", "x": 10, "y": 20}
    nose = {"label": "nose", "x": 30, "y": 45}
    key = {"keypoints": [eye, nose]}
    answer = {"keypoints": [{**nose, "x": 33}, {**eye, "y": 16}]}
    assert not structures_match(answer, key, Tolerance())  # exact pixels by default
    assert structures_match(answer, key, Tolerance(distance=5)) and structures_match(
        answer, key, Tolerance(number=4)
    )
    assert not structures_match({"keypoints": [{**nose, "x": 40}, eye]}, key, Tolerance(distance=5))
    square = [{"x": 0, "y": 0}, {"x": 10, "y": 0}, {"x": 10, "y": 10}, {"x": 0, "y": 10}]
    polygon = {"polygons": [{"label": "roof", "vertices": square}]}
    # A polygon drawn from another corner, the other way round, a pixel off: the same polygon.
    redrawn = [{"x": 10, "y": 11}, {"x": 10, "y": 0}, {"x": 0, "y": 0}, {"x": 0, "y": 10}]
    assert structures_match(
        {"polygons": [{"label": "roof", "vertices": redrawn}]}, polygon, Tolerance(distance=1.5)
    )
    crossed = [square[0], square[2], square[1], square[3]]  # the same corners, another shape
    assert not structures_match(
        {"polygons": [{"label": "roof", "vertices": crossed}]}, polygon, Tolerance(distance=1.5)
    )
    # A polyline may be drawn from either end, but not from its middle.
    line = {"polylines": [{"label": "road", "vertices": square[:3]}]}
    assert structures_match({"polylines": [{"label": "road", "vertices": square[2::-1]}]}, line, Tolerance())
    middle = [square[1], square[2], square[0]]
    assert not structures_match({"polylines": [{"label": "road", "vertices": middle}]}, line, Tolerance())


def test_gold_fields_written_as_json_in_either_answer_format_with_per_field_tolerance() -> None:
    key = {"annotatedResult.boundingBoxes": json.dumps([CAT, DOG]), "count": "2"}
    near = [shifted(DOG, 8), shifted(CAT, 0, 6)]
    assert score_fields({**crowd({"boundingBoxes": near}), "count": "2"}, key, {}) == 1.0
    # flatten-objects: the array stays JSON text under its dotted key.
    flat = {"annotatedResult.boundingBoxes": json.dumps(near), "count": "2"}
    assert score_fields(flat, key, {}) == 1.0
    assert score_fields({**flat, "annotatedResult.boundingBoxes": "not json"}, key, {}) == 0.5
    far = {**flat, "annotatedResult.boundingBoxes": json.dumps([shifted(CAT, 60), DOG])}
    assert score_fields(far, key, {}) == 0.5
    # The field's own IoU (set on the element's name, covering its dotted paths) lets it pass.
    assert score_fields(far, key, {"gold_field_tolerance": {"annotatedResult": {"iou": 0.1}}}) == 1.0
    # A number's own tolerance beats the batch's.
    options = {"gold_tolerance": 0.0, "gold_field_tolerance": {"count": {"number": 1}}}
    assert score_fields({**flat, "count": "3"}, key, options) == 1.0
    assert score_fields({**flat, "count": "3"}, key, {"gold_tolerance": 0.0}) == 0.5
    assert tolerance_for("count", {"gold_tolerance": 2}).number == 2.0
    assert tolerance_for("annotatedResult.boundingBoxes", {}).iou == 0.5


def test_per_field_tolerance_in_the_settings_yaml_refused_with_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "batch.yaml"
    base = "title: t\ndescription: d\nreward: '0.10'\n"
    path.write_text(base + "gold_field_tolerance:\n  count: 1\n  box: {iou: 0.6, distance: 4}\n")
    settings = load_settings_file(path, {})
    assert settings.gold_field_tolerance["count"].number == 1.0
    assert (settings.gold_field_tolerance["box"].iou, settings.gold_field_tolerance["box"].distance) == (
        0.6,
        4.0,
    )
    for bad, field, message in (
        ("  box: {iou: 1.5}\n", "gold_field_tolerance.box.iou", "less than or equal to 1"),
        ("  box: {overlap: 0.5}\n", "gold_field_tolerance.box.overlap", "Extra inputs"),
        ("  count: -1\n", "gold_field_tolerance.count.number", "greater than or equal to 0"),
        ("  count: yes\n", "gold_field_tolerance.count", "give a number"),
        ("  count: {}\n", "gold_field_tolerance.count", "at least one of"),
    ):
        path.write_text(base + "gold_field_tolerance:\n" + bad)
        with pytest.raises(InputFileErrors) as refused:
            load_settings_file(path, {})
        (error,) = refused.value.errors
        assert (error.path, error.line, error.field) == (str(path), 5, field), str(refused.value)
        assert message in error.message


def test_a_gold_row_passes_on_all_its_fields_unless_the_batch_sets_a_share() -> None:
    template = batch_template()
    key = {"count": "3", "animal": "cat", "colour": "black"}
    two_of_three = template.score_gold({"count": "3", "animal": "cat", "colour": "white"}, key, {})
    assert not template.gold_passed(two_of_three, {"gold_pass_score": 1.0})
    assert template.gold_passed(two_of_three, {"gold_pass_score": 2 / 3})
    assert not template.gold_passed(two_of_three, {})  # default: every field


def test_a_tolerance_for_no_gold_column_and_a_gold_cell_that_is_broken_json_are_refused(
    requester_sessions, tmp_path: Path
) -> None:
    settings_path = tmp_path / "batch.yaml"
    csv = 'image_url,alt,Gold.count,Gold.box\na,b,3,"[{""left"": 1, ""top"": 2, ""width"": 3}"\n'
    with pytest.raises(InputFileErrors) as refused:
        make(
            requester_sessions,
            tmp_path,
            csv,
            settings_path=settings_path,
            gold_field_tolerance={"countt": 1, "box": {"iou": 0.7}},
        )
    errors = [(e.path, e.line, e.field) for e in refused.value.errors]
    assert errors == [
        (str(tmp_path / "input.csv"), 2, "Gold.box"),
        (str(settings_path), None, "gold_field_tolerance.countt"),
    ]
    assert "starts like JSON but is not JSON" in refused.value.errors[0].message
    assert "its gold fields: count, box" in refused.value.errors[1].message


def test_hostile_answers_score_wrong_instead_of_raising() -> None:
    """A worker writes the answer: numbers too large for a float and nesting deep enough to
    exhaust the JSON parser once raised OverflowError and RecursionError out of the grading
    batch. Each is now just a wrong answer; the row's other fields still count."""
    key = {"annotatedResult.boundingBoxes": json.dumps([CAT]), "count": "2"}
    huge = '[{"label": "cat", "left": 1' + "0" * 400 + ', "top": 50, "width": 80, "height": 60}]'
    deep = "[" * 100_000 + "]" * 100_000
    for text in (huge, deep):
        flat = {"annotatedResult.boundingBoxes": text, "count": "2"}
        assert score_fields(flat, key, {}) == 0.5
        default_format = {
            "taskAnswers": '[{"annotatedResult": {"boundingBoxes": ' + text + "}}]",
            "count": "2",
        }
        assert score_fields(default_format, key, {}) == 0.5
    # Already parsed (a posted field kept as a structure): too deep to compare as text either.
    nested: list[Any] = []
    for _ in range(5_000):
        nested = [nested]
    assert score_fields({"annotatedResult.boundingBoxes": json.dumps([CAT]), "count": nested}, key, {}) == 0.5
    assert structures_match([{**CAT, "width": 10**400}], [CAT], Tolerance()) is False
