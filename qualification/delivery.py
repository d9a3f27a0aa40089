"""Whether a test's qualification values can reach the marketplace, and which are stuck.

A graded attempt queues its value in the outbox; a review worker (``hitforge
worker``) applies it with AssociateQualificationWithWorker. The marketplace
lets only the requester who owns a qualification type associate it, so the
outbox hands an entry only to a worker holding the keys of the requester who
published the test, and a worker with other keys leaves it pending, silently,
for ever. These reads let ``publish`` and the dashboard say so.

The requester side knows a review worker's keys only from what it did: the
access key of the campaign whose decision was applied last.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Campaign, OutboxEntry
from hits.requester.tables.qualification import QualificationTest
from qualification.service import anchor_name

#: A value still pending after this long is shown as stuck even when no worker has applied anything.
STUCK_AFTER = timedelta(minutes=10)


@dataclass(frozen=True)
class AppliedWith:
    """The access key of the requester whose decision a review worker applied last, and when."""

    access_key_id: str
    at: datetime


@dataclass(frozen=True)
class WaitingTest:
    """A test whose values wait for a worker with its publisher's keys."""

    test_id: int
    name: str
    published_with: str  # the access key id of the requester who published it
    applied_with: AppliedWith | None  # the keys review workers are known to use
    pending: int  # values queued and not applied
    oldest: datetime | None  # when the oldest of them was queued

    @property
    def message(self) -> str:
        """What to tell the requester, naming both requesters by access key."""
        one = self.pending == 1
        waiting = f"{self.pending} qualification value{'' if one else 's'} of test '{self.name}'"
        owner = f"only requester {self.published_with}, who published it, may grant its qualification"
        run = f"a `hitforge worker` with HITFORGE_MTURK_ACCESS_KEY_ID={self.published_with}"
        if self.applied_with is not None and self.applied_with.access_key_id != self.published_with:
            return (
                f"{waiting} {'waits' if one else 'wait'}: {owner}, but the review worker applies "
                f"decisions with the keys of requester {self.applied_with.access_key_id}. Run {run}."
            )
        since = f"{self.oldest:%Y-%m-%d %H:%M} UTC" if self.oldest else "publishing"
        return f"{waiting} {'has' if one else 'have'} waited since {since}: {owner}; is {run} running?"


def applied_with(session: Session) -> AppliedWith | None:
    """The keys a review worker used last (the campaign key of the latest applied decision), if any."""
    row = session.execute(
        select(Campaign.access_key_id, OutboxEntry.applied_at)
        .join(Campaign, Campaign.id == OutboxEntry.campaign_id)
        .where(OutboxEntry.applied_at.is_not(None))
        .order_by(OutboxEntry.applied_at.desc())
        .limit(1)
    ).first()
    if row is None or row[0] is None or row[1] is None:
        return None
    return AppliedWith(row[0], row[1])


def waiting_tests(session: Session, now: datetime) -> list[WaitingTest]:
    """Tests published with other keys than the review worker's, and tests whose values are stuck.

    A test is listed when a review worker is known to use another requester's
    keys (its values, pending or still to come, cannot be applied), or when a
    value of it has been pending for ``STUCK_AFTER``.
    """
    worker = applied_with(session)
    pending = {
        name: (count, oldest)
        for name, count, oldest in session.execute(
            select(Campaign.name, func.count(), func.min(OutboxEntry.created_at))
            .join(Campaign, Campaign.id == OutboxEntry.campaign_id)
            .where(OutboxEntry.action == "qualify", OutboxEntry.status == "pending")
            .group_by(Campaign.name)
        )
    }
    out = []
    for test in session.scalars(select(QualificationTest).order_by(QualificationTest.id)):
        count, oldest = pending.get(anchor_name(test.name), (0, None))
        other_keys = worker is not None and worker.access_key_id != test.access_key_id
        stuck = oldest is not None and now - oldest >= STUCK_AFTER
        if other_keys or stuck:
            out.append(WaitingTest(test.id, test.name, test.access_key_id, worker, count, oldest))
    return out


def publish_warning(session: Session, access_key_id: str) -> str | None:
    """At publish time: why values of a test published with ``access_key_id`` would wait, or None."""
    worker = applied_with(session)
    if worker is None or worker.access_key_id == access_key_id:
        return None
    return (
        f"warning: this test was published by requester {access_key_id}, but the review worker "
        f"applies decisions with the keys of requester {worker.access_key_id} (last at "
        f"{worker.at:%Y-%m-%d %H:%M} UTC). Only {access_key_id} may grant this qualification: "
        f"workers' results will stay pending, and the workers unqualified, until a `hitforge worker` "
        f"runs with HITFORGE_MTURK_ACCESS_KEY_ID={access_key_id}."
    )
