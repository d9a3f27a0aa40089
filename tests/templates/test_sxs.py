"""The sxs template on its own: its items, answers, gold scoring, unscrambling and the study's table."""

from __future__ import annotations

import math
import random

import pytest
from pydantic import ValidationError

from hits.requester.templates import get_template
from hits.requester.templates.sxs import METRICS
from hits.requester.templates.sxs.report import COLUMNS, Judgement, preference_tables

SXS = get_template("sxs")
ITEM = {
    "image": "p.png",
    "candidates": [
        {"id": "c1", "text": "A red circle.", "system": "alpha"},
        {"id": "c2", "text": "B.", "system": "beta"},
    ],
}


def _form(slot: int, values: dict[str, int]) -> dict[str, str]:
    return {f"sxs-{slot}-{m}": str(v) for m, v in values.items()}


def test_items_have_exactly_two_candidates_with_neutral_distinct_ids() -> None:
    SXS.validate_item(ITEM)
    three = {**ITEM, "candidates": [*ITEM["candidates"], {"id": "c3", "text": "C."}]}
    same = {**ITEM, "candidates": [ITEM["candidates"][0], {**ITEM["candidates"][0], "system": "beta"}]}
    telling = {
        **ITEM,
        "candidates": [{"id": "alpha-1", "text": "A.", "system": "alpha"}, ITEM["candidates"][1]],
    }
    for bad in (three, same, telling, {**ITEM, "candidates": ITEM["candidates"][:1]}):
        with pytest.raises(ValidationError):
            SXS.validate_item(bad)


def test_every_metric_needs_one_of_the_five_choices_and_errors_say_which() -> None:
    full = dict.fromkeys(METRICS, 0)
    parsed = SXS.parse_answers({**_form(0, full), **_form(1, {"specificity": 2, "tldr": 7})}, 2)
    assert list(parsed.errors) == ["sxs-1"]  # one message per picture, the page links to it
    message = parsed.errors["sxs-1"]
    assert "Picture 2" in message and "Comprehensiveness" in message and "3 of 5 still open" in message
    assert "First sentences as a summary: not one of the five choices" in message
    assert SXS.parse_answers({}, 1).errors["sxs-0"].endswith("(5 of 5 still open).")
    ok = SXS.parse_answers({**_form(0, full), **_form(1, dict.fromkeys(METRICS, -2))}, 2)
    assert ok.ok and ok.answers == [full, dict.fromkeys(METRICS, -2)]
    # MTurk's stored answer reads back to the same answers.
    assert SXS.answers_from_fields(dict(SXS.answer_fields(ok.answers)), 2) == ok.answers


def test_the_page_gets_two_texts_in_the_arrangement_and_answers_come_back_in_item_terms() -> None:
    rng = random.Random(3)
    lefts = {SXS.arrange(ITEM, rng)["left"] for _ in range(40)}
    assert lefts == {"c1", "c2"}  # either side, by chance
    swapped = SXS.arranged_view(ITEM, {"left": "c2"})
    assert swapped["texts"] == ["B.", "A red circle."]
    assert "candidates" not in swapped and "alpha" not in str(swapped) and "c1" not in str(swapped)
    assert SXS.arranged_view(ITEM, {"left": "c1"})["texts"] == ["A red circle.", "B."]
    page = {"comprehensiveness": -2, "specificity": 1, "hallucinations": 0, "tldr": -1, "human_likeness": 2}
    # "Left much better" with c2 on the left is "second much better" in the item's terms.
    assert SXS.unscramble(page, {"left": "c2"}, ITEM) == {m: -v for m, v in page.items()}
    assert SXS.unscramble(page, {"left": "c1"}, ITEM) == page


def test_gold_passes_within_one_step_on_every_known_metric() -> None:
    key = SXS.validate_answer_key({"preferences": {"comprehensiveness": 2, "hallucinations": 0}})
    options: dict[str, object] = {}
    near = {"comprehensiveness": 1, "hallucinations": -1, "tldr": -2}  # tldr has no key: not scored
    assert SXS.score_gold(near, key, options) == 1.0 and SXS.gold_passed(1.0, options)
    off = {"comprehensiveness": 0, "hallucinations": 0}
    assert SXS.score_gold(off, key, options) == 0.5 and not SXS.gold_passed(0.5, options)
    assert SXS.score_gold(off, key, {"gold_tolerance": 2}) == 1.0
    assert SXS.gold_passed(0.5, {"gold_pass_score": 0.5})
    for bad in (
        {"preferences": {}},
        {"preferences": {"speed": 1}},
        {"preferences": {"tldr": 3}},
        {"order": []},
    ):
        with pytest.raises(ValidationError):
            SXS.validate_answer_key(bad)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return centre - half, centre + half


def test_the_table_counts_each_column_per_pair_and_metric_with_intervals() -> None:
    # Items name their systems in either order; the table orients every judgement to (X, Y).
    values = [2, 2, 1, 0, -1, 2, 1, 0]
    judgements = []
    for k, v in enumerate(values):
        first, second, answer = ("hasty", "keen", v) if k % 2 else ("keen", "hasty", -v)
        judgements.append(Judgement(f"item-{k // 2}", first, second, {"comprehensiveness": answer}))
    judgements.append(Judgement("same", "keen", "keen", {"comprehensiveness": 2}))  # no pair: left out
    (table,) = preference_tables(judgements)
    assert (table.left, table.right, table.items, table.judgements) == ("hasty", "keen", 4, 8)
    (row,) = table.rows
    assert row.metric == "comprehensiveness" and row.judgements == 8
    for column, share in zip(COLUMNS, row.shares, strict=True):
        count = values.count(column)
        assert share.count == count and share.share == count / 8
        assert (share.low, share.high) == pytest.approx(_wilson(count, 8))
    assert row.net == pytest.approx((5 - 1) / 8)
    assert row.net_low <= row.net <= row.net_high and row.net_low >= -1 and row.net_high <= 1
    # The same answers give the same table (the bootstrap is seeded); --right flips the pair.
    assert preference_tables(judgements)[0] == table
    (flipped,) = preference_tables(judgements, right="hasty")
    assert (flipped.left, flipped.right) == ("keen", "hasty")
    assert [s.count for s in flipped.rows[0].shares] == [s.count for s in reversed(row.shares)]
    assert flipped.rows[0].net == pytest.approx(-row.net)
