"""Bradley-Terry on orderings where the truth is planted: consensus, confidence, systems, agreement."""

from __future__ import annotations

import math
import random

import pandas as pd
import pytest

from hits.requester.answers import krippendorff_alpha
from hits.requester.quality.aggregation import aggregate_frame, majority_confidence
from hits.requester.quality.ranking import bradley_terry, pairwise_frame, rank_positions, system_scores
from hits.requester.templates.compare import concordance

COLUMNS = ["task", "worker", "label"]


def noisy(order: list[str], rng: random.Random, swaps: float) -> list[str]:
    """``order`` with each adjacent pair swapped with probability ``swaps`` (one pass, left to right)."""
    out = list(order)
    for k in range(len(out) - 1):
        if rng.random() < swaps:
            out[k], out[k + 1] = out[k + 1], out[k]
    return out


def test_pairs_from_an_ordering_name_the_earlier_candidate_the_winner() -> None:
    pairs = pairwise_frame(pd.DataFrame([("t", "w", ["c", "a", "b"])], columns=COLUMNS))
    assert sorted(map(tuple, pairs[["left", "right", "label"]].to_numpy().tolist())) == [
        ("a", "b", "a"),
        ("a", "c", "c"),
        ("b", "c", "c"),
    ]


def test_bradley_terry_solves_the_likelihood_equations() -> None:
    """At the maximum, each candidate's expected wins equal its wins (prior 0, no unanimity)."""
    rng = random.Random(4)
    true = {"x": 6.0, "y": 3.0, "z": 1.0}
    rows = []
    for k in range(600):
        a, b = rng.sample(sorted(true), 2)
        winner = a if rng.random() < true[a] / (true[a] + true[b]) else b
        rows.append((f"w{k % 7}", *sorted((a, b)), winner))
    pairs = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    p = bradley_terry(pairs, prior=0.0)
    assert sum(p.values()) == pytest.approx(1.0)
    for i in p:
        wins = int((pairs["label"] == i).sum())
        expected = 0.0
        for j in p:
            if j != i:
                games = int(
                    (
                        ((pairs["left"] == i) & (pairs["right"] == j))
                        | ((pairs["left"] == j) & (pairs["right"] == i))
                    ).sum()
                )
                expected += games * p[i] / (p[i] + p[j])
        assert expected == pytest.approx(wins, abs=1e-3)
    assert p["x"] > p["y"] > p["z"]  # the planted order


def _planted(rng: random.Random, swaps: float, spammer: bool) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    ids = ["c1", "c2", "c3", "c4", "c5"]
    truth = {f"t{i}": rng.sample(ids, 5) for i in range(150)}
    rows = []
    for task, order in truth.items():
        rows.extend((task, worker, noisy(order, rng, swaps)) for worker in ("w1", "w2", "w3", "w4"))
        if spammer:
            rows.append((task, "spammer", rng.sample(ids, 5)))
    return pd.DataFrame(rows, columns=COLUMNS), truth


def test_consensus_recovers_known_orders_from_noisy_workers() -> None:
    frame, truth = _planted(random.Random(11), swaps=0.1, spammer=False)
    result = aggregate_frame(frame, "bradley_terry")
    assert (
        len(result) == 150
        and {r.method for r in result} == {"bradley_terry"}
        and {r.votes for r in result} == {4}
    )
    # One worker alone has the whole order right (1 - 0.1)^4 = 66% of the time.
    assert sum(r.label == truth[r.item_id] for r in result) / len(result) > 0.9
    assert all(0.5 <= r.confidence <= 1.0 for r in result)
    first = result[0]
    assert list(first.detail["strength"]) == first.label  # strongest first
    assert list(first.detail["strength"].values()) == sorted(first.detail["strength"].values(), reverse=True)


def test_consensus_beats_every_single_worker_even_with_a_spammer_among_them() -> None:
    frame, truth = _planted(random.Random(12), swaps=0.2, spammer=True)
    result = aggregate_frame(frame, "bradley_terry")
    consensus = sum(concordance(r.label, truth[r.item_id]) for r in result) / len(result)
    best_worker = max(
        sum(concordance(o, truth[t]) for t, o in zip(group["task"], group["label"], strict=True)) / len(group)
        for _, group in frame.groupby("worker")
    )
    assert consensus > best_worker
    exact = sum(r.label == truth[r.item_id] for r in result) / len(result)
    assert exact > (1 - 0.2) ** 4 + 0.1  # a single careful worker's chance of the exact order, and more


def test_support_is_the_share_of_pairwise_judgements_that_agree_with_the_consensus() -> None:
    frame = pd.DataFrame(
        [
            ("split", "a", ["x", "y", "z"]),
            ("split", "b", ["x", "y", "z"]),
            ("split", "c", ["y", "x", "z"]),
            ("same", "a", ["q", "p"]),
            ("same", "b", ["q", "p"]),
        ],
        columns=COLUMNS,
    )
    by_item = {r.item_id: r for r in aggregate_frame(frame, "bradley_terry")}
    assert by_item["split"].label == ["x", "y", "z"] and by_item["split"].detail["support"] == pytest.approx(
        8 / 9, abs=1e-4
    )
    assert by_item["same"].label == ["q", "p"] and by_item["same"].detail["support"] == 1.0
    # The confidence accounts for the votes: two unanimous workers are not certainty.
    assert by_item["same"].confidence == pytest.approx(0.875)
    assert by_item["split"].confidence == pytest.approx(majority_confidence(8 / 9, 3))
    # Unanimous judgements still give finite strengths, thanks to the prior.
    assert 0 < by_item["same"].detail["strength"]["p"] < by_item["same"].detail["strength"]["q"]


def test_a_tie_in_strength_goes_to_the_better_mean_place_then_the_id() -> None:
    frame = pd.DataFrame([("t", "a", ["m", "n"]), ("t", "b", ["n", "m"])], columns=COLUMNS)
    (only,) = aggregate_frame(frame, "bradley_terry")
    assert only.label == ["m", "n"] and only.detail["support"] == 0.5 and only.confidence == 0.5


def test_system_scores_name_the_winner_and_by_how_much() -> None:
    rng = random.Random(5)
    skill = {"keen": 1.5, "plain": 0.5, "sloppy": -0.5}
    rows, items = [], {}
    for i in range(120):
        systems = rng.sample(sorted(skill), rng.choice((2, 3)))
        by_quality = sorted(systems, key=lambda s: skill[s] + rng.gauss(0, 1.0), reverse=True)
        candidates = [{"id": f"c{k}", "text": "...", "system": s} for k, s in enumerate(systems)]
        items[f"t{i}"] = {"candidates": candidates}
        ids = {c["system"]: c["id"] for c in candidates}
        for worker in ("w1", "w2", "w3"):
            rows.append((f"t{i}", worker, noisy([ids[s] for s in by_quality], rng, 0.1)))
    report = system_scores(pd.DataFrame(rows, columns=COLUMNS), items)
    assert [s.system for s in report.systems] == ["keen", "plain", "sloppy"] and report.winner == "keen"
    assert math.isclose(sum(s.strength for s in report.systems), 1.0)
    keen, plain, sloppy = report.systems
    assert keen.win_rate > plain.win_rate > sloppy.win_rate
    assert sum(s.wins for s in report.systems) * 2 == sum(s.comparisons for s in report.systems)
    head = {(h.first, h.second): h for h in report.pairs}
    assert set(head) == {("keen", "plain"), ("keen", "sloppy"), ("plain", "sloppy")}
    assert head[("keen", "sloppy")].net_preference > head[("keen", "plain")].net_preference > 0
    assert 0.5 < head[("keen", "plain")].p_first_better < head[("keen", "sloppy")].p_first_better < 1


def test_candidates_without_a_system_or_of_one_system_are_left_out_of_system_scores() -> None:
    items = {"t": {"candidates": [{"id": "a", "system": "s1"}, {"id": "b", "system": "s1"}, {"id": "c"}]}}
    frame = pd.DataFrame([("t", "w", ["a", "b", "c"])], columns=COLUMNS)
    assert system_scores(frame, items).systems == [] and system_scores(frame, items).winner is None


def test_rank_agreement_is_ordinal_alpha_over_each_candidates_place() -> None:
    rng = random.Random(2)
    ids = ["a", "b", "c", "d"]
    truth = {f"t{i}": rng.sample(ids, 4) for i in range(60)}
    same = pd.DataFrame([(t, w, o) for t, o in truth.items() for w in "xyz"], columns=COLUMNS)
    units = rank_positions(same)
    assert len(units) == 60 * 4 * 3 and set(units["label"]) == {1, 2, 3, 4}
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(1.0)
    close = pd.DataFrame(
        [(t, w, noisy(o, rng, 0.2)) for t, o in truth.items() for w in "xyz"], columns=COLUMNS
    )
    alpha_close = krippendorff_alpha(rank_positions(close), "ordinal")
    random_orders = pd.DataFrame([(t, w, rng.sample(ids, 4)) for t in truth for w in "xyz"], columns=COLUMNS)
    alpha_random = krippendorff_alpha(rank_positions(random_orders), "ordinal")
    assert alpha_close is not None and alpha_random is not None
    assert 0.6 < alpha_close < 1.0 and abs(alpha_random) < 0.1
