"""When a worker may start or submit a test: duration, retake cooldown, attempt cap.

Pure functions: the caller passes the worker's attempt records and the time.
Every refusal carries a message fit to show the worker. Pass timezone-aware UTC
datetimes throughout; naive and aware datetimes do not compare.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Policy:
    """How long a test may take, how long to wait between attempts, how many attempts."""

    duration: timedelta = timedelta(minutes=30)
    cooldown: timedelta = timedelta(hours=24)
    max_attempts: int = 3


@dataclass(frozen=True)
class AttemptRecord:
    """What the policy needs to know about one attempt (a row of the future table)."""

    started_at: datetime
    submitted_at: datetime | None = None
    passed: bool | None = None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str

    def __bool__(self) -> bool:
        return self.allowed


def _span(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    return f"{secs} s"


def deadline(attempt: AttemptRecord, policy: Policy) -> datetime:
    return attempt.started_at + policy.duration


def is_open(attempt: AttemptRecord, now: datetime, policy: Policy) -> bool:
    """Started, not submitted, and still within the time limit."""
    return attempt.submitted_at is None and now <= deadline(attempt, policy)


def can_start(attempts: list[AttemptRecord], now: datetime, policy: Policy) -> Decision:
    """May the worker begin a new attempt now?"""
    if any(a.passed for a in attempts):
        return Decision(False, "You have already passed this test.")
    if any(is_open(a, now, policy) for a in attempts):
        return Decision(False, "You already have a test in progress; finish or let it expire first.")
    if len(attempts) >= policy.max_attempts:
        return Decision(False, f"You have used all {policy.max_attempts} attempts allowed for this test.")
    if attempts:
        last = max(attempts, key=lambda a: a.started_at)
        ended = min(last.submitted_at or deadline(last, policy), deadline(last, policy))
        ready = ended + policy.cooldown
        if now < ready:
            return Decision(False, f"You can retake this test in {_span(ready - now)}.")
    left = policy.max_attempts - len(attempts)
    return Decision(True, f"You may start the test ({left} attempt{'s' if left != 1 else ''} left).")


def can_submit(attempt: AttemptRecord, now: datetime, policy: Policy) -> Decision:
    """May this attempt be submitted now? Refuses a second submission and a late one."""
    if attempt.submitted_at is not None:
        return Decision(False, "This test has already been submitted.")
    if now > deadline(attempt, policy):
        late = now - deadline(attempt, policy)
        return Decision(
            False, f"Time ran out {_span(late)} ago; the {_span(policy.duration)} limit has passed."
        )
    return Decision(True, "Submission accepted.")
