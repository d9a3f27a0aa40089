"""The in-process campaign simulation: small runs with fixed seeds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from demo.simulation.run import (
    COSTS,
    SimulationConfig,
    WorkerOutcome,
    flag_metrics,
    run_simulation,
    summarise,
)

# Half the default crowd, so that in 100 HITs every worker meets enough gold to be judged
# (with the full crowd some workers see only 4 or 6 gold answers before the HITs run out).
SMALL = SimulationConfig(hits=100, crowd={"diligent": 15, "careless": 5, "spammer": 4, "copycat": 2})


@pytest.fixture(scope="module")
def small_run():  # type: ignore[no-untyped-def]
    return run_simulation(SMALL, seed=4)


def test_spammers_and_copycats_are_flagged_and_never_paid(small_run) -> None:  # type: ignore[no-untyped-def]
    bad = [w for w in small_run.workers if w.profile in ("spammer", "copycat")]
    assert len(bad) == 6
    for worker in bad:
        assert worker.flagged and worker.approved == 0, worker
    assert small_run.metrics()["recall"] == 1.0


def test_agreement_catches_the_lucky_spammer_gold_alone_lets_through(small_run) -> None:  # type: ignore[no-untyped-def]
    gold_only = run_simulation(replace(SMALL, signals=("straightline",)), seed=4)
    late = [
        w
        for w in gold_only.workers
        if w.profile == "spammer" and (w.flagged_at_gold is None or w.flagged_at_gold > 10)
    ]
    # Random answers right on 10 of 22 gold items: gold cannot tell this start from a careless
    # worker's before its 22nd answer.
    assert [(w.worker_id, w.gold_correct, w.gold_total, w.flag_reason) for w in late] == [
        ("spammer-03", 10, 22, "gold")
    ]
    assert gold_only.metrics()["recall"] == 5 / 6
    # With the default signals the same spammer sides with the other workers' majority too
    # seldom: flagged at its fifth gold answer, on agreement, its work held rather than paid.
    caught = next(w for w in small_run.workers if w.worker_id == "spammer-03")
    assert (caught.flagged_at_gold, caught.flag_reason) == (5, "agreement")
    assert caught.approved == 0 and caught.held > 0


def test_the_default_signals_are_the_campaign_files_and_speed_can_be_added() -> None:
    from hits.requester.files.campaign import DEFAULT_SIGNALS

    assert SimulationConfig().signals == DEFAULT_SIGNALS and "speed" not in DEFAULT_SIGNALS
    crowd = {"diligent": 12, "careless": 0, "spammer": 4, "copycat": 0}
    without = run_simulation(SimulationConfig(hits=60, crowd=crowd), seed=1)
    with_speed = run_simulation(SimulationConfig(hits=60, crowd=crowd, signals=("speed",)), seed=1)
    assert not any(w.flag_reason and "speed" in w.flag_reason for w in without.workers)
    assert any(w.flag_reason and "speed" in w.flag_reason for w in with_speed.workers)


def test_diligent_workers_are_not_flagged_and_keep_their_pay(small_run) -> None:  # type: ignore[no-untyped-def]
    diligent = [w for w in small_run.workers if w.profile == "diligent"]
    assert len(diligent) == 15
    assert not any(w.flagged for w in diligent)
    assert sum(w.rejected for w in diligent) == 0
    assert sum(w.approved for w in diligent) > 0
    metrics = small_run.metrics()
    assert metrics["precision"] == 1.0
    assert metrics["diligent_rejected_share"] == 0.0


def test_a_flag_stops_the_worker_and_their_rejected_slots_are_worked_again(small_run) -> None:  # type: ignore[no-untyped-def]
    for worker in small_run.workers:
        assert worker.approved + worker.rejected + worker.held == worker.assignments
        if worker.flagged:
            # Flagged on the last assignment they took: nothing pending was approved after it.
            assert worker.rejected >= 1
    kept = sum(w.approved + w.held for w in small_run.workers)
    assert kept == SMALL.hits * SMALL.assignments_per_hit


def test_dawid_skene_labels_are_at_least_as_accurate_as_majority_vote(small_run) -> None:  # type: ignore[no-untyped-def]
    assert small_run.items == 400
    assert small_run.dawid_skene_accuracy >= small_run.majority_vote_accuracy
    assert small_run.majority_vote_accuracy > 0.8


def test_copycats_are_caught_by_straight_lining_and_gold_alone_gives_no_signal_reasons() -> None:
    crowd = {"diligent": 12, "careless": 0, "spammer": 0, "copycat": 4}
    with_signals = run_simulation(SimulationConfig(hits=60, crowd=crowd), seed=3)
    reasons = {w.flag_reason for w in with_signals.workers if w.profile == "copycat"}
    assert "straightline" in reasons
    without = run_simulation(SimulationConfig(hits=60, crowd=crowd, use_signals=False), seed=3)
    assert {w.flag_reason for w in without.workers if w.flagged} <= {"gold"}


def test_the_same_seed_gives_the_same_run() -> None:
    config = SimulationConfig(hits=30, crowd={"diligent": 6, "careless": 2, "spammer": 2, "copycat": 1})
    first, second = run_simulation(config, seed=9), run_simulation(config, seed=9)
    assert first.workers == second.workers
    assert first.metrics() == second.metrics()


def outcome(profile: str, flagged_at: int | None, assignments: int = 10, rejected: int = 0) -> WorkerOutcome:
    return WorkerOutcome(
        f"{profile}-{flagged_at}",
        profile,
        assignments=assignments,
        flagged_at_gold=flagged_at,
        rejected=rejected,
    )


def test_flag_metrics_count_careless_flags_only_in_the_strict_precision() -> None:
    workers = [
        outcome("spammer", 4),
        outcome("spammer", 14),  # flagged, but too late to count as caught
        outcome("copycat", None),
        outcome("careless", 6),
        outcome("diligent", None, assignments=50, rejected=1),
        outcome("diligent", None, assignments=50),
    ]
    metrics = flag_metrics(workers, max_gold=10)
    assert metrics["precision"] == 1.0
    assert metrics["strict_precision"] == pytest.approx(2 / 3)
    assert metrics["recall"] == pytest.approx(1 / 3)
    assert metrics["careless_flagged"] == 1.0
    assert metrics["diligent_rejected_share"] == pytest.approx(0.01)


def test_a_flagged_diligent_worker_lowers_precision() -> None:
    metrics = flag_metrics([outcome("spammer", 3), outcome("diligent", 5)], max_gold=10)
    assert metrics["precision"] == 0.5


def test_summary_takes_the_worst_case_in_the_right_direction_and_pools_the_workers(small_run) -> None:  # type: ignore[no-untyped-def]
    other = run_simulation(SimulationConfig(hits=30), seed=2)
    summary = summarise([small_run, other])
    for name, figures in summary.items():
        values = [small_run.metrics()[name], other.metrics()[name]]
        assert figures.values == tuple(values)
        assert figures.mean == pytest.approx(sum(values) / 2)
        assert figures.worst == (max(values) if name in COSTS else min(values))
    # Pooled: ratios over both runs' workers at once, not the mean of the two ratios.
    workers = small_run.workers + other.workers
    bad = [w for w in workers if w.profile in ("spammer", "copycat")]
    caught = [w for w in bad if w.flagged_at_gold is not None and w.flagged_at_gold <= 10]
    assert summary["recall"].pooled == len(caught) / len(bad)
    assert summary["majority_vote_accuracy"].pooled == summary["majority_vote_accuracy"].mean


BEHAVING = SimulationConfig(
    hits=200,
    crowd={"diligent": 10, "careless": 0, "spammer": 0, "copycat": 0, "late_spammer": 3, "biased": 2}
    | {"copy_source": 1, "copier": 1},
)


def test_late_spammers_are_caught_after_their_turn_and_their_honest_work_kept() -> None:
    from demo.simulation.run import behaviour_metrics

    run = run_simulation(BEHAVING, seed=2)
    late = behaviour_metrics(run.workers, max_gold=40)["late_spammer"]
    # Every one flagged, none before the turn, within two blocks of 20 gold answers of it.
    assert (late.workers, late.flagged, late.flagged_before_turn, late.caught) == (3, 3, 0, 3)
    # Most work after the turn is not paid: approvals wait while the latest answers look bad.
    assert late.approved_after_turn * 3 <= late.assignments_after_turn
    for worker in run.workers:
        if worker.profile == "late_spammer":
            assert worker.approved >= BEHAVING.turn_after  # the honest work stays approved
    # Without the recent-work test the same crowd's late spammers are approved on their early record.
    off = behaviour_metrics(run_simulation(replace(BEHAVING, recent_gold=0), seed=2).workers, max_gold=40)
    assert off["late_spammer"].caught < 3
    assert off["late_spammer"].approved_after_turn > late.approved_after_turn


def test_biased_workers_are_flagged_and_a_copier_gives_its_sources_answers() -> None:
    from demo.simulation.run import behaviour_metrics

    run = run_simulation(BEHAVING, seed=2)
    figures = behaviour_metrics(run.workers, max_gold=10)
    assert figures["biased"].flagged == figures["biased"].caught == 2
    copier = next(w for w in run.workers if w.profile == "copier")
    source = next(w for w in run.workers if w.profile == "copy_source")
    assert 0 < copier.assignments <= source.assignments
    # Same answers on the same HITs, so the same gold record as far as the copier went.
    assert copier.gold_total <= source.gold_total
