"""Spot checks: a person looks again at work the quality model approved on its own.

Gold items say how a worker answers the questions whose answers are known;
a spot check says whether the rest of an approved assignment holds up. When
the model approves work (``review._enqueue_decisions``, and the approval
before the marketplace's deadline in ``followups.due_before_deadline``), a
share of it is drawn for a reviewer (:func:`sample_approved`): each worker's
first approvals in the campaign, and a fixed per-assignment draw at the
policy's rate. Approval is not delayed: the worker is paid as before, and the
check is an after-the-fact review.

A reviewer records ``agree`` or ``disagree`` once per check
(:func:`record_verdict`), with an audit row. Disagreements are counted on the
worker's record in the campaign; at the policy's ``flag_after`` the worker is
flagged for a person, like any flag in the review queue. Nothing here rejects
or holds work: approved work stays approved, and a flag a person has already
reviewed is not reopened. Functions given a session flush and never commit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.files.campaign import QualityPolicy, stored_policy
from hits.requester.tables.campaigns import Campaign, ReviewAction, StaffUser, Submission, WorkerStats
from hits.requester.tables.quality import SpotCheck

Verdict = Literal["agree", "disagree"]
DrawReason = Literal["first", "sample"]
State = Literal["waiting", "checked"]
#: Why a check was drawn, as the pages say it.
REASONS: dict[DrawReason, str] = {
    "first": "one of the worker's first approvals",
    "sample": "drawn at random",
}
STATES: dict[State, str] = {"waiting": "waiting for a reviewer", "checked": "checked"}
#: The audit log's action for each verdict.
AUDIT_ACTIONS: dict[Verdict, str] = {"agree": "spot check agree", "disagree": "spot check disagree"}
#: How a flag raised on spot checks begins its reason (the queue and the worker page show it).
FLAG_REASON = "spot checks"
PER_PAGE = 50


class AlreadyChecked(ValueError):
    """The spot check has a verdict already: a second one (a double post) counts for nothing."""


def draw(campaign_id: int, seed: int, assignment_id: str) -> float:
    """The assignment's fixed draw in [0, 1): the same every time it is asked for.

    A hash, not a random generator: a re-run of the pipeline, a retried task or
    another process reaches the same answer, so nothing is drawn twice or re-drawn.
    """
    digest = hashlib.sha256(f"hitforge-spot-check:{campaign_id}:{seed}:{assignment_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def sample_approved(
    session: Session, campaign: Campaign, policy: QualityPolicy, approved: Iterable[Submission]
) -> list[SpotCheck]:
    """Draw spot checks among assignments just approved without a person; the checks it added.

    An assignment already drawn is left alone. A worker's first
    ``first_per_worker`` drawn-as-first checks come first; after them, an
    assignment is drawn when its :func:`draw` falls below ``rate``. The
    pipeline calls it with the workers' records locked, so two of its batches
    do not both take a worker's first check; the deadline approval does not
    lock them, and racing a batch it may at worst draw one extra first check.
    """
    rule = policy.spot_checks
    # In id order: which approvals are a worker's first does not depend on how they were listed.
    work = sorted(approved, key=lambda s: s.id)
    if not work or (rule.rate <= 0 and rule.first_per_worker <= 0):
        return []
    ids = [s.assignment_id for s in work]
    workers = {s.worker_id for s in work}
    # The reads do not flush the caller's pending rows (a flush before them was a fifth of a
    # pipeline batch's time): the spot checks this transaction added and has not flushed yet
    # (the deadline approval may call this more than once) are counted from the session instead.
    pending = [o for o in session.new if isinstance(o, SpotCheck) and o.campaign_id == campaign.id]
    with session.no_autoflush:
        drawn = set(session.scalars(select(SpotCheck.assignment_id).where(SpotCheck.assignment_id.in_(ids))))
        firsts: dict[str, int] = {}
        if rule.first_per_worker > 0:
            firsts = dict(
                session.execute(
                    select(SpotCheck.worker_id, func.count())
                    .where(
                        SpotCheck.campaign_id == campaign.id,
                        SpotCheck.worker_id.in_(workers),
                        SpotCheck.reason == "first",
                    )
                    .group_by(SpotCheck.worker_id)
                ).all()
            )
    for check in pending:
        drawn.add(check.assignment_id)
        if check.reason == "first" and check.worker_id in workers:
            firsts[check.worker_id] = firsts.get(check.worker_id, 0) + 1
    seed = int(campaign.spec.get("seed") or 0)
    added = []
    for submission in work:
        if submission.assignment_id in drawn:
            continue
        reason: DrawReason | None = None
        if firsts.get(submission.worker_id, 0) < rule.first_per_worker:
            reason = "first"
            firsts[submission.worker_id] = firsts.get(submission.worker_id, 0) + 1
        elif draw(campaign.id, seed, submission.assignment_id) < rule.rate:
            reason = "sample"
        if reason is None:
            continue
        check = SpotCheck(
            campaign_id=campaign.id,
            worker_id=submission.worker_id,
            assignment_id=submission.assignment_id,
            reason=reason,
            note="",
        )
        session.add(check)
        drawn.add(submission.assignment_id)
        added.append(check)
    return added


@dataclass(frozen=True)
class SpotCheckSummary:
    """A worker's spot checks in one campaign: what was drawn, checked and disagreed with."""

    drawn: int
    waiting: int
    agreed: int
    disagreed: int
    #: Disagreements that flag the worker (0: never).
    flag_after: int

    @property
    def checked(self) -> int:
        return self.agreed + self.disagreed

    @property
    def disagreement_rate(self) -> float | None:
        """Disagreements over checks made (None before any)."""
        return self.disagreed / self.checked if self.checked else None


def spot_check_summary(session: Session, campaign_id: int, worker_id: str) -> SpotCheckSummary:
    """The worker's spot-check record in the campaign (for their pages: evidence, profile)."""
    counts = dict(
        session.execute(
            select(SpotCheck.verdict, func.count())
            .where(SpotCheck.campaign_id == campaign_id, SpotCheck.worker_id == worker_id)
            .group_by(SpotCheck.verdict)
        ).all()
    )
    campaign = session.get(Campaign, campaign_id)
    flag_after = stored_policy(campaign.spec).spot_checks.flag_after if campaign is not None else 0
    return SpotCheckSummary(
        drawn=sum(counts.values()),
        waiting=counts.get(None, 0),
        agreed=counts.get("agree", 0),
        disagreed=counts.get("disagree", 0),
        flag_after=flag_after,
    )


@dataclass(frozen=True)
class VerdictDone:
    """What recording a verdict did."""

    check: SpotCheck
    summary: SpotCheckSummary
    #: Whether this verdict flagged the worker for a person.
    flagged: bool


def record_verdict(
    session: Session,
    check_id: int,
    verdict: Verdict,
    staff_id: int,
    note: str,
    evidence_sha256: str | None = None,
) -> VerdictDone:
    """Record a reviewer's verdict on a spot check, once; count it on the worker's record.

    The check's row is locked and read afresh, then the worker's record: a
    second post (or a second reviewer) finds the verdict and is refused
    (:class:`AlreadyChecked`). A disagreement that brings the worker's count to
    the policy's ``flag_after`` flags them for a person, unless they are
    flagged already or a person has reviewed a flag of theirs (confirmed: the
    worker is dealt with; cleared: that reviewer's word stands). The approval
    itself is never touched. Writes one audit row.
    """
    check = session.scalar(
        select(SpotCheck)
        .where(SpotCheck.id == check_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if check is None:
        raise LookupError(f"no spot check {check_id}")
    if check.verdict is not None:
        raise AlreadyChecked(f"assignment {check.assignment_id} was spot-checked already ({check.verdict})")
    check.verdict, check.note, check.staff_user_id, check.checked_at = verdict, note, staff_id, utcnow()
    session.add(
        ReviewAction(
            campaign_id=check.campaign_id,
            worker_id=check.worker_id,
            staff_user_id=staff_id,
            action=AUDIT_ACTIONS[verdict],
            note=note,
            assignments=[check.assignment_id],
            evidence_sha256=evidence_sha256,
        )
    )
    record = None
    if verdict == "disagree":
        # Locked before counting: two reviewers disagreeing at once each count the other's
        # verdict (read once the first commits), so the threshold is not stepped over unseen.
        record = session.scalar(
            select(WorkerStats)
            .where(WorkerStats.campaign_id == check.campaign_id, WorkerStats.worker_id == check.worker_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    session.flush()
    summary = spot_check_summary(session, check.campaign_id, check.worker_id)
    flagged = False
    reached = bool(summary.flag_after) and summary.disagreed >= summary.flag_after
    if record is not None and reached and not record.flagged and record.flag_review is None:
        record.flagged = True
        record.flag_reason = (
            f"{FLAG_REASON}: reviewers disagreed with {summary.disagreed} of the worker's "
            f"{summary.checked} checked approvals (flagged at {summary.flag_after})"
        )
        flagged = True
        session.flush()
    return VerdictDone(check, summary, flagged)


@dataclass(frozen=True)
class SpotCheckRow:
    """One spot check, with what its list shows."""

    id: int
    campaign_id: int
    campaign_name: str
    template: str
    worker_id: str
    assignment_id: str
    reason: str
    drawn_at: datetime
    verdict: str | None
    note: str
    reviewer: str | None
    checked_at: datetime | None
    #: The worker's checks in the campaign so far: (checked, disagreed).
    worker_checked: int
    worker_disagreed: int


@dataclass(frozen=True)
class SpotCheckPage:
    """One page of spot checks and the filters' choices."""

    rows: list[SpotCheckRow]
    total: int
    page: int
    per_page: int
    campaigns: list[tuple[int, str]]

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))


def spot_check_list(
    session: Session,
    visible: Collection[int] | Select[int],
    *,
    campaign_id: int | None = None,
    reason: DrawReason | None = None,
    state: State | None = "waiting",
    page: int = 1,
    per_page: int = PER_PAGE,
) -> SpotCheckPage:
    """Spot checks in the campaigns in ``visible``: waiting ones oldest first, checked ones newest first."""
    where: list[ColumnElement[bool]] = [SpotCheck.campaign_id.in_(visible)]
    if campaign_id is not None:
        where.append(SpotCheck.campaign_id == campaign_id)
    if reason is not None:
        where.append(SpotCheck.reason == reason)
    if state == "waiting":
        where.append(SpotCheck.verdict.is_(None))
    elif state == "checked":
        where.append(SpotCheck.verdict.is_not(None))
    total = session.scalar(select(func.count()).select_from(SpotCheck).where(*where)) or 0
    order = (
        (SpotCheck.created_at, SpotCheck.id)
        if state == "waiting"
        else (SpotCheck.checked_at.desc().nulls_first(), SpotCheck.id.desc())
    )
    page = max(1, page)
    found = session.execute(
        select(SpotCheck, Campaign.name, Campaign.template, StaffUser.username)
        .join(Campaign, Campaign.id == SpotCheck.campaign_id)
        .outerjoin(StaffUser, StaffUser.id == SpotCheck.staff_user_id)
        .where(*where)
        .order_by(*order)
        .offset((page - 1) * per_page)
        .limit(per_page)
    ).all()
    tallies = _tallies(session, {(c.campaign_id, c.worker_id) for c, *_ in found})
    rows = [
        SpotCheckRow(
            id=c.id,
            campaign_id=c.campaign_id,
            campaign_name=name,
            template=template,
            worker_id=c.worker_id,
            assignment_id=c.assignment_id,
            reason=c.reason,
            drawn_at=c.created_at,
            verdict=c.verdict,
            note=c.note,
            reviewer=reviewer,
            checked_at=c.checked_at,
            worker_checked=tallies.get((c.campaign_id, c.worker_id), (0, 0))[0],
            worker_disagreed=tallies.get((c.campaign_id, c.worker_id), (0, 0))[1],
        )
        for c, name, template, reviewer in found
    ]
    choices = session.execute(
        select(Campaign.id, Campaign.name)
        .where(Campaign.id.in_(select(SpotCheck.campaign_id).where(SpotCheck.campaign_id.in_(visible))))
        .order_by(Campaign.name)
    ).all()
    return SpotCheckPage(rows, total, page, per_page, [(int(i), str(n)) for i, n in choices])


def _tallies(session: Session, keys: set[tuple[int, str]]) -> dict[tuple[int, str], tuple[int, int]]:
    """(checked, disagreed) for each (campaign, worker), in one query per campaign."""
    out: dict[tuple[int, str], tuple[int, int]] = {}
    for campaign_id in sorted({c for c, _ in keys}):
        workers = sorted(w for c, w in keys if c == campaign_id)
        for worker_id, verdict, n in session.execute(
            select(SpotCheck.worker_id, SpotCheck.verdict, func.count())
            .where(
                SpotCheck.campaign_id == campaign_id,
                SpotCheck.worker_id.in_(workers),
                SpotCheck.verdict.is_not(None),
            )
            .group_by(SpotCheck.worker_id, SpotCheck.verdict)
        ):
            checked, disagreed = out.get((campaign_id, worker_id), (0, 0))
            out[(campaign_id, worker_id)] = (checked + n, disagreed + (n if verdict == "disagree" else 0))
    return out


@dataclass(frozen=True)
class AssignmentSpotCheck:
    """An assignment's spot check as its evidence page shows it, with its worker's record."""

    check: SpotCheck
    reviewer: str | None
    summary: SpotCheckSummary


def spot_check_of(session: Session, assignment_id: str) -> AssignmentSpotCheck | None:
    """The assignment's spot check (None: it was not drawn). The caller has scoped the assignment."""
    found = session.execute(
        select(SpotCheck, StaffUser.username)
        .outerjoin(StaffUser, StaffUser.id == SpotCheck.staff_user_id)
        .where(SpotCheck.assignment_id == assignment_id)
    ).first()
    if found is None:
        return None
    check, reviewer = found
    return AssignmentSpotCheck(
        check, reviewer, spot_check_summary(session, check.campaign_id, check.worker_id)
    )
