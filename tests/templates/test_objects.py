"""The objects template on its own: items, answer checks, IoU matching, merging and consensus."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
from pydantic import ValidationError

from demo.profiles import PROFILES
from demo.tasks import get_demo_task
from demo.tasks.objects import simulated_answer
from hits.requester.quality.aggregation import aggregate_frame, majority_confidence
from hits.requester.templates import get_template
from hits.requester.templates.objects.consensus import consensus
from hits.requester.templates.objects.geometry import iou, match_objects, merge_objects, normal_label

OBJECTS = get_template("objects")
ITEM = {
    "image": "p.png",
    "width": 320,
    "height": 240,
    "objects": [{"label": "dog", "box": [10, 10, 50, 40]}, {"label": "cat", "box": [100, 50, 60, 60]}],
}


def _obj(label: str, box: list[float], description: str = "Something worth describing.") -> dict:  # type: ignore[type-arg]
    return {"label": label, "box": box, "description": description}


def _parse(*pictures: object, items: list[dict] | None = None):  # type: ignore[no-untyped-def,type-arg]
    form = {f"objects-{i}": p if isinstance(p, str) else json.dumps(p) for i, p in enumerate(pictures)}
    parsed = OBJECTS.parse_answers(form, len(pictures))
    return OBJECTS.check_against_items(parsed, items or [ITEM] * len(pictures))


def test_items_need_seeded_boxes_inside_their_image_and_keys_are_checked_against_the_item() -> None:
    item = OBJECTS.validate_item(ITEM)
    assert item["objects"][0] == {"label": "dog", "box": [10, 10, 50, 40], "description": ""}
    assert OBJECTS.validate_item({**ITEM, "objects": []})["objects"] == []  # nothing seeded: draw all
    for bad in (
        {**ITEM, "objects": [{"label": "dog", "box": [300, 10, 50, 40]}]},  # past the right edge
        {**ITEM, "objects": [{"label": "dog", "box": [10, 10, 0, 40]}]},  # no width
        {**ITEM, "objects": [{"label": "  ", "box": [10, 10, 20, 20]}]},
        {**ITEM, "objects": [{"label": "dog", "box": [10, 10, 20]}]},
        {**ITEM, "objects": [{"label": "dog", "box": [1, 1, 9, 9], "secret": "gold"}]},
        {**ITEM, "width": 0},
    ):
        with pytest.raises(ValidationError):
            OBJECTS.validate_item(bad)
    key = OBJECTS.validate_answer_key({"objects": [{"label": "dog", "box": [10, 10, 50, 40]}]})
    OBJECTS.check_answer_key(key, item)
    outside = OBJECTS.validate_answer_key({"objects": [{"label": "dog", "box": [10, 200, 50, 60]}]})
    with pytest.raises(ValueError, match="key object 1 .*outside the 320 x 240 picture"):
        OBJECTS.check_answer_key(outside, item)
    with pytest.raises(ValidationError):
        OBJECTS.validate_answer_key({"objects": []})


def test_answers_are_checked_per_object_and_field_and_read_back_from_mturk_fields() -> None:
    good = [
        _obj("  brown   dog ", [10, 10, 50.004, 40]),
        _obj("cat", [100, 50, 60, 60], "A  grey\ncat.  Sits."),
    ]
    parsed = _parse(good)
    assert parsed.ok, parsed.errors
    assert parsed.answers == [
        [
            {"label": "brown dog", "box": [10, 10, 50, 40], "description": "Something worth describing."},
            {"label": "cat", "box": [100, 50, 60, 60], "description": "A grey cat. Sits."},
        ]
    ]
    assert OBJECTS.answers_from_fields(dict(OBJECTS.answer_fields(parsed.answers)), 1) == parsed.answers

    bad = [
        _obj("", [10, 10, 50, 40]),
        _obj("cat", [100, 50, 2, 60], "short"),
        _obj("x" * 81, [1, 1, 10, 10]),
        {"label": "dog", "box": ["1", 2, 3, 4], "description": "Long enough text."},
        {"label": "dog", "box": [1, 2, 30, 40], "description": "Long enough text.", "gold": True},
        "not an object",
    ]
    message = _parse(good, bad).errors["objects-1"]
    assert message.startswith("Picture 2: Object 1: the label is empty")
    assert (
        "Object 2 (\u201ccat\u201d): the description is too short; write at least 10 characters; " in message
    )
    assert "the box is 2 x 60 pixels; make it at least 4 x 4" in message
    assert "Object 3 (\u201cxxxx" in message and "the label has 81 characters; keep it to 80" in message
    assert "Object 4 (\u201cdog\u201d): the box must be four numbers" in message
    assert "Object 5 (\u201cdog\u201d): unknown fields gold." in message
    assert "object 6 is not an object" in message

    for raw, words in (
        ("", "missing"),
        ("{not json", "not readable"),
        ("[" * 5000, "not readable"),  # nesting deep enough to exhaust the decoder's recursion
        ('{"label": "dog"}', "not a list"),
        ("[]", "at least one object"),
        (json.dumps([_obj("a", [0, 0, 5, 5])] * 51), "keep at most 50"),
        ("[" + "1," * 70000 + "1]", "too long"),
        (json.dumps([_obj("a", [0, 0, 5, 5]), _obj("A", [0, 0, 5, 5])]), "Object 2 repeats object 1"),
        (json.dumps([_obj("a", [0, 0, 5, 5], "x" * 1001)]), "keep it to 1000"),
        (json.dumps([_obj("a", [0, 0, float("nan"), 5])]).replace("NaN", "1e999"), "four numbers"),
    ):
        assert words in _parse(raw).errors["objects-0"], raw[:40]
    # Inside the picture is checked against the item's own size (after the form checks).
    wide = _parse([_obj("dog", [300, 10, 50, 40])], items=[ITEM])
    assert wide.errors == {
        "objects-0": "Picture 1: Object 1 (\u201cdog\u201d): the box (300, 10, 50 x 40) reaches outside "
        "the 320 x 240 picture."
    }
    assert wide.answers == []
    assert _parse([_obj("dog", [270.5, 10, 50.4, 40])]).ok  # one pixel of rounding is forgiven


def test_iou_and_hungarian_matching_pair_boxes_one_to_one_with_labels() -> None:
    assert iou([0, 0, 10, 10], [0, 0, 10, 10]) == 1.0
    assert iou([0, 0, 10, 10], [5, 0, 10, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [10, 0, 10, 10]) == 0.0
    assert normal_label("  The  Red Circle") == "red circle"
    key = [
        {"label": "dog", "box": [0, 0, 100, 100]},
        {"label": "cat", "box": [50, 0, 100, 100], "aliases": ["kitten"]},
    ]
    # Greedy by overlap would pair the first answer with the dog (IoU .67, the highest) and leave the
    # second with the cat (IoU .07); the optimal one-to-one pairing finds both.
    answer = [_obj("Kitten", [20, 0, 100, 100]), _obj("the dog", [0, 0, 60, 100])]
    match = match_objects(answer, key, check_labels=False)
    assert sorted((a, k) for a, k, _ in match.pairs) == [(0, 1), (1, 0)]
    assert (match.precision, match.recall, match.f1) == (1.0, 1.0, 1.0)
    assert match_objects(answer, key).f1 == 1.0  # labels agree, aliases and articles too
    # A label that names another object does not count; without label checks it does.
    wrong = [_obj("horse", [0, 0, 100, 100])]
    assert match_objects(wrong, key).f1 == 0.0
    assert match_objects(wrong, key, check_labels=False).f1 == pytest.approx(2 * 1 * 0.5 / 1.5)
    # A well-placed box with the wrong label does not push out a worse one with the right label.
    crowded = [_obj("cat", [0, 0, 100, 100]), _obj("dog", [0, 0, 95, 95])]
    assert len(match_objects(crowded, key[:1]).pairs) == 1
    # The threshold decides: a half-overlapping fragment misses at 0.5, counts at 0.3.
    piece = [_obj("dog", [0, 0, 45, 100])]
    assert match_objects(piece, key[:1]).f1 == 0.0
    assert match_objects(piece, key[:1], threshold=0.3).f1 == 1.0
    assert match_objects([], key).f1 == 0.0 and match_objects([], []).f1 == 1.0
    # Gold score: F1, pass mark 0.75 by default, options from the campaign.
    gold = {"objects": key}
    assert OBJECTS.score_gold(answer, gold, {}) == 1.0
    assert OBJECTS.score_gold([*answer, _obj("bird", [200, 200, 20, 20])], gold, {}) == pytest.approx(0.8)
    assert OBJECTS.gold_passed(0.8, {}) and not OBJECTS.gold_passed(0.7, {})
    assert not OBJECTS.gold_passed(0.8, {"gold_pass_score": 0.9})
    assert OBJECTS.score_gold(piece, gold, {"iou_threshold": 0.3}) == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert OBJECTS.score_gold("garbage", gold, {}) == 0.0


def test_merging_takes_the_union_box_the_commonest_label_and_every_description_once() -> None:
    merged = merge_objects(
        [
            _obj("tri", [20, 140, 30, 70], "left half"),
            _obj("green triangle", [55, 150, 30, 70], "Left  half"),
            _obj("Green Triangle", [40, 130, 10, 10], "the tip"),
        ]
    )
    assert merged == {"label": "green triangle", "box": [20, 130, 65, 90], "description": "left half the tip"}
    # A tie goes to the largest piece; empty labels and descriptions count for nothing.
    tie = merge_objects(
        [_obj("leg", [0, 0, 10, 10], ""), _obj("table", [0, 5, 40, 40], ""), _obj(" ", [0, 0, 5, 5], "")]
    )
    assert tie == {"label": "table", "box": [0, 0, 40, 45], "description": ""}
    with pytest.raises(ValueError):
        merge_objects([])


def test_consensus_clusters_boxes_across_workers_and_keeps_what_a_majority_found() -> None:
    a = [_obj("dog", [10, 10, 100, 100], "dog A"), _obj("cat", [200, 10, 50, 50], "cat A")]
    b = [_obj("Dog", [12, 8, 98, 104], "dog B"), _obj("cat", [202, 12, 50, 50], "cat B")]
    c = [_obj("wolf", [8, 12, 104, 100], "wolf C"), _obj("bird", [150, 150, 20, 20], "bird C")]
    result = consensus([a, b, c])
    assert result.objects == [
        {"label": "dog", "box": [10, 10, 100, 102], "description": "dog A", "support": 1.0},
        {"label": "cat", "box": [201, 11, 50, 50], "description": "cat A", "support": 0.6667},
    ]
    assert result.dropped == 1  # the bird only one worker saw
    # F1 of each worker against the consensus: 1, 1, 0 (wolf is not dog, bird is no one's).
    assert result.support == pytest.approx(2 / 3, abs=1e-4)
    assert result.pairwise_f1 == pytest.approx((1 + 0 + 0) / 3, abs=1e-4)
    single = consensus([a])
    assert single.objects[0]["support"] == 1.0 and single.pairwise_f1 is None
    assert consensus([]).objects == []

    # Through the campaign aggregation: one consensus per item, confidence from the votes.
    frame = pd.DataFrame(
        [("img-1", "w1", a), ("img-1", "w2", b), ("img-1", "w3", c), ("img-2", "w1", a)],
        columns=["task", "worker", "label"],
    )
    rows = {r.item_id: r for r in aggregate_frame(frame, "object_clusters")}
    assert [o["label"] for o in rows["img-1"].label] == ["dog", "cat"]
    assert rows["img-1"].votes == 3 and rows["img-1"].method == "object_clusters"
    assert rows["img-1"].confidence == pytest.approx(majority_confidence(2 / 3, 3), abs=1e-3)
    assert rows["img-1"].detail["pairwise_f1"] == pytest.approx(1 / 3, abs=1e-4)
    assert rows["img-2"].detail["pairwise_f1"] is None


def test_simulated_workers_fix_seeds_toward_the_truth_and_spammers_do_not(tmp_path) -> None:  # type: ignore[no-untyped-def]
    task = get_demo_task("objects")
    truth = task.write_data(tmp_path, 4, 12, 5)
    gold = [json.loads(line) for line in (tmp_path / "gold.jsonl").read_text().splitlines()]
    rng = random.Random(2)
    mean: dict[str, float] = {}
    for name, profile in PROFILES.items():
        scores = []
        for row in gold:
            item = OBJECTS.validate_item(row["item"])
            answer = simulated_answer(item["objects"], truth[item["image"]], profile, rng)
            parsed = _parse(answer, items=[item])
            assert parsed.ok, (name, parsed.errors)  # every bot's answer passes the page's checks
            scores.append(OBJECTS.score_gold(parsed.answers[0], row["answer"], task.template_options))
        mean[name] = sum(scores) / len(scores)
    untouched = [OBJECTS.score_gold(row["item"]["objects"], row["answer"], {}) for row in gold]
    # The seeds are partly wrong on every picture: left alone they fail gold.
    assert max(untouched) < 0.75
    assert mean["diligent"] > 0.85 and mean["careless"] > mean["spammer"]
    assert mean["spammer"] < 0.5 and mean["copycat"] < 0.5


def test_the_page_carries_any_label_text_safely_and_shows_the_workers_list_again_after_an_error(
    tmp_path,
) -> None:  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    from tests.helpers import render_task_page

    tricky = "O'Brien's \"hat\" </script><b>&amp;"
    slot = {**OBJECTS.validate_item({**ITEM, "objects": [{"label": tricky, "box": [1, 2, 30, 40]}]})}
    slot["image_url"] = "/m/1"

    def field(html: str) -> list[dict]:  # type: ignore[type-arg]
        found = BeautifulSoup(html, "html.parser").find("input", attrs={"name": "objects-0"})
        assert found is not None
        return json.loads(str(found["value"]))

    html = render_task_page("objects", [slot], tmp_path)
    assert field(html) == [{"label": tricky, "box": [1, 2, 30, 40], "description": ""}]
    assert "<b>" not in html
    # After a refused submit the worker's own list comes back, whatever it held; junk falls back to seeds.
    mine = [{"label": "hat", "box": [5, 5, 20, 20], "description": "</textarea>"}]
    again = render_task_page("objects", [slot], tmp_path, {"objects-0": json.dumps(mine)}, {"objects-0": "x"})
    assert field(again) == mine
    odd = [{"label": 7, "box": "big"}, "text", {"box": [1, "a", None]}]
    assert field(render_task_page("objects", [slot], tmp_path, {"objects-0": json.dumps(odd)})) == [
        {"label": "7", "box": [0, 0, 0, 0], "description": ""},
        {"label": "", "box": [1, 0.0, 0.0], "description": ""},
    ]
    for junk in ("{", "[" * 5000, "null"):
        assert field(render_task_page("objects", [slot], tmp_path, {"objects-0": junk}))[0]["label"] == tricky
