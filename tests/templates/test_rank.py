"""The rank template on its own: items, answers and their ties, tau-b gold, unscrambling, the models."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest
from pydantic import ValidationError

from hits.requester.quality.aggregation import aggregate_frame
from hits.requester.templates import get_template
from hits.requester.templates.rank import normalised, tau_b
from hits.requester.templates.rank.model import consensus_ranks, fit_davidson, pairwise_outcomes
from hits.requester.templates.rank.report import Ranking, rank_table

RANK = get_template("rank")
ITEM = {
    "image": "ref.png",
    "condition": "sentence 1",
    "candidates": [
        {"id": "c1", "image": "a.png", "system": "alpha"},
        {"id": "c2", "image": "b.png", "system": "beta"},
        {"id": "c3", "image": "c.png", "system": "gamma"},
    ],
}


def _form(slot: int, ranks: list[object]) -> dict[str, str]:
    return {f"rank-{slot}-{place}": str(r) for place, r in enumerate(ranks)}


def test_items_need_two_to_eight_candidates_with_unique_ids_and_pictures_in_the_media_folder() -> None:
    RANK.validate_item(ITEM)
    one = {**ITEM, "candidates": ITEM["candidates"][:1]}
    nine = {**ITEM, "candidates": [{"id": f"c{k}", "image": f"{k}.png"} for k in range(9)]}
    twice = {**ITEM, "candidates": [ITEM["candidates"][0], ITEM["candidates"][0]]}
    # A URL of the requester's own could name the model; only media files get opaque URLs.
    remote = {**ITEM, "candidates": [*ITEM["candidates"][:2], {"id": "c3", "image": "https://x/beta/1.png"}]}
    absolute = {**ITEM, "candidates": [*ITEM["candidates"][:2], {"id": "c3", "image": "/srv/beta.png"}]}
    for bad in (one, nine, twice, remote, absolute, {**ITEM, "extra": 1}):
        with pytest.raises(ValidationError):
            RANK.validate_item(bad)
    with pytest.raises(ValidationError, match="candidate ids must be unique; repeated: c1"):
        RANK.validate_item(twice)


def test_ties_are_allowed_and_any_numbering_of_one_order_is_stored_as_competition_ranks() -> None:
    # Dense (1,1,2), competition (1,1,3) and gapped (2,2,3) all say: first two tied, third behind.
    for given in ([1, 1, 2], [1, 1, 3], [2, 2, 3]):
        parsed = RANK.parse_answers(_form(0, given), 1)
        assert parsed.ok and parsed.answers == [[1, 1, 3]]
    assert RANK.parse_answers(_form(0, [3, 1, 3]), 1).answers == [[2, 1, 2]]
    assert RANK.parse_answers(_form(0, [2, 2, 2]), 1).answers == [[1, 1, 1]]  # all alike: allowed
    assert RANK.parse_answers(_form(0, [3, 2, 1]), 1).answers == [[3, 2, 1]]
    assert normalised({"a": 4, "b": 1, "c": 4, "d": 2}) == {"a": 3, "b": 1, "c": 3, "d": 2}


def test_every_candidate_needs_a_rank_from_1_to_k_and_errors_say_which_task() -> None:
    parsed = RANK.parse_answers({**_form(0, [1, 2, 3]), **_form(1, [1, "", ""])}, 2)
    assert list(parsed.errors) == ["rank-1"]  # one message per task, the page links to it
    assert parsed.errors["rank-1"].startswith("Task 2: 2 of 3 candidates have no rank yet")
    for bad in ([0, 1, 2], [1, 2, 4], [1, "x", 2], [1, "1.5", 2], [1, "-1", 2]):
        message = RANK.parse_answers(_form(0, bad), 1).errors["rank-0"]
        assert "is not a rank from 1 to 3" in message
    lost = RANK.parse_answers({"rank-0-0": "1", "rank-0-2": "2"}, 1).errors["rank-0"]
    assert "lost some of its candidates" in lost
    assert (
        "no rank yet" in RANK.parse_answers({}, 1).errors["rank-0"]
        or "lost" in (RANK.parse_answers({}, 1).errors["rank-0"])
    )
    # A form with more or fewer ranks than the item has candidates is refused against the item.
    two = RANK.parse_answers(_form(0, [1, 2]), 1)
    assert two.ok
    checked = RANK.check_against_items(two, [RANK.validate_item(ITEM)])
    assert "not for the candidates on the page" in checked.errors["rank-0"]
    # MTurk's stored answer (page terms) reads back to the same answers.
    ok = RANK.parse_answers({**_form(0, [2, 1, 2]), **_form(1, [1, 1, 1])}, 2)
    assert (
        RANK.answers_from_fields(dict(RANK.answer_fields(ok.answers)), 2)
        == ok.answers
        == [[2, 1, 2], [1, 1, 1]]
    )


def test_the_page_order_is_a_random_permutation_and_answers_come_back_per_candidate() -> None:
    rng = random.Random(5)
    orders = {tuple(RANK.arrange(ITEM, rng)["order"]) for _ in range(200)}
    assert len(orders) == 6  # every order of three, by chance
    view = RANK.arranged_view(ITEM, {"order": ["c3", "c1", "c2"]})
    assert view["candidates"] == [
        {"image": "c.png", "source": 2},
        {"image": "a.png", "source": 0},
        {"image": "b.png", "source": 1},
    ]
    assert "condition" not in view and "alpha" not in str(view) and "c1" not in str(view)
    assert RANK.unscramble([1, 3, 1], {"order": ["c3", "c1", "c2"]}, ITEM) == {"c3": 1, "c1": 3, "c2": 1}


def test_gold_is_kendall_tau_b_with_ties_and_its_pass_mark_is_configurable() -> None:
    key = RANK.validate_answer_key({"ranks": {"c1": 1, "c2": 2, "c3": 3}})
    RANK.check_answer_key(key, ITEM)
    with pytest.raises(ValueError, match="each of the item's candidates"):
        RANK.check_answer_key(RANK.validate_answer_key({"ranks": {"c1": 1, "c2": 2}}), ITEM)
    with pytest.raises(ValidationError, match="ties every candidate"):
        RANK.validate_answer_key({"ranks": {"c1": 1, "c2": 1, "c3": 1}})
    assert RANK.validate_answer_key({"ranks": {"c1": 1, "c2": 1, "c3": 2}}) == {
        "ranks": {"c1": 1, "c2": 1, "c3": 3}
    }

    def score(answer: dict[str, int], options: dict | None = None) -> tuple[float, bool]:
        s = RANK.score_gold(answer, key, options or {})
        return s, RANK.gold_passed(s, options or {})

    assert score({"c1": 1, "c2": 2, "c3": 3}) == (1.0, True)
    assert score({"c1": 3, "c2": 2, "c3": 1}) == (0.0, False)
    # One tie the key does not make: tau-b = 2 / sqrt(3 * 2) = 0.816, passes the default 0.6.
    tied, passed = score({"c1": 1, "c2": 1, "c3": 3})
    assert math.isclose(2 * tied - 1, 2 / math.sqrt(6)) and passed
    # One swapped pair: tau-b = 1/3, fails by default, passes a lower pass mark.
    swapped, passed = score({"c1": 2, "c2": 1, "c3": 3})
    assert math.isclose(2 * swapped - 1, 1 / 3) and not passed
    assert RANK.gold_passed(swapped, {"gold_min_tau": 0.3})
    # The key's tie moved to the other pair: tau-b = 1 / sqrt(2 * 2) = 0.5, below the default.
    moved = RANK.score_gold({"c1": 1, "c2": 1, "c3": 3}, {"ranks": {"c1": 1, "c2": 2, "c3": 2}}, {})
    assert math.isclose(2 * moved - 1, 0.5) and not RANK.gold_passed(moved, {})
    assert not RANK.gold_passed(tied, {"gold_pass_score": 0.95})
    # Tying everything says nothing (tau-b undefined): scored as the worst answer, never a pass.
    assert score({"c1": 2, "c2": 2, "c3": 2}) == (0.0, False)
    assert score({"c1": 1, "c2": 2}) == (0.0, False)  # not the key's candidates
    assert RANK.score_gold("1,2,3", key, {}) == 0.0
    # A key with a tie: tying the same two is perfect, breaking it costs.
    tied_key = {"ranks": {"c1": 1, "c2": 1, "c3": 3}}
    assert RANK.score_gold({"c1": 1, "c2": 1, "c3": 3}, tied_key, {}) == 1.0
    assert math.isclose(tau_b({"c1": 1, "c2": 2, "c3": 3}, tied_key["ranks"]), 2 / math.sqrt(6))


def _draw_ranking(rng: random.Random, quality: dict[str, float], tie_width: float) -> dict[str, int]:
    """Latent closeness + noise; candidates within ``tie_width`` of each other's bucket tie."""
    latent = {c: q + rng.gauss(0, 1) for c, q in quality.items()}
    return normalised({c: -math.floor(v / tie_width) for c, v in latent.items()})


def test_davidson_recovers_the_true_order_from_noisy_rankings_with_many_ties() -> None:
    rng = random.Random(11)
    quality = {"a": 2.0, "b": 1.2, "c": 0.5, "d": -0.5, "e": -1.5}
    rankings = [_draw_ranking(rng, quality, 1.5) for _ in range(400)]
    ties = sum(len(set(r.values())) < len(r) for r in rankings)
    assert ties > 200  # most rankings hold a tie
    fit = fit_davidson(o for r in rankings for o in pairwise_outcomes(r))
    assert sorted(fit.strength, key=fit.strength.__getitem__, reverse=True) == list(quality)
    assert math.isclose(sum(fit.strength.values()), 1.0)
    assert fit.nu > 0.2  # ties were common, and the model says so
    # The model's tie probability for neighbours is above that for the two ends.
    assert fit.p_tie("a", "b") > fit.p_tie("a", "e")
    assert fit.p_better("a", "e") > 0.9

    no_ties = [_draw_ranking(rng, quality, 1e-9) for _ in range(300)]
    strict = fit_davidson(o for r in no_ties for o in pairwise_outcomes(r))
    assert strict.nu < 1e-3  # no tie ever: nu goes to its floor
    assert sorted(strict.strength, key=strict.strength.__getitem__, reverse=True) == list(quality)


def test_candidates_tied_by_everyone_tie_in_the_consensus_and_aggregation_keeps_ties() -> None:
    fit = fit_davidson(o for r in [{"x": 1, "y": 1, "z": 3}] * 3 for o in pairwise_outcomes(r))
    assert consensus_ranks(fit) == {"x": 1, "y": 1, "z": 3}
    frame = pd.DataFrame(
        [
            ("i1", "w1", {"c1": 1, "c2": 1, "c3": 3}),
            ("i1", "w2", {"c1": 1, "c2": 1, "c3": 3}),
            ("i1", "w3", {"c1": 1, "c2": 2, "c3": 3}),
            ("i2", "w1", {"c1": 3, "c2": 2, "c3": 1}),
            ("i2", "w2", {"c1": 3, "c2": 2, "c3": 1}),
        ],
        columns=["task", "worker", "label"],
    )
    by_item = {a.item_id: a for a in aggregate_frame(frame, "davidson")}
    assert by_item["i1"].label == {"c1": 1, "c2": 1, "c3": 3}  # two of three tied c1 and c2
    assert by_item["i2"].label == {"c3": 1, "c2": 2, "c1": 3}
    assert by_item["i2"].detail["support"] == 1.0 and by_item["i1"].detail["support"] == round(8 / 9, 4)
    assert by_item["i1"].votes == 3 and by_item["i1"].method == "davidson"
    assert by_item["i1"].detail["mean_rank"] == {"c1": 1.0, "c2": 1.3333, "c3": 3.0}
    with pytest.raises(ValueError, match="aggregates rankings"):
        aggregate_frame(pd.DataFrame([("i1", "w1", 3)], columns=["task", "worker", "label"]), "davidson")


def test_the_table_has_mean_rank_shared_first_places_and_strength_per_condition() -> None:
    rankings = [
        # Condition one: alpha alone first, then alpha tied first with beta.
        Ranking("i1", "one", (("alpha", 1), ("beta", 2), ("gamma", 3))),
        Ranking("i2", "one", (("alpha", 1), ("beta", 1), ("gamma", 3))),
        # Condition two: gamma first twice.
        Ranking("i3", "two", (("alpha", 2), ("beta", 3), ("gamma", 1))),
        Ranking("i3", "two", (("alpha", 2), ("beta", 2), ("gamma", 1))),
    ]
    table = rank_table(rankings)
    assert table is not None
    assert [c.condition for c in table.columns] == ["one", "two", "all"]
    one, two, everything = table.columns
    assert (one.items, one.rankings, two.items, two.rankings, everything.rankings) == (2, 2, 1, 2, 4)
    assert one.cells["alpha"].mean_rank == 1.0 and one.cells["beta"].mean_rank == 1.5
    assert one.cells["alpha"].first_share == 0.75 and one.cells["beta"].first_share == 0.25  # shared: 1/2
    assert one.cells["gamma"].first_share == 0.0 and two.cells["gamma"].first_share == 1.0
    assert everything.cells["beta"].mean_rank == pytest.approx((2 + 1 + 3 + 2) / 4)
    for column in table.columns:
        assert math.isclose(sum(c.strength for c in column.cells.values()), 1.0)
        for c in column.cells.values():
            assert c.mean_rank_low <= c.mean_rank <= c.mean_rank_high
            assert c.first_low <= c.first_share <= c.first_high
    # One item in column two: every resample is that item, so its interval is a point.
    assert two.cells["gamma"].mean_rank_low == two.cells["gamma"].mean_rank_high == 1.0
    assert table.systems == ["alpha", "beta", "gamma"]  # mean rank over everything: 1.5, 2, 2 (then name)
    assert rank_table([]) is None
    # Without conditions, one column named "all".
    plain = rank_table([Ranking(r.item_id, "", r.ranks) for r in rankings])
    assert plain is not None and [c.condition for c in plain.columns] == ["all"]


def test_without_ties_davidson_is_bradley_terry_and_agrees_with_the_compare_templates_fit() -> None:
    from hits.requester.quality.ranking import bradley_terry

    rng = random.Random(4)
    true = {"x": 4.0, "y": 2.0, "z": 1.0}
    games = []
    for _ in range(3000):
        a, b = rng.sample(sorted(true), 2)
        games.append((a, b, 1 if rng.random() < true[a] / (true[a] + true[b]) else -1))
    fit = fit_davidson(games)
    assert fit.nu < 1e-3
    pairs = pd.DataFrame(
        [("t", "w", min(a, b), max(a, b), a if o == 1 else b) for a, b, o in games],
        columns=["task", "worker", "left", "right", "label"],
    )
    theirs = bradley_terry(pairs)
    for name, share in true.items():
        assert fit.strength[name] == pytest.approx(theirs[name], abs=0.005)
        assert fit.strength[name] == pytest.approx(share / 7, abs=0.03)


def test_at_the_fit_each_candidates_expected_score_equals_its_observed_score() -> None:
    """The likelihood equations: wins + ties / 2 = their expectation under the fit (up to the ridge)."""
    rng = random.Random(9)
    quality = {"a": 1.5, "b": 0.5, "c": 0.0, "d": -1.0}
    rankings = [_draw_ranking(rng, quality, 1.2) for _ in range(500)]
    outcomes = [o for r in rankings for o in pairwise_outcomes(r)]
    fit = fit_davidson(outcomes, ridge=0.0)
    observed = dict.fromkeys(quality, 0.0)
    expected = dict.fromkeys(quality, 0.0)
    ties = expected_ties = 0.0
    for a, b, outcome in outcomes:
        observed[a] += {1: 1.0, 0: 0.5, -1: 0.0}[outcome]
        observed[b] += {1: 0.0, 0: 0.5, -1: 1.0}[outcome]
        tie = fit.p_tie(a, b)
        expected[a] += fit.p_better(a, b) + tie / 2
        expected[b] += fit.p_better(b, a) + tie / 2
        ties += outcome == 0
        expected_ties += tie
    for name in quality:
        assert expected[name] == pytest.approx(observed[name], rel=1e-4)
    assert expected_ties == pytest.approx(ties, rel=1e-4)
