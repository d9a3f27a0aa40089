"""The worker model (issue 28): one posterior from gold and agreement, and the CUSUM test for a turn."""

from __future__ import annotations

from hits.requester.quality.policy import GoldRecord
from hits.requester.quality.worker_model import (
    Evidence,
    Posterior,
    WorkerEvidence,
    consensus_voters,
    judge_model,
    model_reason,
    probability_right,
    reliability_table,
    voter_accuracy,
)

PRIORS = {1: 0.1, 2: 0.2, 3: 0.35, 4: 0.35}
RULE = {"threshold": 0.6, "confidence": 0.9, "min_gold": 4, "classes": 4}


def _pattern(right: int, of: int, n: int, *, gold: bool = True) -> list[Evidence]:
    """n answers, ``right`` of every ``of`` right, spread evenly (deterministic)."""
    return [Evidence(1.0 if (i % of) < right else 0.0, gold) for i in range(n)]


def _one_assignment_each(answers: list[Evidence], size: int = 6) -> WorkerEvidence:
    chunks = [answers[i : i + size] for i in range(0, len(answers), size)]
    return WorkerEvidence(chunks, [True] * len(chunks))


def test_a_worker_of_known_accuracy_converges() -> None:
    # 400 answers, 8 right of every 10: the posterior centres on 0.8 and narrows.
    posterior = Posterior.of(_pattern(8, 10, 400), 4)
    assert abs(posterior.mean() - 0.8) < 0.01
    low, high = posterior.interval(0.9)
    assert low < 0.8 < high and high - low < 0.07
    # Agreement alone does too: answers whose consensus (two reliable others) says right or wrong.
    right = probability_right(3, [(3, 0.9), (3, 0.9)], PRIORS)
    wrong = probability_right(2, [(3, 0.9), (3, 0.9)], PRIORS)
    assert right is not None and wrong is not None and right > 0.8 and wrong < 0.1
    # Agreement alone (no gold) tells a worker at 0.8 from one at 0.3 with confidence either way.
    good = Posterior.of([Evidence(right if (i % 10) < 8 else wrong, False) for i in range(200)], 4)
    bad = Posterior.of([Evidence(right if (i % 10) < 3 else wrong, False) for i in range(200)], 4)
    assert good.p_below(0.6) < 0.01 and bad.p_below(0.6) > 0.99


def test_a_random_worker_lucky_on_gold_is_flagged_on_agreement() -> None:
    # 6 of 10 gold right (gold alone: P(accuracy < 0.6) = 0.47, undecided), every item against two
    # reliable others: the posterior over both is sure the worker is below 0.6.
    wrong = probability_right(2, [(3, 0.9), (3, 0.9)], PRIORS)
    assert wrong is not None
    answers = []
    for i in range(10):
        answers.append(
            [Evidence(1.0 if i < 6 else 0.0, True), Evidence(wrong, False), Evidence(wrong, False)]
        )
    verdict = judge_model(WorkerEvidence(answers, [True] * 10), **RULE)
    assert verdict.verdict == "flag" and verdict.evidence["flagged_on"] == "model"
    reason = model_reason(verdict)
    assert reason.startswith("agreement with others on 20 items implies ")
    assert "sure below 60%" in reason and "gold 6/10" in reason


def test_a_diligent_worker_unlucky_on_gold_is_not_rejected() -> None:
    # 3 of 10 gold right (gold alone flags: P = 0.94), but every item agrees with reliable others.
    right = probability_right(3, [(3, 0.9), (3, 0.9)], PRIORS)
    assert right is not None
    answers = [
        [Evidence(1.0 if i % 3 == 0 and i < 9 else 0.0, True)] + [Evidence(right, False)] * 2
        for i in range(10)
    ]
    assert sum(a[0].p_right for a in answers) == 3
    verdict = judge_model(WorkerEvidence(answers, [True] * 10), **RULE)
    assert verdict.verdict != "flag"


def test_a_co_worker_with_little_or_wrong_gold_does_not_count_against_a_right_worker() -> None:
    """The right worker's only co-worker disagrees on every item and has no gold graded yet (their
    answers synced before their gold), or only wrong gold: four HITs of one gold and four items, all
    right, are approved. A co-worker at 1/2 (the Laplace estimate with no gold) made every
    disagreement count against the right worker, and they waited."""
    uniform = {1: 0.25, 2: 0.25, 3: 0.25, 4: 0.25}
    for record in (GoldRecord(0, 0), GoldRecord(0, 1), GoldRecord(0, 4)):
        p = probability_right(1, [(2, voter_accuracy(record, 4))], uniform)
        assert p is not None
        hits = [[Evidence(1.0, True)] + [Evidence(p, False)] * 4 for _ in range(4)]
        assert judge_model(WorkerEvidence(hits, [True] * 4), **RULE).verdict == "approve", record


def test_a_voter_counts_from_chance_toward_their_gold_record() -> None:
    assert voter_accuracy(GoldRecord(0, 0), 4) == 0.25  # no gold: says nothing
    assert voter_accuracy(GoldRecord(0, 0), 2) == 0.5
    assert voter_accuracy(GoldRecord(0, 10), 4) == 0.25  # wrong on gold: a guesser, never below chance
    grows = [voter_accuracy(GoldRecord(n, n), 4) for n in (1, 2, 4, 10, 1000)]
    assert grows == sorted(grows) and grows[0] > 0.25 and 0.99 < grows[-1] < 1
    # Two right of two counts for less than ten right of ten, and a 70% record tends to 70%.
    assert 0.69 < voter_accuracy(GoldRecord(700, 1000), 4) < 0.7


def test_two_copiers_do_not_confirm_each_other() -> None:
    partners = {("copy-a", "copy-b")}

    def paired(a: str, b: str) -> bool:
        return (min(a, b), max(a, b)) in partners

    labels = [("copy-a", 1), ("copy-b", 1), ("honest", 4)]
    # For copy-a, copy-b is no witness: only the honest worker's label makes its consensus.
    assert consensus_voters(labels, "copy-a", paired) == [("honest", 4)]
    # For the honest worker, the pair is one voter, not two.
    assert consensus_voters(labels, "honest", paired) == [("copy-a", 1)]
    confirmed = probability_right(1, [(1, 0.7), (4, 0.7)], PRIORS)
    alone = probability_right(1, [(4, 0.7)], PRIORS)
    assert confirmed is not None and alone is not None and alone < confirmed and alone < 0.2


def test_a_turn_is_found_within_ten_gold_answers_of_evidence() -> None:
    # 60 answers at 0.9 (approved), then at random on four labels: right one time in four.
    before = _pattern(9, 10, 60)
    for after in range(1, 40):
        answers = before + _pattern(1, 4, after)
        verdict = judge_model(_one_assignment_each(answers), **RULE)
        if verdict.verdict == "flag":
            break
    assert verdict.verdict == "flag" and verdict.evidence["flagged_on"] == "turn"
    assert after <= 10
    assert model_reason(verdict).startswith("turned for the worse")
    # Approvals waited meanwhile: right after the turn began, the worker is no longer approved.
    early = judge_model(_one_assignment_each(before + _pattern(1, 4, 3)), **RULE)
    assert early.verdict == "undecided"


def test_a_turn_before_the_record_approves_is_still_found() -> None:
    # 8 gold answers, 6 right (not enough to approve: the record waits), then at random: the turn
    # test applies all the same, comparing the answers since the rise with the threshold.
    before = _pattern(3, 4, 8)
    assert judge_model(_one_assignment_each(before), **RULE).verdict == "undecided"
    for after in range(1, 40):
        verdict = judge_model(_one_assignment_each(before + _pattern(1, 4, after)), **RULE)
        if verdict.verdict == "flag":
            break
    assert verdict.verdict == "flag" and after <= 10


def test_undecided_work_that_leans_bad_waits() -> None:
    # A long good record, and one undecided assignment of eight answers that each disagree with the
    # others a little (not enough for the turn statistic): the record still approves, the work
    # waits, its own evidence leaning below the threshold.
    approved = _pattern(9, 10, 120)
    chunks = [approved[i : i + 6] for i in range(0, 120, 6)] + [[Evidence(0.25, False)] * 8]
    verdict = judge_model(WorkerEvidence(chunks, [False] * 20 + [True]), **RULE)
    assert verdict.verdict == "undecided"
    assert verdict.evidence["held_back"] == "undecided work's own evidence"


def test_a_diligent_worker_is_approved_and_never_turns() -> None:
    # 85% right for 600 answers: approved, and the CUSUM never reaches the turn level.
    answers = _pattern(17, 20, 600)
    answers = answers[-3:] + answers[:-3]  # the wrong answers first in every 20, not last
    verdict = judge_model(_one_assignment_each(answers), **RULE)
    assert verdict.verdict == "approve"


def test_the_reliability_table_bins_predictions() -> None:
    rows = reliability_table([0.3, 0.35, 0.85, 0.82], [0.25, 0.3, 0.86, 0.8])
    assert [(r.low, r.workers) for r in rows] == [(0, 2), (0.8, 2)]
    assert abs(rows[1].predicted - 0.835) < 1e-9 and abs(rows[1].observed - 0.83) < 1e-9
