"""The copying-pair test (hits.requester.quality.copying): honest pairs pass, copiers are caught."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from scipy.integrate import dblquad
from scipy.stats import beta, binom

from hits.requester.quality.copying import (
    DEFAULT_FALSE_ALARM,
    PairRecord,
    SharedHIT,
    SharedItem,
    agreement_bound,
    agreement_p_value,
    judge_pair,
    normalised_text,
    reason,
)
from hits.requester.quality.policy import GoldRecord
from tests.quality.copying_crowd import pair_run


def test_the_p_value_is_the_binomial_tail_averaged_over_both_gold_posteriors() -> None:
    first, second = GoldRecord(5, 8), GoldRecord(7, 9)

    def integrand(q2: float, q1: float) -> float:
        tail = binom.sf(10, 12, agreement_bound(q1, q2))
        return float(tail * beta.pdf(q1, 6, 4) * beta.pdf(q2, 8, 3))

    direct, _ = dblquad(integrand, 0, 1, 0, 1, epsabs=1e-12)
    assert agreement_p_value(11, 12, first, second) == pytest.approx(direct, rel=1e-6)
    # Exact quadrature: the same figure whatever the number of nodes beyond n / 2 + 1.
    assert agreement_p_value(0, 12, first, second) == 1.0
    assert agreement_bound(0.65, 0.65) == pytest.approx(0.545)


def test_honest_pairs_of_equal_skill_are_never_flagged_across_seeded_runs() -> None:
    """40 seeds per skill, 60 HITs each, tested after every fifth HIT (repeated looks, as the pipeline does).

    docs/quality.md gives the larger measurement (500 seeds per skill, 100 HITs).
    """
    smallest = {}
    for skill in (0.5, 0.65, 0.8, 0.95):
        lowest = 1.0
        for seed in range(40):
            for hits, run in enumerate(pair_run(skill, skill, 60, seed), 1):
                if hits % 5 == 0:
                    lowest = min(lowest, run.p_value())
        smallest[skill] = lowest
    assert all(p > DEFAULT_FALSE_ALARM for p in smallest.values()), smallest
    # Not a near thing: the bound keeps honest pairs far from the line.
    assert min(smallest.values()) > 1e-4, smallest


def _caught_at(skill: float, copied: float, seed: int, hits: int = 120) -> int | None:
    for done, run in enumerate(pair_run(skill, skill, hits, seed, copied=copied), 1):
        if run.shared >= 20 and run.p_value() <= DEFAULT_FALSE_ALARM:
            return done
    return None


def test_a_copier_of_a_careless_worker_is_caught_within_twenty_hits() -> None:
    at = [_caught_at(0.65, 1.0, seed) for seed in range(15)]
    assert all(a is not None and a <= 20 for a in at), at
    # Copying four answers in five, and answering the rest itself, is caught too.
    partly = [_caught_at(0.65, 0.8, seed) for seed in range(15)]
    assert all(a is not None and a <= 40 for a in partly), partly


def test_a_copier_of_a_good_worker_takes_longer_it_agrees_little_more_than_an_honest_pair() -> None:
    # Two honest workers at 0.95 agree about 90% of the time; a copier 100%: caught, later.
    at = [_caught_at(0.95, 1.0, seed) for seed in range(8)]
    assert all(a is not None and 20 < a <= 120 for a in at), at


def _items(answers: list[tuple[object, object]], gold: int = 0, wrong: int = 0) -> list[SharedItem]:
    items = [SharedItem(f"item-{n}", a, b) for n, (a, b) in enumerate(answers)]
    items += [SharedItem(f"gold-{n}", 2, 2, gold=True, wrong=n < wrong) for n in range(gold)]
    return items


def test_too_few_shared_items_do_not_speak_however_alike() -> None:
    record = GoldRecord(3, 6)
    assert agreement_p_value(19, 19, record, record) < 1e-3
    few = judge_pair(PairRecord("A1", "A2", _items([(1, 1)] * 19), record, record), false_alarm=1e-3)
    assert not few.suspicious and few.p_value == 1.0
    enough = judge_pair(PairRecord("A1", "A2", _items([(1, 1)] * 20), record, record), false_alarm=1e-3)
    assert enough.suspicious and enough.evidence["min_shared"] == 20


def test_the_evidence_shows_the_counts_expected_agreement_and_who_answered_first() -> None:
    start = datetime(2026, 11, 25, 9, 0)
    hits = [
        SharedHIT(f"3H{n}", start + timedelta(minutes=n), start + timedelta(minutes=n, seconds=40))
        for n in range(10)
    ]
    pair = PairRecord(
        "ASOURCE",
        "ACOPIER",
        _items([(3, 3)] * 38 + [(1, 2)] * 2, gold=6, wrong=2),
        GoldRecord(4, 6),
        GoldRecord(4, 6),
        hits,
    )
    verdict = judge_pair(pair, false_alarm=1e-3)
    e = verdict.evidence
    assert verdict.suspicious and e["suspicious_by"] == ["agreement"]
    assert (e["shared_items"], e["identical_answers"], e["observed_agreement"]) == (40, 38, 0.95)
    assert e["expected_agreement_at_most"] == pytest.approx(agreement_bound(5 / 8, 5 / 8), abs=1e-4)
    assert e["identical_wrong_gold"] == 2 and e["examples"][0] == {
        "item": "gold-0",
        "answer": 2,
        "gold": True,
        "wrong": True,
    }
    assert e["answered_first"] == {"ASOURCE": 10, "ACOPIER": 0}
    assert e["hits"][0] == {"hit": "3H0", "ASOURCE": "2026-11-25T09:00:00", "ACOPIER": "2026-11-25T09:00:40"}
    assert verdict.partner("ACOPIER") == "ASOURCE"
    said = reason([verdict], "ACOPIER")
    assert said.startswith("copying with ASOURCE: 38/40 identical answers") and "p = " in said


def test_identical_free_text_answers_flag_a_pair_short_or_different_ones_do_not() -> None:
    none = GoldRecord(0, 0)
    sentence = "A red kite flies over the harbour at dusk"
    same = [
        (sentence, sentence.upper() + "!"),
        ("Two dogs chase a ball on the beach", "two dogs  chase a ball on the beach."),
    ]
    different = [("A cat sleeps on a warm windowsill today", "A dog sleeps on a warm windowsill today")]
    short = [("A dog.", "A dog.")] * 5
    assert (
        normalised_text("A dog.") is None
        and normalised_text(sentence) == "a red kite flies over the harbour at dusk"
    )
    two = judge_pair(PairRecord("A1", "A2", _items(same + different + short), none, none))
    assert not two.suspicious and two.evidence["identical_texts"] == 2
    third = [("The bus stops by a tall brick tower", "the bus stops by a tall brick tower")]
    three = judge_pair(PairRecord("A1", "A2", _items(same + third + different), none, none))
    assert three.suspicious and three.evidence["suspicious_by"] == ["text"]
    assert "3 identical texts" in reason([three], "A1")


def test_identical_structured_answers_are_labels_not_texts_however_many_words_their_json_holds() -> None:
    """A ranking or a set of ratings that careful workers share is agreement, judged against gold.

    Their comparable form is canonical JSON, which holds five and more "words"; read as free text,
    two careful workers of the rank demo were flagged with "8 identical texts" (0 shared labels).
    """
    record = GoldRecord(8, 8)
    ranking = '{"c1": 1, "c2": 2, "c3": 1}'
    items = [SharedItem(f"item-{n}", ranking, ranking, structured=True) for n in range(8)]
    verdict = judge_pair(PairRecord("A1", "A2", items, record, record))
    assert not verdict.suspicious
    assert verdict.evidence["identical_texts"] == 0 and verdict.evidence["identical_answers"] == 8
