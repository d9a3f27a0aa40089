"""Changing HITs after creation: more assignments, expiration, review status, type, deletion."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import events, request_tokens
from hits.market.errors import RequestError, invalid, not_found
from hits.market.hit_ops import check_funds, get_hit, refresh_status, slot_counts
from hits.market.models import HIT, HITType
from hits.market.models.work import ACCEPTED, DISPOSED, REVIEWABLE, REVIEWING, SUBMITTED

INVALID_HIT_STATE = "AWS.MechanicalTurk.InvalidHITState"
INVALID_MAXIMUM_ASSIGNMENTS_INCREASE = "AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease"
MAX_ASSIGNMENTS = 1_000_000_000


def _live_hit(session: Session, hit_id: Any, requester_id: str) -> HIT:
    hit = get_hit(session, hit_id, requester_id, for_update=True)
    if hit.status == DISPOSED:
        raise not_found("HIT", hit.id)
    return hit


def add_assignments(session: Session, requester_id: str, hit_id: Any, number: Any, token: Any = None) -> HIT:
    """CreateAdditionalAssignmentsForHIT: raise MaxAssignments by ``number`` (a HITExtended event).

    Refused with ``AWS.MechanicalTurk.InsufficientFunds`` when the balance does
    not cover the new assignments (reward plus fee), as CreateHIT is.
    """
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_ASSIGNMENTS:
        raise invalid("NumberOfAdditionalAssignments must be a positive integer.")
    hit = _live_hit(session, hit_id, requester_id)
    if hit.max_assignments < 10 <= hit.max_assignments + number:
        raise RequestError(
            "A HIT created with fewer than 10 assignments cannot be extended to have 10 or more "
            f"assignments (it has {hit.max_assignments}; asked for {number} more).",
            INVALID_MAXIMUM_ASSIGNMENTS_INCREASE,
        )
    if hit.max_assignments + number > MAX_ASSIGNMENTS:
        raise invalid("MaxAssignments would exceed its maximum.")
    # As CreateHIT does: assignments the balance cannot pay for would be work no one is paid for.
    check_funds(session, requester_id, hit.hit_type.reward, hit.max_assignments + number, adding=number)
    request_tokens.claim(session, requester_id, "CreateAdditionalAssignmentsForHIT", token)
    hit.max_assignments += number
    if hit.status == REVIEWING:
        hit.status = REVIEWABLE  # let refresh_status reopen it
    refresh_status(session, hit)
    events.record(session, hit, "HITExtended")
    session.flush()
    return hit


def update_expiration(session: Session, requester_id: str, hit_id: Any, expire_at: datetime) -> HIT:
    """UpdateExpirationForHIT: a time in the past expires the HIT at once.

    A deleted (Disposed) HIT is left as it is, without an error: MTurk does not
    fail the expire of a HIT it has disposed of, so a cleanup script that
    expires and deletes each HIT can run twice.
    """
    hit = get_hit(session, hit_id, requester_id, for_update=True)
    if hit.status == DISPOSED:
        return hit
    now = utcnow()
    hit.expires_at = now if expire_at <= now else expire_at
    refresh_status(session, hit, now)
    events.record(session, hit, "HITExpired" if expire_at <= now else "HITExtended")
    session.flush()
    return hit


def update_review_status(session: Session, requester_id: str, hit_id: Any, revert: bool) -> HIT:
    """UpdateHITReviewStatus: Reviewable -> Reviewing, or back with ``revert``."""
    hit = _live_hit(session, hit_id, requester_id)
    refresh_status(session, hit)
    if revert:
        if hit.status != REVIEWING:
            raise RequestError(
                f"This operation can be called with a status of: Reviewing (HIT is {hit.status})",
                INVALID_HIT_STATE,
            )
        hit.status = REVIEWABLE
        refresh_status(session, hit)
    else:
        if hit.status not in (REVIEWABLE, REVIEWING):
            raise RequestError(
                f"This operation can be called with a status of: Reviewable (HIT is {hit.status})",
                INVALID_HIT_STATE,
            )
        hit.status = REVIEWING
    session.flush()
    return hit


def update_hit_type(session: Session, requester_id: str, hit_id: Any, hit_type_id: Any) -> HIT:
    """UpdateHITTypeOfHIT: move a HIT to another of the requester's HIT types."""
    hit = _live_hit(session, hit_id, requester_id)
    hit_type = session.get(HITType, hit_type_id) if isinstance(hit_type_id, str) else None
    if hit_type is None or hit_type.requester_id != requester_id:
        raise not_found("HITType", str(hit_type_id))
    hit.hit_type_id = hit_type.id
    hit.hit_type = hit_type
    session.flush()
    return hit


def delete(session: Session, requester_id: str, hit_id: Any) -> HIT:
    """DeleteHIT: only a Reviewable (or expired) HIT whose assignments are all decided."""
    hit = get_hit(session, hit_id, requester_id, for_update=True)
    if hit.status == DISPOSED:  # deleted already: MTurk refuses a second delete with the state
        raise RequestError(
            f"This HIT is currently in the state '{DISPOSED}'. This operation can be called with a "
            "status of: Reviewable",
            INVALID_HIT_STATE,
        )
    refresh_status(session, hit)
    counts = slot_counts(session, hit.id)
    expired = utcnow() >= hit.expires_at
    if hit.status not in (REVIEWABLE, REVIEWING) and not expired:
        raise RequestError(
            f"This HIT is currently in the state '{hit.status}'. This operation can be called with a "
            "status of: Reviewable",
            INVALID_HIT_STATE,
        )
    if counts.get(ACCEPTED, 0) or counts.get(SUBMITTED, 0):
        raise RequestError(
            "This HIT has assignments that are still in progress or not yet approved or rejected.",
            INVALID_HIT_STATE,
        )
    hit.status = DISPOSED
    events.record(session, hit, "HITDisposed")
    session.flush()
    return hit


def hits_with_qualification(
    session: Session, requester_id: str, qtype_id: str, offset: int, limit: int
) -> list[HIT]:
    """The requester's live HITs whose type requires ``qtype_id``, oldest first."""
    stmt = (
        select(HIT)
        .where(HIT.requester_id == requester_id, HIT.status != DISPOSED)
        .order_by(HIT.created_at, HIT.id)
    )
    # Requirements live in a JSON column: filter in Python (a requester's HITs, paged).
    matching = [
        hit
        for hit in session.scalars(stmt)
        if any(r.get("QualificationTypeId") == qtype_id for r in hit.hit_type.qualification_requirements)
    ]
    return matching[offset : offset + limit]
