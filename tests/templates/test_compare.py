"""compare: item and key validation, parsing the page's fields, rank-correlation scoring, the page."""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from scipy.stats import kendalltau

from hits.requester.fileerrors import InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.templates import get_template
from hits.requester.templates.compare import concordance, kendall_tau
from tests.helpers import render_task_page

T = get_template("compare")
ITEM = {
    "image": "pic.png",
    "candidates": [
        {"id": "c1", "text": "A red circle above a blue square.", "system": "alpha"},
        {"id": "c2", "text": "A red circle.", "system": "beta"},
        {"id": "c3", "text": "A green <b>triangle</b> & a dog.", "system": "gamma"},
        {"id": "c4", "text": "Two shapes.", "system": "delta"},
    ],
}


def test_items_need_two_to_six_candidates_with_unique_neutral_ids() -> None:
    assert [c["id"] for c in T.validate_item(ITEM)["candidates"]] == ["c1", "c2", "c3", "c4"]
    candidate = {"id": "c1", "text": "A dog."}
    for candidates, message in [
        ([candidate], "at least 2"),
        ([{**candidate, "id": f"c{k}"} for k in range(7)], "at most 6"),
        ([candidate, candidate], "repeated: c1"),
        ([candidate, {"id": "c,2", "text": "A cat."}], "should match pattern"),
        ([candidate, {"id": "c2", "text": "  "}], "needs some text"),
        ([candidate, {"id": "beta-7", "text": "A cat.", "system": "Beta"}], "contains its system"),
        ([candidate, {"id": "c2", "text": "A cat.", "shown": True}], "Extra inputs"),
    ]:
        with pytest.raises(ValidationError, match=message):
            T.validate_item({"image": "pic.png", "candidates": candidates})


def test_gold_keys_are_permutations_of_the_items_candidates() -> None:
    key = T.validate_answer_key({"order": ["c3", "c1", "c2", "c4"]})
    T.check_answer_key(key, T.validate_item(ITEM))
    with pytest.raises(ValidationError, match="appears twice"):
        T.validate_answer_key({"order": ["c1", "c1"]})
    with pytest.raises(ValueError, match="each of the item's candidates once: c1, c2, c3, c4"):
        T.check_answer_key(T.validate_answer_key({"order": ["c1", "c2", "c3"]}), ITEM)


def test_a_gold_file_whose_order_does_not_fit_its_item_is_refused_with_its_line(tmp_path: Path) -> None:
    item = {"image": "pic.png", "candidates": ITEM["candidates"][:2]}
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "i1", "item": item}) + "\n")
    (tmp_path / "gold.jsonl").write_text(
        json.dumps({"id": "g1", "item": item, "answer": {"order": ["c2", "c1"]}})
        + "\n"
        + json.dumps({"id": "g2", "item": item, "answer": {"order": ["c2", "c9"]}})
        + "\n"
    )
    spec = {
        "name": "cmp",
        "template": "compare",
        "title": "Order descriptions",
        "description": "Order them.",
        "reward": "0.10",
        "budget": "5.00",
        "items_per_hit": 1,
        "gold_per_hit": 1,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(InputFileErrors) as caught:
        load_campaign_file(tmp_path / "campaign.yaml")
    (error,) = caught.value.errors
    assert (error.line, error.field) == (2, "answer") and "c1, c2" in error.message


def test_places_become_an_ordering_and_round_trip_through_mturk_fields() -> None:
    form = {
        "rank-0-c1": "2",
        "rank-0-c2": "4",
        "rank-0-c3": "1",
        "rank-0-c4": "3",
        "order-1": "b,a",  # the two-candidate radio group
        "rank-5-c1": "1",  # a slot the page does not have: ignored
    }
    parsed = T.parse_answers(form, 2)
    assert parsed.ok and parsed.answers == [["c3", "c1", "c4", "c2"], ["b", "a"]]
    fields = T.answer_fields(parsed.answers)
    assert fields == [("order-0", "c3,c1,c4,c2"), ("order-1", "b,a")]
    assert T.answers_from_fields(dict(fields), 2) == parsed.answers
    assert T.check_against_items(parsed, [ITEM, {"candidates": [{"id": "a"}, {"id": "b"}]}]).ok


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"rank-0-c1": "1", "rank-0-c2": "", "rank-0-c3": ""}, "2 descriptions have no place yet"),
        ({"rank-0-c1": "1", "rank-0-c2": "2", "rank-0-c3": ""}, "1 description has no place yet"),
        ({"rank-0-c1": "1", "rank-0-c2": "1", "rank-0-c3": "3"}, "place 1 is given to 2 descriptions"),
        ({"rank-0-c1": "1", "rank-0-c2": "2", "rank-0-c3": "7"}, "'7' is not a place from 1 to 3"),
        ({"rank-0-c1": "1"}, "reload the page"),
        ({}, "choose the better description"),
        ({"order-0": "a,a"}, "is not an order of the descriptions"),
        ({"order-0": "a"}, "is not an order of the descriptions"),
        ({"order-0": "a;b,c"}, "is not an order of the descriptions"),
    ],
)
def test_incomplete_or_inconsistent_places_are_refused_per_picture(
    form: dict[str, str], message: str
) -> None:
    parsed = T.parse_answers({**form, "order-1": "x,y"}, 2)
    assert list(parsed.errors) == ["order-0"]
    assert parsed.errors["order-0"].startswith("Picture 1: ") and message in parsed.errors["order-0"]


def test_an_ordering_of_other_candidates_than_the_page_showed_is_refused() -> None:
    parsed = T.check_against_items(T.parse_answers({"order-0": "c1,c9"}, 1), [ITEM])
    assert "not the ones on the page" in parsed.errors["order-0"]


def test_score_is_kendalls_tau_mapped_to_zero_one() -> None:
    gold = ["c1", "c2", "c3", "c4"]
    assert T.score_gold(gold, {"order": gold}, {}) == 1.0
    assert T.score_gold(gold[::-1], {"order": gold}, {}) == 0.0
    assert T.score_gold(["c2", "c1", "c3", "c4"], {"order": gold}, {}) == pytest.approx(5 / 6)  # one swap
    assert T.score_gold(["a", "b"], {"order": ["a", "b"]}, {}) == 1.0
    assert T.score_gold(["b", "a"], {"order": ["a", "b"]}, {}) == 0.0
    assert T.score_gold(["c1", "c2"], {"order": gold}, {}) == 0.0  # not the gold's candidates
    for answer in permutations(gold):
        tau = kendalltau([gold.index(c) for c in answer], range(4)).statistic
        assert kendall_tau(answer, gold) == pytest.approx(tau)
        assert concordance(answer, gold) == pytest.approx((tau + 1) / 2)


def test_default_pass_mark_allows_a_fifth_of_the_pairs_out_of_order() -> None:
    def passes(answer: str, gold: str, **options: float) -> bool:
        return T.gold_passed(T.score_gold(list(answer), {"order": list(gold)}, options), options)

    assert passes("abcd", "abcd") and passes("bacd", "abcd")  # one adjacent swap of four
    assert not passes("bcad", "abcd") and not passes("badc", "abcd")  # two pairs wrong
    assert not passes("bac", "abc") and not passes("ba", "ab")  # of three or two: exact only
    assert passes("baced", "abcde")  # two pairs of ten wrong: exactly 0.8
    assert not passes("bacd", "abcd", gold_pass_score=1.0)


def test_the_page_view_hides_systems_and_shuffles_per_assignment() -> None:
    views = [T.slot_view(ITEM, f"A{k}:H1:0") for k in range(20)]
    assert all("system" not in c for v in views for c in v["candidates"])
    assert "system" in ITEM["candidates"][0]  # the stored payload is untouched
    assert T.slot_view(ITEM, "A1:H1:0") == views[1]  # stable for one assignment's slot
    orders = {tuple(c["id"] for c in v["candidates"]) for v in views}
    assert len(orders) > 5 and all(sorted(o) == ["c1", "c2", "c3", "c4"] for o in orders)


def test_the_page_offers_places_or_a_choice_escapes_text_and_keeps_input(tmp_path: Path) -> None:
    from bs4 import BeautifulSoup

    four = {**T.slot_view(ITEM, "seed"), "image_url": "/i.png"}
    two = {
        **T.slot_view({"image": "p.png", "candidates": ITEM["candidates"][:2]}, "s"),
        "image_url": "/p.png",
    }
    shown = [c["id"] for c in four["candidates"]]
    html = render_task_page(
        "compare",
        [four, two],
        tmp_path,
        {f"rank-0-{shown[0]}": "3", "order-1": f"{two['candidates'][1]['id']},{two['candidates'][0]['id']}"},
        {"order-0": "Picture 1: 3 descriptions have no place yet."},
    )
    page = BeautifulSoup(html, "html.parser")
    first, second = page.find_all("fieldset", class_="compare-item")
    assert "put the 4 descriptions in order" in first.legend.get_text()
    selects = first.find_all("select")
    assert [s["name"] for s in selects] == [f"rank-0-{c}" for c in shown]
    assert [o.get_text() for o in selects[0].find_all("option")][1:] == ["1 (best)", "2", "3", "4 (worst)"]
    assert selects[0].find("option", selected=True)["value"] == "3"  # kept after an error
    assert first["aria-describedby"] == "error-0" and "no place yet" in first.get_text()
    assert "which description is better?" in second.legend.get_text()
    radios = second.find_all("input", type="radio")
    assert [r["value"] for r in radios] == [
        f"{two['candidates'][0]['id']},{two['candidates'][1]['id']}",
        f"{two['candidates'][1]['id']},{two['candidates'][0]['id']}",
    ]
    assert radios[1].has_attr("checked") and not radios[0].has_attr("checked")
    assert second.find("label").get_text(" ", strip=True) == "Description A is better"
    assert "A green &lt;b&gt;triangle&lt;/b&gt; &amp; a dog." in html  # escaped, never markup
    for system in ("alpha", "beta", "gamma", "delta"):
        assert system not in html.lower()
