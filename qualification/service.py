"""Storing attempts and turning grades into qualification values (through the outbox).

The boundary (a request, a CLI command) owns the transaction; these flush only.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.mturk import Marketplace
from hits.requester.tables.campaigns import Campaign, OutboxEntry
from hits.requester.tables.qualification import QualificationAttempt, QualificationTest
from qualification.assembly import WorkerView, assemble, worker_view
from qualification.bank import Bank, load_bank
from qualification.grading import GradeResult, grade, tally
from qualification.policy import AttemptRecord, Decision, Policy, can_start, can_submit


@cache
def bank_for(path: str) -> Bank:
    """Banks are immutable files: load each once per process."""
    return load_bank(Path(path))


def policy_of(test: QualificationTest) -> Policy:
    return Policy(
        duration=timedelta(seconds=test.duration_seconds),
        cooldown=timedelta(seconds=test.cooldown_seconds),
        max_attempts=test.max_attempts,
    )


def _record(attempt: QualificationAttempt) -> AttemptRecord:
    return AttemptRecord(attempt.started_at, attempt.submitted_at, attempt.passed)


def attempts_of(session: Session, test_id: int, worker_id: str) -> list[QualificationAttempt]:
    return list(
        session.scalars(
            select(QualificationAttempt)
            .where(QualificationAttempt.test_id == test_id, QualificationAttempt.worker_id == worker_id)
            .order_by(QualificationAttempt.started_at)
        )
    )


def may_start(session: Session, test: QualificationTest, worker_id: str) -> Decision:
    records = [_record(a) for a in attempts_of(session, test.id, worker_id)]
    return can_start(records, utcnow(), policy_of(test))


def start_attempt(session: Session, test: QualificationTest, worker_id: str) -> QualificationAttempt:
    """Begin an attempt if the policy allows; raises ``PermissionError`` with the reason."""
    decision = may_start(session, test, worker_id)
    if not decision:
        raise PermissionError(decision.reason)
    attempt = QualificationAttempt(test_id=test.id, worker_id=worker_id, seed=secrets.randbelow(2**31))
    session.add(attempt)
    session.flush()
    return attempt


def attempt_result(test: QualificationTest, attempt: QualificationAttempt) -> GradeResult | None:
    """A submitted attempt's result per section, from its stored correct items (None if not graded)."""
    if attempt.correct_items is None:
        return None
    bank = bank_for(test.bank_path)
    return tally(bank, assemble(bank, attempt.seed), attempt.correct_items)


def paper_view(test: QualificationTest, attempt: QualificationAttempt) -> WorkerView:
    """What the worker sees: questions and shuffled choices, never the answers."""
    bank = bank_for(test.bank_path)
    return worker_view(bank, assemble(bank, attempt.seed))


@dataclass(frozen=True)
class Submitted:
    result: GradeResult
    outbox_id: int


def submit_attempt(
    session: Session, test: QualificationTest, attempt: QualificationAttempt, answers: dict[str, str]
) -> Submitted:
    """Grade once, store the score, and queue the qualification value for the marketplace."""
    decision = can_submit(_record(attempt), utcnow(), policy_of(test))
    if not decision:
        raise PermissionError(decision.reason)
    bank = bank_for(test.bank_path)
    result = grade(bank, assemble(bank, attempt.seed), answers)
    attempt.submitted_at = utcnow()
    attempt.score, attempt.passed = result.score, result.passed
    attempt.correct_items = dict(result.correct_items)
    campaign_id = _anchor_campaign(session, test)
    entry = OutboxEntry(
        campaign_id=campaign_id,
        action="qualify",
        target=f"{test.qualification_type_id}:{attempt.worker_id}:{attempt.id}",
        payload={
            "qualification_type_id": test.qualification_type_id,
            "worker_id": attempt.worker_id,
            # The value means passed: a failed attempt sends 0, whatever its score (grading).
            "value": result.value,
        },
    )
    session.add(entry)
    session.flush()
    return Submitted(result, entry.id)


def anchor_name(test_name: str) -> str:
    """The name of the placeholder campaign a test's outbox rows belong to."""
    return f"qualification:{test_name}"


def _anchor_campaign(session: Session, test: QualificationTest) -> int:
    """Outbox rows belong to a campaign; a test's rows hang off a placeholder campaign."""
    name = anchor_name(test.name)
    campaign = session.scalar(select(Campaign).where(Campaign.name == name))
    if campaign is None:
        campaign = Campaign(
            name=name,
            template="qualification",
            spec={},
            budget=0,
            status="qualification",
            access_key_id=test.access_key_id,
        )
        session.add(campaign)
        session.flush()
    return campaign.id


def publish_test(
    session: Session,
    market: Marketplace,
    *,
    name: str,
    bank_path: Path,
    duration_seconds: int = 1800,
    cooldown_seconds: int = 86400,
    max_attempts: int = 3,
    public_url: str | None = None,
) -> QualificationTest:
    """Validate a bank, create its qualification type through the API, and store the test.

    With ``public_url`` (the worker site's address) the type's description
    names the test's page, for workers who meet the type elsewhere. Raises
    ``ValueError`` when a test of that name exists already.
    """
    bank_path = bank_path.resolve()
    bank = bank_for(str(bank_path))
    if session.scalar(select(QualificationTest.id).where(QualificationTest.name == name)) is not None:
        raise ValueError(f"a qualification test named '{name}' exists already: choose another name")
    test = QualificationTest(
        name=name,
        bank_path=str(bank_path),
        qualification_type_id="",  # set below, once the marketplace has made the type
        access_key_id=market.access_key_id,
        duration_seconds=duration_seconds,
        cooldown_seconds=cooldown_seconds,
        max_attempts=max_attempts,
    )
    session.add(test)
    session.flush()  # the id names the test's page in the description
    description = (
        f"{bank.title}: granted by passing a qualification test graded by hitforge; "
        f"its value is the score (0 to 100) of a passing attempt, 0 otherwise."
    )
    if public_url:
        description += f" Take the test at {public_url.rstrip('/')}/qualify/{test.id}"
    qtype = market.create_qualification_type(
        Name=name, Description=description, QualificationTypeStatus="Active"
    )
    test.qualification_type_id = qtype["QualificationTypeId"]
    session.flush()
    return test
