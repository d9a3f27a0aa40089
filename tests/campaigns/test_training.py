"""The campaign file's ``training:`` section: what is refused where, practice answers judged (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.examples import EXAMPLES, example_files
from hits.requester.files.training import judge, practice_item
from hits.requester.templates import get_template

PRACTICE = {
    "id": "practice-1",
    "item": {"image": "kitchen.jpg", "sentence": "A woman pours milk into a glass."},
    "answer": {"rating": 1},
    "explanation": "The picture shows a man with bread: **nothing** in the sentence is in it.",
}


def _write(folder: Path, template: str, training: Any) -> Path:
    path = example_files(template).write(folder)
    spec = yaml.safe_load(path.read_text())
    spec["training"] = training
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _errors(path: Path) -> list[InputFileError]:
    with pytest.raises((InputFileError, InputFileErrors)) as caught:
        load_campaign_file(path)
    error = caught.value
    return error.errors if isinstance(error, InputFileErrors) else [error]


def _practice_of(template: str) -> dict[str, Any]:
    """A training item for ``template``: its example's gold item on another picture (so not the gold)."""
    item, answer = EXAMPLES[template].gold[0]
    return {
        "id": "practice-1",
        "item": {**item, "image": "practice.jpg"},
        "answer": answer,
        "explanation": "Because it is.",
    }


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


@pytest.mark.parametrize(
    "template",
    sorted(
        name
        for name in EXAMPLES
        if get_template(name).has_gold and get_template(name).no_training_reason is None
    ),
)
def test_every_template_with_right_answers_takes_training(template: str, tmp_path: Path) -> None:
    loaded = load_campaign_file(_write(tmp_path, template, [_practice_of(template)]))
    assert [t.id for t in loaded.spec.training] == ["practice-1"]
    # Never real work nor gold: the items and the gold pool are the files' alone.
    assert "practice-1" not in {i.external_id for i in loaded.items + loaded.gold}


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("write", "has no right answers to show, so it takes no training items"),
        ("refine", "has no right answers to show, so it takes no training items"),
        ("heatmap", "makes none"),
    ],
)
def test_a_template_without_a_right_answer_refuses_training(
    template: str, words: str, tmp_path: Path
) -> None:
    practice = {"id": "p", "item": {"image": "x.jpg"}, "answer": {}, "explanation": "Why."}
    path = _write(tmp_path, template, [practice])
    [error] = _errors(path)
    assert error.field == "training" and words in error.message, error
    assert error.line == _line_of(path, "training:")


@pytest.mark.parametrize(
    ("ident", "item", "field", "words"),
    [
        ("rating-1", PRACTICE["item"], "training.0.id", "is an id of items.jsonl"),
        ("rating-gold-1", PRACTICE["item"], "training.0.id", "is an id of gold.jsonl"),
        (
            "p",
            {"image": "kitchen.jpg", "sentence": "A man slices bread on a wooden board.", "alt": "A kitchen"},
            "training.0.item",
            "the same as 'rating-1' of items.jsonl",
        ),
        (
            "p",
            {"sentence": "A brown dog runs across a lawn.", "image": "dog.jpg"},
            "training.0.item",
            "the same as 'rating-gold-1' of gold.jsonl",
        ),
    ],
)
def test_a_training_item_that_is_an_item_or_gold_is_refused(
    ident: str, item: dict[str, Any], field: str, words: str, tmp_path: Path
) -> None:
    path = _write(tmp_path, "rating", [{**PRACTICE, "id": ident, "item": item}])
    [error] = _errors(path)
    assert error.field == field and words in error.message, error
    assert error.path == str(path) and error.line is not None
    assert error.line >= _line_of(path, "training:")


def test_every_problem_is_reported_with_its_line_and_field(tmp_path: Path) -> None:
    training = [
        {**PRACTICE, "item": {"image": "a.jpg", "sentence": ""}},
        {**PRACTICE, "id": "practice-2", "answer": {"rating": 7}},
        {**PRACTICE, "id": "practice-1", "item": {"image": "b.jpg", "sentence": "Two cats."}},
        {
            **PRACTICE,
            "id": "p4",
            "item": {"image": "c.jpg", "sentence": "A cat."},
            "explanation": "[x](javascript:alert(1))",
        },
        {
            **PRACTICE,
            "id": "p5",
            "item": {"image": "d.jpg", "sentence": "A cow."},
            "explanation": "![a](nope.png)",
        },
    ]
    path = _write(tmp_path, "rating", training)
    errors = {e.field: e for e in _errors(path)}
    assert set(errors) == {
        "training.0.item.sentence",
        "training.1.answer.rating",
        "training.2.id",
        "training.3.explanation",
        "training.4.explanation",
    }, errors
    assert "duplicate id 'practice-1'" in errors["training.2.id"].message
    assert "not allowed" in errors["training.3.explanation"].message
    assert "no file 'nope.png'" in errors["training.4.explanation"].message
    lines = [errors[f].line for f in sorted(errors)]
    assert all(line is not None for line in lines) and lines == sorted(lines)


def test_a_missing_explanation_or_answer_is_named(tmp_path: Path) -> None:
    entry = {k: v for k, v in PRACTICE.items() if k not in ("explanation", "answer")}
    fields = {e.field for e in _errors(_write(tmp_path, "rating", [entry]))}
    assert fields == {"training.0.explanation", "training.0.answer"}


def _stored(path: Path) -> dict[str, Any]:
    return json.loads(load_campaign_file(path).spec.model_dump_json())


def test_a_practice_answer_is_judged_with_the_templates_scoring(tmp_path: Path) -> None:
    spec = _stored(_write(tmp_path, "rating", [PRACTICE]))
    practice = practice_item(spec, 0)
    assert practice is not None and practice.count == 1 and practice_item(spec, 1) is None

    right = judge(spec, practice, {"rating-0": "1"}, lambda picture: None)
    assert (
        right.feedback is not None
        and right.feedback.right
        and right.feedback.right_answer == "1: Does not describe the image at all."
    )
    assert "<strong>nothing</strong>" in right.feedback.explanation

    wrong = judge(spec, practice, {"rating-0": "2"}, lambda picture: None)
    assert wrong.feedback is not None and not wrong.feedback.right and not wrong.errors

    for form in ({}, {"rating-0": "9"}, {"rating-0": "<b>"}):
        malformed = judge(spec, practice, form, lambda picture: None)
        assert malformed.feedback is None and "rating-0" in malformed.errors

    # The campaign's tolerance counts, as it does for gold; the requester's words replace the key's.
    spec["template_options"] = {"gold_tolerance": 1}
    spec["training"][0]["right_answer"] = "1: nothing fits"
    practice = practice_item(spec, 0)
    assert practice is not None
    near = judge(spec, practice, {"rating-0": "2"}, lambda picture: None)
    assert (
        near.feedback is not None and near.feedback.right and near.feedback.right_answer == "1: nothing fits"
    )


def test_a_blinded_templates_practice_answer_is_in_the_items_order(tmp_path: Path) -> None:
    practice_entry = _practice_of("sxs")
    spec = _stored(_write(tmp_path, "sxs", [practice_entry]))
    practice = practice_item(spec, 0)
    assert practice is not None
    template = get_template("sxs")
    view = template.arranged_view(practice.payload, template.item_order(practice.payload))
    assert view["texts"][0] == practice.payload["candidates"][0]["text"]  # the first text on the left
    key = practice.key["preferences"]
    form = {
        f"sxs-0-{metric}": str(key.get(metric, 0))
        for metric in ("comprehensiveness", "specificity", "hallucinations", "tldr", "human_likeness")
    }
    judged = judge(spec, practice, form, lambda picture: None)
    assert judged.feedback is not None and judged.feedback.right, judged
    flipped = {name: str(-int(value)) for name, value in form.items()}
    if any(int(v) for v in key.values()):
        judged = judge(spec, practice, flipped, lambda picture: None)
        assert judged.feedback is not None and not judged.feedback.right


@pytest.mark.parametrize(
    "template",
    sorted(
        name
        for name in EXAMPLES
        if get_template(name).has_gold and get_template(name).no_training_reason is None
    ),
)
def test_campaign_check_previews_every_templates_practice_pages(
    template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hits.requester.campaigns.check import check_campaign_file, plan_lines
    from hits.settings import load_settings
    from server.requester.hit_pages.preview import write_previews

    monkeypatch.setenv("HITFORGE_VAR_DIR", str(tmp_path / "var"))
    practice = {**_practice_of(template), "explanation": "Look *closely* at the picture first."}
    (tmp_path / "files").mkdir()
    checked = check_campaign_file(_write(tmp_path / "files", template, [practice]))
    assert any(line.startswith("training:     1 practice item") for line in plan_lines(checked.plan))
    result = write_previews(checked.loaded, tmp_path / "preview", load_settings())
    names = [page.name for page in result.pages]
    assert names[-2:] == ["practice-1.html", "practice-1-answered.html"], names
    hit_page = (tmp_path / "preview" / "hit-1.html").read_text(encoding="utf-8")
    assert 'href="practice-1.html"' in hit_page and "Practice first" in hit_page
    before = (tmp_path / "preview" / "practice-1.html").read_text(encoding="utf-8")
    after = (tmp_path / "preview" / "practice-1-answered.html").read_text(encoding="utf-8")
    assert "Practice item 1 of 1" in before and "Check my answer" in before
    assert "<em>closely</em>" not in before and "The right answer" not in before
    assert "<em>closely</em>" in after and "The right answer" in after
    assert "practice.jpg" in result.missing  # the practice item's picture is looked for like the items'


def test_a_workflows_later_stage_inherits_no_practice_items_nor_guidance(tmp_path: Path) -> None:
    from hits.requester.files.workflow import StageSpec
    from hits.requester.workflows.setup import stage_spec

    spec = load_campaign_file(_write(tmp_path, "rating", [PRACTICE])).spec
    assert spec.guidance is not None and spec.guidance.scale is not None  # the rating template's words
    stage = StageSpec.model_validate({"name": "again", "template": "refine", "from": "describe"})
    # A rating item and answer could not be shown, nor judged, by a refine stage's pages, and the
    # rating scale's words would be refused for it (the stage could not even be built).
    built = stage_spec(spec, stage)
    assert built["training"] == [] and built["guidance"] is None
