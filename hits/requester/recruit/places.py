"""Places in a recruiting study: who took them, which assignments they cover, when they finished.

Functions given a ``Session`` flush and never commit: the request (the entry
page) or the command owns the transaction.
"""

from __future__ import annotations

import hashlib
import re

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.tables.recruiting import RecruitAssignment, Recruitment, RecruitPlace

#: Studies whose places may be entered and worked (a paused study keeps its places working).
ENTERABLE = ("published", "paused")
#: A panel's participant id as the entry link accepts it: letters and digits, and ``_ . -`` inside;
#: never ``:`` (the account name's separator), a space, or what a URL or a page would have to escape.
PANEL_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,46}[A-Za-z0-9])?")
#: Assignment statuses that count as a task done (submitted, whatever was decided since).
DONE = frozenset({"Submitted", "Approved", "Rejected"})


def recruitment_for_study(session: Session, study_id: str) -> Recruitment | None:
    """The recruitment whose platform study is ``study_id``, if it is open to its places."""
    row = session.scalar(select(Recruitment).where(Recruitment.study_id == study_id))
    return row if row is not None and row.status in ENTERABLE else None


def panel_session_id(recruitment_id: int, participant_id: str) -> str:
    """A panel place's key: panels have no sessions, so one place per participant id per campaign.

    Derived, not random: a second visit with the same id finds the same place.
    Only letters and digits, like a platform's session id in the place's URL.
    """
    digest = hashlib.sha256(f"{recruitment_id}:{participant_id}".encode()).hexdigest()
    return f"pn{digest[:40]}"


def places_taken(session: Session, recruitment_id: int) -> int:
    """How many places of a recruitment participants have taken."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(RecruitPlace)
            .where(RecruitPlace.recruitment_id == recruitment_id)
        )
        or 0
    )


def place_of_session(session: Session, session_id: str) -> RecruitPlace | None:
    """The place a platform session took, if any."""
    return session.scalar(select(RecruitPlace).where(RecruitPlace.session_id == session_id))


def open_place(
    session: Session, recruitment: Recruitment, participant_id: str, session_id: str, worker_id: str
) -> RecruitPlace:
    """Record a participant's place (once per session: a second arrival finds the first's row)."""
    place = RecruitPlace(
        recruitment_id=recruitment.id,
        participant_id=participant_id,
        session_id=session_id,
        worker_id=worker_id,
        status="working",
    )
    try:
        with session.begin_nested():
            session.add(place)
    except IntegrityError:
        found = place_of_session(session, session_id)
        assert found is not None
        return found
    return place


def place_assignments(session: Session, place: RecruitPlace) -> list[RecruitAssignment]:
    """The assignments a place took, in the order taken."""
    return list(
        session.scalars(
            select(RecruitAssignment)
            .where(RecruitAssignment.place_id == place.id)
            .order_by(RecruitAssignment.id)
        )
    )


def record_assignment(session: Session, place: RecruitPlace, assignment_id: str, hit_id: str) -> None:
    """Keep the place's session id with an assignment it took."""
    session.add(
        RecruitAssignment(
            place_id=place.id, session_id=place.session_id, assignment_id=assignment_id, hit_id=hit_id
        )
    )
    session.flush()


def finish_place(session: Session, place: RecruitPlace) -> None:
    """The participant's tasks are all in: the place is finished (once)."""
    if place.status == "working":
        place.status = "finished"
        place.finished_at = utcnow()
        session.flush()


def leave_without_work(session: Session, place: RecruitPlace) -> None:
    """No task was left when the participant asked for their first: the place ends with no work."""
    if place.status == "working":
        place.status = "no_work"
        place.finished_at = utcnow()
        session.flush()


def working_place_of(session: Session, worker_id: str, campaign_id: int) -> RecruitPlace | None:
    """The place a worker is working in a campaign's study, if any (the latest)."""
    return session.scalar(
        select(RecruitPlace)
        .join(Recruitment, Recruitment.id == RecruitPlace.recruitment_id)
        .where(
            RecruitPlace.worker_id == worker_id,
            RecruitPlace.status == "working",
            Recruitment.campaign_id == campaign_id,
        )
        .order_by(RecruitPlace.id.desc())
        .limit(1)
    )
