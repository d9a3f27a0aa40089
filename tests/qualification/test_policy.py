"""Policy: starting and submitting attempts, with clear refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from qualification.policy import AttemptRecord, Policy, can_start, can_submit

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
POLICY = Policy(duration=timedelta(minutes=30), cooldown=timedelta(hours=24), max_attempts=2)


def test_first_attempt_is_allowed() -> None:
    decision = can_start([], T0, POLICY)
    assert decision and decision.reason == "You may start the test (2 attempts left)."


def test_attempt_in_progress_blocks_a_new_one() -> None:
    running = AttemptRecord(started_at=T0)
    decision = can_start([running], T0 + timedelta(minutes=5), POLICY)
    assert not decision
    assert decision.reason == "You already have a test in progress; finish or let it expire first."


def test_cooldown_after_a_failed_attempt_says_how_long() -> None:
    failed = AttemptRecord(started_at=T0, submitted_at=T0 + timedelta(minutes=10), passed=False)
    decision = can_start([failed], T0 + timedelta(hours=2, minutes=10), POLICY)
    assert not decision
    assert decision.reason == "You can retake this test in 22 h 0 min."
    assert can_start([failed], T0 + timedelta(hours=24, minutes=10), POLICY)


def test_cooldown_of_an_expired_attempt_runs_from_its_deadline() -> None:
    abandoned = AttemptRecord(started_at=T0)
    assert not can_start([abandoned], T0 + timedelta(hours=24), POLICY)
    assert can_start([abandoned], T0 + timedelta(hours=24, minutes=30), POLICY)


def test_max_attempts() -> None:
    attempts = [
        AttemptRecord(started_at=T0, submitted_at=T0 + timedelta(minutes=10), passed=False),
        AttemptRecord(
            started_at=T0 + timedelta(days=2), submitted_at=T0 + timedelta(days=2, minutes=9), passed=False
        ),
    ]
    decision = can_start(attempts, T0 + timedelta(days=30), POLICY)
    assert not decision
    assert decision.reason == "You have used all 2 attempts allowed for this test."


def test_passed_workers_cannot_retake() -> None:
    passed = AttemptRecord(started_at=T0, submitted_at=T0 + timedelta(minutes=10), passed=True)
    assert can_start([passed], T0 + timedelta(days=5), POLICY).reason == "You have already passed this test."


def test_submit_within_time() -> None:
    decision = can_submit(AttemptRecord(started_at=T0), T0 + timedelta(minutes=29), POLICY)
    assert decision and decision.reason == "Submission accepted."


def test_second_submission_is_refused() -> None:
    done = AttemptRecord(started_at=T0, submitted_at=T0 + timedelta(minutes=3), passed=False)
    decision = can_submit(done, T0 + timedelta(minutes=4), POLICY)
    assert not decision and decision.reason == "This test has already been submitted."


def test_late_submission_is_refused() -> None:
    decision = can_submit(AttemptRecord(started_at=T0), T0 + timedelta(minutes=32, seconds=5), POLICY)
    assert not decision
    assert decision.reason == "Time ran out 2 min 5 s ago; the 30 min limit has passed."
