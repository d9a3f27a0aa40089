"""Aggregation and agreement on planted data, where the truth is known."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from hits.requester.answers import krippendorff_alpha
from hits.requester.quality.aggregation import aggregate_frame


def planted(seed: int = 3, items: int = 300) -> tuple[pd.DataFrame, dict[str, int]]:
    """Per item: one careful worker, two spammers who favour label 1, one mediocre worker."""
    rng = random.Random(seed)
    truth = {f"t{i}": rng.randint(1, 4) for i in range(items)}
    rows = []
    for task, label in truth.items():
        rows.append((task, "careful", label if rng.random() < 0.95 else rng.randint(1, 4)))
        for spammer in ("spam-a", "spam-b"):
            rows.append((task, spammer, 1 if rng.random() < 0.7 else rng.randint(1, 4)))
        rows.append((task, "mediocre", label if rng.random() < 0.7 else rng.randint(1, 4)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


def accuracy(result, truth) -> float:  # type: ignore[no-untyped-def]
    return sum(r.label == truth[r.item_id] for r in result) / len(truth)


def test_dawid_skene_is_at_least_as_accurate_as_majority_vote() -> None:
    frame, truth = planted()
    mv = aggregate_frame(frame, "majority_vote")
    ds = aggregate_frame(frame, "dawid_skene")
    assert accuracy(ds, truth) >= accuracy(mv, truth)
    assert accuracy(ds, truth) > 0.75
    assert all(0.0 <= r.confidence <= 1.0 for r in ds)
    assert {r.votes for r in ds} == {4}


def test_glad_runs_and_unknown_methods_are_refused() -> None:
    frame, truth = planted(items=40)
    assert len(aggregate_frame(frame, "glad")) == 40
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate_frame(frame, "median")


def test_krippendorff_alpha_is_one_for_agreement_and_near_zero_for_noise() -> None:
    rows = [(f"t{i}", w, i % 4 + 1) for i in range(50) for w in ("a", "b", "c")]
    assert krippendorff_alpha(pd.DataFrame(rows, columns=["task", "worker", "label"])) == pytest.approx(1.0)
    rng = random.Random(1)
    noise = [(f"t{i}", w, rng.randint(1, 4)) for i in range(400) for w in ("a", "b", "c")]
    alpha = krippendorff_alpha(pd.DataFrame(noise, columns=["task", "worker", "label"]))
    assert alpha is not None and abs(alpha) < 0.1


def test_structured_aggregations_for_sets_spans_and_text() -> None:
    sets = pd.DataFrame(
        [("i1", "a", [0, 2]), ("i1", "b", [0]), ("i1", "c", [0, 2]), ("i2", "a", []), ("i2", "b", [])],
        columns=["task", "worker", "label"],
    )
    chosen = {a.item_id: a.label for a in aggregate_frame(sets, "binary_relevance")}
    assert chosen == {"i1": [0, 2], "i2": []}
    spans = pd.DataFrame(
        [
            ("s", "a", {"mistakes": [[0, 5]], "missing": []}),
            ("s", "b", {"mistakes": [[0, 5], [10, 12]], "missing": []}),
            ("s", "c", {"mistakes": [[2, 5]], "missing": [[1, 3]]}),
        ],
        columns=["task", "worker", "label"],
    )
    (merged,) = aggregate_frame(spans, "token_majority")
    assert merged.label == {"mistakes": [[0, 5]], "missing": []}
    text = pd.DataFrame([("w", "a", "One."), ("w", "b", "Two.")], columns=["task", "worker", "label"])
    assert aggregate_frame(text, "collect_all")[0].label == ["One.", "Two."]


def test_nominal_alpha_takes_letters() -> None:
    rows = [(f"t{i}", w, "AOMF"[i % 4]) for i in range(8) for w in ("a", "b", "c")]
    assert krippendorff_alpha(
        pd.DataFrame(rows, columns=["task", "worker", "label"]), "nominal"
    ) == pytest.approx(1.0)


def test_confidence_accounts_for_the_number_of_votes_and_the_methods_own_figure_is_kept() -> None:
    # The issue: two agreeing votes were shown as confidence 1.00 (a model posterior).
    rows = [("two", w, 3) for w in ("a", "b")] + [("three", w, 2) for w in ("a", "b", "c")]
    rows += [("split", w, label) for w, label in (("a", 1), ("b", 1), ("c", 4))]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    for method in ("majority_vote", "dawid_skene"):
        by_item = {a.item_id: a for a in aggregate_frame(frame, method)}
        # P(most workers like these say 3) after 2 of 2: the Beta(3, 1) mass above one half.
        assert by_item["two"].confidence == pytest.approx(1 - 0.5**3)
        assert by_item["three"].confidence == pytest.approx(1 - 0.5**4)
        assert by_item["two"].confidence < by_item["three"].confidence < 1
        assert (by_item["two"].votes, by_item["three"].votes) == (2, 3)
    majority = {a.item_id: a for a in aggregate_frame(frame, "majority_vote")}
    assert majority["two"].detail["support"] == 1.0
    assert majority["split"].detail["support"] == pytest.approx(2 / 3, abs=1e-4)
    # 2 of 3: Beta(3, 2) above one half.
    assert majority["split"].confidence == pytest.approx(0.6875)


def test_alpha_is_none_not_an_error_when_no_item_has_two_workers_or_all_answers_agree() -> None:
    # The study tables ask for alpha on whatever work has come in (e.g. one worker per item).
    apart = pd.DataFrame({"task": ["a", "b"], "worker": ["w1", "w2"], "label": [1, 2]})
    assert krippendorff_alpha(apart, "ordinal") is None
    same = pd.DataFrame({"task": ["a", "a", "b", "b"], "worker": ["w1", "w2"] * 2, "label": [3, 3, 3, 3]})
    assert krippendorff_alpha(same, "ordinal") is None
    varied = pd.DataFrame({"task": ["a", "a", "b", "b"], "worker": ["w1", "w2"] * 2, "label": [1, 1, 3, 3]})
    assert krippendorff_alpha(varied, "ordinal") == 1.0
