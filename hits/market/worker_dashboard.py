"""What a worker's dashboard shows: earnings, counts, approval rate, qualifications, messages."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.market import ledger
from hits.market.models import (
    HIT,
    Assignment,
    HITType,
    LedgerEntry,
    QualificationType,
    Requester,
    Worker,
    WorkerMessage,
    WorkerQualification,
)
from hits.market.models.work import APPROVED, REJECTED, SUBMITTED
from hits.market.qualification_ops import LOCALE, NUMBER_APPROVED, PERCENT_APPROVED, worker_value
from hits.market.worker_relations import inbox

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Earnings:
    """Money paid to the worker (approved rewards, bonuses) and reward still under review."""

    rewards: Decimal
    bonuses: Decimal
    pending: Decimal

    @property
    def total(self) -> Decimal:
        return self.rewards + self.bonuses


@dataclass(frozen=True)
class HeldQualification:
    """A qualification the worker holds, as shown to them."""

    type_id: str
    name: str
    value: str
    status: str


@dataclass(frozen=True)
class Summary:
    """Everything on ``/me`` for one worker."""

    earnings: Earnings
    submitted: int
    approved: int
    rejected: int
    approval_rate: int | None  # percent, None before the first decision
    qualifications: list[HeldQualification]
    messages: list[tuple[WorkerMessage, str]]  # (message, requester name)
    recent: list[Assignment]


def earnings(session: Session, worker_id: str) -> Earnings:
    """Paid rewards and bonuses from the ledger; pending is the reward of submitted work."""
    paid = dict(
        session.execute(
            select(LedgerEntry.kind, func.sum(LedgerEntry.amount))
            .where(LedgerEntry.account == ledger.worker_account(worker_id))
            .group_by(LedgerEntry.kind)
        ).all()
    )
    pending = session.scalar(
        select(func.sum(HITType.reward))
        .select_from(Assignment)
        .join(HIT, HIT.id == Assignment.hit_id)
        .join(HITType, HITType.id == HIT.hit_type_id)
        .where(Assignment.worker_id == worker_id, Assignment.status == SUBMITTED)
    )
    return Earnings(
        rewards=Decimal(paid.get("reward") or 0).quantize(CENT),
        bonuses=Decimal(paid.get("bonus") or 0).quantize(CENT),
        pending=Decimal(pending or 0).quantize(CENT),
    )


def qualifications(session: Session, worker: Worker) -> list[HeldQualification]:
    """The worker's system qualifications (computed) and those requesters granted or revoked."""
    held = [
        HeldQualification(LOCALE, "Worker location", worker.country, "Granted"),
        HeldQualification(
            PERCENT_APPROVED,
            "HIT approval rate (%)",
            str(worker_value(session, worker, PERCENT_APPROVED)),
            "Granted",
        ),
        HeldQualification(
            NUMBER_APPROVED,
            "Number of HITs approved",
            str(worker_value(session, worker, NUMBER_APPROVED)),
            "Granted",
        ),
    ]
    rows = session.execute(
        select(WorkerQualification, QualificationType.name)
        .join(QualificationType, QualificationType.id == WorkerQualification.qualification_type_id)
        .where(WorkerQualification.worker_id == worker.id)
        .order_by(QualificationType.name)
    ).all()
    for grant, name in rows:
        value = "" if grant.integer_value is None else str(grant.integer_value)
        held.append(HeldQualification(grant.qualification_type_id, name, value, grant.status))
    return held


def summary(session: Session, worker: Worker) -> Summary:
    """The dashboard of ``worker``: only their own assignments, money and messages."""
    counts = dict(
        session.execute(
            select(Assignment.status, func.count())
            .where(Assignment.worker_id == worker.id)
            .group_by(Assignment.status)
        ).all()
    )
    approved, rejected = counts.get(APPROVED, 0), counts.get(REJECTED, 0)
    decided = approved + rejected
    messages = inbox(session, worker.id)
    names = dict(
        session.execute(
            select(Requester.id, Requester.name).where(Requester.id.in_({m.requester_id for m in messages}))
        ).all()
    )
    recent = session.scalars(
        select(Assignment)
        .where(Assignment.worker_id == worker.id)
        .order_by(Assignment.accept_time.desc())
        .limit(50)
    ).all()
    return Summary(
        earnings=earnings(session, worker.id),
        submitted=counts.get(SUBMITTED, 0),
        approved=approved,
        rejected=rejected,
        approval_rate=None if decided == 0 else (100 * approved) // decided,
        qualifications=qualifications(session, worker),
        messages=[(m, names.get(m.requester_id, m.requester_id)) for m in messages],
        recent=list(recent),
    )
