"""Seeding the worker-path benchmark: a requester, one HIT type and many one-assignment HITs by bulk SQL.

A million HITs through CreateHIT would take the better part of an hour; the
benchmark measures the worker's side, so the HITs are written straight into
the marketplace's tables, in the shape CreateHIT leaves them (Assignable, one
assignment, a week to live), in batches of one multi-row INSERT each.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from hits.db import session_scope, utcnow
from hits.market.accounts import create_requester
from hits.market.ids import new_entity_id
from hits.market.models import HIT, HITType
from hits.market.models.work import ASSIGNABLE

HTML_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2011-11-11/HTMLQuestion.xsd"
#: What a worker sees in the frame: one field and the MTurk submit form (kept small: a million copies).
TASK_HTML = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><script src="https://s3.amazonaws.com/mturk-public/'
    'externalHIT_v1.js"></script></head><body><form name="mturk_form" method="post" id="mturk_form" '
    'action="https://www.mturk.com/mturk/externalSubmit"><input type="hidden" name="assignmentId" '
    'id="assignmentId"><label>Caption <input name="caption"></label><input type="submit" id="submitButton">'
    "</form><script>turkSetAssignmentID();</script></body></html>"
)
QUESTION = (
    f'<HTMLQuestion xmlns="{HTML_NS}"><HTMLContent><![CDATA[{TASK_HTML}]]></HTMLContent>'
    "<FrameHeight>400</FrameHeight></HTMLQuestion>"
)
BATCH = 5_000


@dataclass(frozen=True)
class Seeded:
    """What the load generator needs to know about the seeded marketplace."""

    requester_id: str
    hit_type_id: str
    hits: int
    #: The requester's key, for benchmarks that also call the API as it.
    access_key_id: str = ""
    secret_access_key: str = ""


def seed(market: sessionmaker[Session], hits: int, *, progress: bool = False) -> Seeded:
    """A requester with one HIT type of ``hits`` Assignable one-assignment HITs, oldest first."""
    run = uuid.uuid4().hex[:8]
    now = utcnow()
    with session_scope(market) as session:
        key = create_requester(session, f"worker-path-{run}", Decimal("1000000.00"))
        hit_type = HITType(
            id=new_entity_id(),
            requester_id=key.requester_id,
            title=f"Caption a picture ({run})",
            description="Write one short caption for the picture.",
            keywords="caption, picture",
            reward=Decimal("0.05"),
            assignment_duration_seconds=600,
            auto_approval_delay_seconds=86_400,
            qualification_requirements=[],
            created_at=now,
        )
        session.add(hit_type)
        session.flush()
        hit_type_id = hit_type.id
    seeded = Seeded(key.requester_id, hit_type_id, hits, key.access_key_id, key.secret_access_key)
    _insert_hits(market, seeded, hits, progress=progress)
    return seeded


def hit_rows(seeded: Seeded, count: int, before: int, status: str = ASSIGNABLE) -> list[dict[str, Any]]:
    """``count`` HIT rows of the seeded type as CreateHIT leaves them, older than the ``before`` newest."""
    now = utcnow()
    expires = now + timedelta(days=7)
    return [
        {
            "id": new_entity_id(),
            "hit_type_id": seeded.hit_type_id,
            "requester_id": seeded.requester_id,
            "question": QUESTION,
            "max_assignments": 1,
            "status": status,
            "review_status": "NotReviewed",
            # Distinct creation times, so "oldest first" is one order whatever the ids.
            "created_at": now - timedelta(microseconds=before + count - n),
            "expires_at": expires,
        }
        for n in range(count)
    ]


def _insert_hits(market: sessionmaker[Session], seeded: Seeded, hits: int, *, progress: bool = False) -> None:
    written = 0
    while written < hits:
        count = min(BATCH, hits - written)
        rows = hit_rows(seeded, count, hits - written - count)
        with session_scope(market) as session:
            session.execute(insert(HIT), rows)
        written += count
        if progress and written % 100_000 == 0:
            print(f"  seeded {written:,} HITs", flush=True)


def remaining(market: sessionmaker[Session], seeded: Seeded) -> int:
    """Assignable HITs left in the seeded group."""
    with session_scope(market) as session:
        found = session.scalar(
            select(func.count()).where(HIT.hit_type_id == seeded.hit_type_id, HIT.status == ASSIGNABLE)
        )
    return int(found or 0)


def top_up(market: sessionmaker[Session], seeded: Seeded, hits: int) -> None:
    """Add HITs to the group until it has ``hits`` Assignable ones again (a run used some)."""
    missing = hits - remaining(market, seeded)
    if missing > 0:
        _insert_hits(market, seeded, missing)
