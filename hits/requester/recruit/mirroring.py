"""Grants a mirrored participant group has not heard of yet: queued as ``mirror`` outbox entries.

A grant or revocation the outbox applies while the worker holds a place in a
study that mirrors the qualification is relayed at once (``relay.hand_over``).
Three kinds escape that moment, and are caught here:

* a grant made *before* the participant took a place in this study (a
  screening study's passers, a qualification test taken earlier), or before
  the study's group was made (a qualification added to
  ``mirror_qualifications`` on a re-launch);
* a grant relayed to another study that mirrors the same qualification (an
  outbox entry has one relay);
* a grant applied while the participant's place was being written (the
  claim could not see the place yet).

:func:`queue_standing_grants` reads the requester's own record of what it
granted (every ``qualify`` and ``revoke`` entry of the qualification type,
whatever campaign queued it: a qualification test's grants belong to the
test's placeholder campaign), takes each participant's latest *applied* one,
and queues a ``mirror`` entry for the campaign when it was relayed to this
study neither directly nor by an earlier ``mirror``. The outbox hands a
``mirror`` entry over like a grant, and never calls the marketplace for it
(the marketplace already holds the grant). Entries still pending are left to
their own hand-over. Grants a requester makes on the marketplace outside
hitforge (a script calling ``AssociateQualificationWithWorker`` directly)
are not in that record and are not mirrored.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import OutboxEntry
from hits.requester.tables.recruiting import RecruitGroup, Recruitment, RecruitPlace, RecruitRelay

#: The outbox actions that change who holds a qualification.
GRANTS = ("qualify", "revoke")


def mirror_target(group_row_id: int, grant_entry_id: int) -> str:
    """The ``mirror`` entry's key: one per group and grant, so it is queued once however often asked."""
    return f"mirror:g{group_row_id}:e{grant_entry_id}"


def holds(action: str, payload: dict[str, object]) -> bool:
    """Whether a grant (``qualify``, or its ``mirror``) or a revocation leaves the worker holding the
    qualification (a score of 1 or more)."""
    if action not in ("qualify", "mirror"):
        return False
    try:
        return int(str(payload.get("value"))) >= 1
    except ValueError:
        return False


def queue_standing_grants(
    session: Session, recruitment: Recruitment, worker_ids: Iterable[str] | None = None
) -> list[int]:
    """Queue a ``mirror`` entry for each participant whose latest applied grant the study's groups missed.

    ``worker_ids`` narrows it to some participants (one who just took a
    place); by default every participant of the study. The ids of the entries
    queued: the caller sends their task once its transaction commits.
    """
    groups = list(
        session.scalars(
            select(RecruitGroup).where(
                RecruitGroup.recruitment_id == recruitment.id, RecruitGroup.group_id.is_not(None)
            )
        )
    )
    if not groups or recruitment.platform != "prolific":
        return []
    places = select(RecruitPlace.worker_id).where(RecruitPlace.recruitment_id == recruitment.id)
    wanted = set(worker_ids) if worker_ids is not None else set(session.scalars(places))
    if not wanted:
        return []
    queued: list[int] = []
    for group in groups:
        # Never held it: nothing of theirs is in the group to take out.
        grants = [g for g in _latest_grants(session, group, wanted) if g[2] or g[3]]
        mirrored = _already_mirrored(session, recruitment.id, group.id, [g[0] for g in grants])
        for grant_id, worker_id, joins, _ in grants:
            if grant_id in mirrored:
                continue
            entry_id = _queue_once(
                session,
                recruitment.campaign_id,
                mirror_target(group.id, grant_id),
                {
                    "qualification_type_id": group.qualification_type_id,
                    "worker_id": worker_id,
                    "value": 1 if joins else 0,
                    "grant_entry_id": grant_id,
                },
            )
            if entry_id is not None:
                queued.append(entry_id)
    return queued


def _latest_grants(
    session: Session, group: RecruitGroup, workers: set[str]
) -> list[tuple[int, str, bool, bool]]:
    """Per worker: their latest grant entry, whether it leaves them holding, whether any earlier did.

    Only when the latest is applied: one still pending is relayed by its own hand-over.
    """
    rows = session.execute(
        select(OutboxEntry.id, OutboxEntry.action, OutboxEntry.status, OutboxEntry.payload)
        .where(
            OutboxEntry.action.in_(GRANTS),
            OutboxEntry.payload["qualification_type_id"].as_string() == group.qualification_type_id,
        )
        .order_by(OutboxEntry.id)
    ).all()
    latest: dict[str, tuple[int, str, bool]] = {}
    held_before: dict[str, bool] = {}
    for entry_id, action, status, payload in rows:
        worker_id = str((payload or {}).get("worker_id") or "")
        if worker_id not in workers:
            continue
        if worker_id in latest:
            held_before[worker_id] = held_before.get(worker_id, False) or latest[worker_id][2]
        latest[worker_id] = (entry_id, status, holds(action, payload or {}))
    return [
        (entry_id, worker_id, joins, held_before.get(worker_id, False))
        for worker_id, (entry_id, status, joins) in latest.items()
        if status == "done"
    ]


def _already_mirrored(
    session: Session, recruitment_id: int, group_row_id: int, grant_ids: list[int]
) -> set[int]:
    """Those of ``grant_ids`` relayed to this study, directly or by a ``mirror`` entry: two queries in
    all, not two a participant (settling asks every minute)."""
    if not grant_ids:
        return set()
    relayed = set(
        session.scalars(
            select(RecruitRelay.outbox_entry_id).where(
                RecruitRelay.recruitment_id == recruitment_id, RecruitRelay.outbox_entry_id.in_(grant_ids)
            )
        )
    )
    targets = {mirror_target(group_row_id, g): g for g in grant_ids}
    queued = session.scalars(
        select(OutboxEntry.target).where(
            OutboxEntry.action == "mirror", OutboxEntry.target.in_(list(targets))
        )
    )
    return relayed | {targets[t] for t in queued}


def _queue_once(session: Session, campaign_id: int, target: str, payload: dict[str, object]) -> int | None:
    entry = OutboxEntry(campaign_id=campaign_id, action="mirror", target=target, payload=payload)
    try:
        with session.begin_nested():
            session.add(entry)
    except IntegrityError:
        return None  # a concurrent settling queued it first
    return entry.id
