"""A recruiting study at a glance, from hitforge's own records: places by status, and the money.

Read from the database only (what polling, webhooks and decisions last
recorded), so a page or a command showing it never waits on the platform.
Amounts are in the study's currency, as Prolific pays them, except the
study's cost, which is what the campaign's budget counted, in dollars.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.tables.recruiting import Recruitment, RecruitOutboxEntry, RecruitPlace, RecruitRelay

#: Platform statuses in the order a study moves through them, for a table people read left to right.
STATUS_ORDER = (
    "ACTIVE",
    "AWAITING REVIEW",
    "APPROVED",
    "PARTIALLY APPROVED",
    "REJECTED",
    "RETURNED",
    "TIMED-OUT",
)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class StudySummary:
    """A study's places and money, as hitforge last recorded them."""

    platform: str
    study_id: str | None
    #: hitforge's state of the study: planned, published, paused, stopped...
    state: str
    places: int
    taken: int
    #: Places by the platform's status (as last read); places never read yet count as "not read yet".
    by_status: dict[str, int] = field(default_factory=dict)
    currency: str | None = None
    #: What the budget counted for the study's places with the platform's fees, in dollars.
    study_cost: Decimal | None = None
    #: Rewards the platform pays for places approved, and in part, in the study's currency.
    rewards_approved: Decimal = Decimal(0)
    bonuses_paid: Decimal = Decimal(0)
    #: Bonuses whose payment is unknown (held for a person).
    bonuses_held: int = 0


def study_summary(
    session: Session, campaign_id: int, reward: int | None, currency: str | None
) -> StudySummary | None:
    """The campaign's study at a glance (``reward`` a place in cents or pence, in ``currency``, as its
    file's ``recruit`` section says); None when it recruits nowhere."""
    row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
    if row is None:
        return None
    statuses = Counter(
        {
            str(status or "not read yet"): int(n)
            for status, n in session.execute(
                select(RecruitPlace.platform_status, func.count())
                .where(RecruitPlace.recruitment_id == row.id)
                .group_by(RecruitPlace.platform_status)
            )
        }
    )
    ordered = {s: statuses.pop(s) for s in STATUS_ORDER if s in statuses}
    ordered.update(sorted(statuses.items()))
    per_place = Decimal(reward or 0) / 100
    share = sum(
        (
            Decimal(str((payload or {}).get("percentage", 0))) / 100
            for payload in session.scalars(
                select(RecruitOutboxEntry.payload).where(
                    RecruitOutboxEntry.recruitment_id == row.id,
                    RecruitOutboxEntry.action == "partial",
                    RecruitOutboxEntry.status == "done",
                )
            )
        ),
        Decimal(0),
    )
    bonuses = session.execute(
        select(RecruitRelay.status, RecruitRelay.payload).where(
            RecruitRelay.recruitment_id == row.id, RecruitRelay.action == "bonus"
        )
    ).all()
    paid = sum(
        (Decimal(str(p.get("pay_amount") or p.get("amount") or 0)) for s, p in bonuses if s == "done"),
        Decimal(0),
    )
    return StudySummary(
        platform=row.platform,
        study_id=row.study_id,
        state=row.status,
        places=row.places,
        taken=sum(ordered.values()),
        by_status=ordered,
        currency=currency,
        study_cost=row.study_cost,
        rewards_approved=(per_place * (ordered.get("APPROVED", 0) + share)).quantize(CENT),
        bonuses_paid=paid.quantize(CENT),
        bonuses_held=sum(1 for s, _ in bonuses if s == "held"),
    )
