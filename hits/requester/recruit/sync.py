"""What the platform says about places: polled (every page) or pushed (a signed webhook).

A place the participant returned, or that timed out, is *freed*: its
assignments still in progress go back to their HITs (the webhook does that at
once; otherwise they expire at their deadline), and no decision on it is ever
applied on the platform.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.recruit.base import Recruiter
from hits.requester.recruit.prolific import wire
from hits.requester.tables.recruiting import RecruitAssignment, Recruitment, RecruitPlace


@dataclass
class SyncReport:
    """What one poll read and changed."""

    read: int = 0
    updated: int = 0
    #: Places newly freed: (worker id, the assignment ids the place took).
    freed: list[tuple[str, list[str]]] = field(default_factory=list)


def record_status(session: Session, session_id: str, status: str) -> tuple[str, list[str]] | None:
    """Keep a place's platform status; when this frees it, (worker id, its assignment ids)."""
    place = session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))
    if place is None or place.platform_status == status:
        return None
    place.platform_status = status
    if status in wire.FREED and place.status != "freed":
        place.status = "freed"
        taken = session.scalars(
            select(RecruitAssignment.assignment_id).where(RecruitAssignment.place_id == place.id)
        ).all()
        session.flush()
        return place.worker_id, list(taken)
    session.flush()
    return None


def sync_places(sessions: Callable[[], Session], recruiter: Recruiter, campaign_id: int) -> SyncReport:
    """Read every submission of the campaign's study (all pages) and record each place's status."""
    with session_scope(sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        study_id = row.study_id if row is not None else None
    report = SyncReport()
    if study_id is None:
        return report
    submissions = recruiter.submissions(study_id)  # no transaction open during the calls
    report.read = len(submissions)
    known_statuses: dict[str, str | None]
    with session_scope(sessions) as session:
        ids = [s.id for s in submissions]
        known_statuses = dict(
            session.execute(
                select(RecruitPlace.session_id, RecruitPlace.platform_status).where(
                    RecruitPlace.session_id.in_(ids)
                )
            ).all()
        )
        for submission in submissions:
            if submission.id not in known_statuses or known_statuses[submission.id] == submission.status:
                continue  # a session that never reached hitforge, or nothing new
            report.updated += 1
            freed = record_status(session, submission.id, submission.status)
            if freed is not None:
                report.freed.append(freed)
    return report
