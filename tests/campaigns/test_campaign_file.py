"""Campaign files: good ones load; bad ones name the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file

GOOD = """\
name: test-campaign
template: rating
title: Rate pictures
description: Rate how well each sentence fits.
reward: "0.10"
budget: "20.00"
assignments_per_hit: 3
items_per_hit: 2
gold_per_hit: 1
items: items.jsonl
gold: gold.jsonl
"""


def write(
    folder: Path, campaign: str = GOOD, items: list[str] | None = None, gold: list[str] | None = None
) -> Path:
    item_rows = items or [
        json.dumps({"id": f"i{i}", "item": {"image": f"https://img/{i}.png", "sentence": "A dog."}})
        for i in range(4)
    ]
    # One gold item for each of the two HITs' gold slots (a shorter pool is refused).
    gold_rows = gold or [
        json.dumps(
            {
                "id": f"g{g}",
                "item": {"image": f"https://img/g{g}.png", "sentence": "A cat."},
                "answer": {"rating": 4},
            }
        )
        for g in (1, 2)
    ]
    (folder / "items.jsonl").write_text("\n".join(item_rows) + "\n")
    (folder / "gold.jsonl").write_text("\n".join(gold_rows) + "\n")
    path = folder / "campaign.yaml"
    path.write_text(campaign)
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    loaded = load_campaign_file(write(tmp_path))
    assert loaded.spec.name == "test-campaign"
    assert str(loaded.spec.reward) == "0.10"
    assert len(loaded.items) == 4 and len(loaded.gold) == 2
    assert loaded.gold[0].answer == {"rating": 4}


def test_a_bad_field_names_file_line_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('reward: "0.10"', 'reward: "ten cents"'))
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(path)
    error = caught.value.errors[0]
    assert error.path == str(path)
    assert error.line == 5
    assert error.field == "reward"
    assert "campaign.yaml, line 5, field 'reward'" in str(caught.value)


def test_an_unknown_template_lists_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("template: rating", "template: nonsense"))
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(path)
    assert caught.value.errors[0].line == 2
    assert "rating" in caught.value.errors[0].message


def test_yaml_syntax_errors_have_a_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "quality: [unclosed\n")
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    assert caught.value.line is not None and caught.value.line >= 12


def test_bad_item_lines_are_all_reported(tmp_path: Path) -> None:
    rows = [
        json.dumps({"id": "a", "item": {"image": "x.png", "sentence": "ok"}}),
        json.dumps({"id": "b", "item": {"image": "x.png"}}),
        "{not json",
    ]
    path = write(tmp_path, items=rows)
    with pytest.raises(InputFileError) as caught:
        load_campaign_file(path)
    assert caught.value.line == 3
    rows[2] = json.dumps({"id": "a", "item": {"image": "y.png", "sentence": "dup"}})
    path = write(tmp_path, items=rows)
    with pytest.raises(InputFileErrors) as many:
        load_campaign_file(path)
    located = {(e.line, e.field) for e in many.value.errors}
    assert (2, "item.sentence") in located
    assert (3, "id") in located
    assert all(e.path.endswith("items.jsonl") for e in many.value.errors)


def test_gold_needs_an_answer_of_the_right_shape(tmp_path: Path) -> None:
    gold = [
        json.dumps({"id": "g1", "item": {"image": "g.png", "sentence": "A cat."}}),
        json.dumps({"id": "g2", "item": {"image": "g.png", "sentence": "A cat."}, "answer": {"rating": 9}}),
    ]
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(write(tmp_path, gold=gold))
    located = {(e.line, e.field) for e in caught.value.errors}
    assert located == {(1, "answer"), (2, "answer.rating")}


def test_gold_per_hit_requires_a_gold_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("gold: gold.jsonl\n", ""))
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(path)
    assert "gold file is required" in caught.value.errors[0].message


def test_a_template_without_gold_refuses_gold_and_defaults_to_none(tmp_path: Path) -> None:
    items = [json.dumps({"id": f"i{i}", "item": {"image": f"{i}.png"}}) for i in range(3)]
    path = write(tmp_path, GOOD.replace("template: rating", "template: write"), items=items)
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(path)
    located = {(e.line, e.field) for e in caught.value.errors}
    assert located == {(9, "gold_per_hit"), (11, "gold")}
    assert "takes no gold" in caught.value.errors[0].message
    plain = GOOD.replace("template: rating", "template: write").replace("gold_per_hit: 1\n", "")
    loaded = load_campaign_file(write(tmp_path, plain.replace("gold: gold.jsonl\n", ""), items=items))
    assert loaded.spec.gold_per_hit == 0 and loaded.gold == []


def test_a_select_gold_index_must_name_one_of_the_items_sentences(tmp_path: Path) -> None:
    item = {"image": "g.png", "sentences": ["A dog runs.", "A cat sleeps.", "Nobody is here."]}
    items = [json.dumps({"id": f"i{i}", "item": item}) for i in range(3)]
    gold = [
        json.dumps({"id": "g1", "item": item, "answer": {"correct": [0, 2]}}),
        json.dumps({"id": "g2", "item": item, "answer": {"correct": [1, 3]}}),
    ]
    path = write(tmp_path, GOOD.replace("template: rating", "template: select"), items=items, gold=gold)
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(path)
    [error] = caught.value.errors
    assert (error.line, error.field) == (2, "answer")
    assert "index 3 names no sentence" in error.message and "numbered 0 to 2" in error.message
