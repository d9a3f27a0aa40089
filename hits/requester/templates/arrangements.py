"""Per-assignment arrangements of a slot that only the server knows (blinded side-by-side).

A template that is ``arranged`` (the ``sxs`` one) shows each assignment its
slots in an arrangement of their own, e.g. which description is on the left.
Deriving it from anything the worker holds (the assignment id, the page's
URL) would let a worker work it out, so it is drawn from the operating
system's randomness the first time the assignment's page opens and kept
here, in the requester database. Answers arrive in page terms (left, right)
from the page and from the marketplace alike; :func:`unscrambled_answers`
turns them into the item's own terms with what was recorded.

Gold stays fixed per HIT (``hits.requester.pages.gold``): every slot, gold or not,
gets its own arrangement, so comparing two assignments' pages shows every
slot varying alike and singles out none.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.requester.pages.gold import page_slots
from hits.requester.tables.campaigns import PublishedHIT
from hits.requester.tables.templates import SlotArrangement
from hits.requester.templates.base import TaskTemplate

#: Arrangements must not be guessable from earlier ones: the OS's randomness, not a seeded PRNG.
_SYSTEM_RANDOM = random.SystemRandom()


def _recorded(session: Session, campaign_id: int, assignment_id: str) -> dict[int, dict[str, Any]]:
    rows = session.scalars(
        select(SlotArrangement).where(
            SlotArrangement.campaign_id == campaign_id, SlotArrangement.assignment_id == assignment_id
        )
    )
    return {row.position: dict(row.arrangement) for row in rows}


def arrangements_for(
    session: Session,
    template: TaskTemplate,
    campaign_id: int,
    assignment_id: str | None,
    payloads: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """Each slot's arrangement for this assignment: drawn and recorded once, the same ever after.

    A preview (``assignment_id`` None) gets fresh arrangements, recorded
    nowhere: no answers come from it. Two requests opening the same page at
    once record one arrangement (the loser of the race reads the winner's).
    """
    if assignment_id is None:
        return [template.arrange(p, _SYSTEM_RANDOM) for p in payloads]
    known = _recorded(session, campaign_id, assignment_id)
    if len(known) < len(payloads):
        try:
            with session.begin_nested():
                for position, payload in enumerate(payloads):
                    if position not in known:
                        drawn = template.arrange(payload, _SYSTEM_RANDOM)
                        session.add(
                            SlotArrangement(
                                campaign_id=campaign_id,
                                assignment_id=assignment_id,
                                position=position,
                                arrangement=drawn,
                            )
                        )
                        known[position] = drawn
        except IntegrityError:
            known = _recorded(session, campaign_id, assignment_id)
    return [known[position] for position in range(len(payloads))]


def unscrambled_answers(
    session: Session, template: TaskTemplate, published: PublishedHIT, assignment_id: str, answers: list[Any]
) -> list[Any]:
    """``answers`` (page terms, slot order) in each item's own terms; unchanged unless ``arranged``.

    An assignment whose page never opened (answers sent to the marketplace
    some other way) gets its arrangement drawn now: its worker answered
    blind, and the answer counts as given for a random arrangement.
    """
    if not template.arranged:
        return answers
    payloads = [slot.payload for slot in page_slots(session, published, assignment_id)]
    arranged = arrangements_for(session, template, published.campaign_id, assignment_id, payloads)
    return [
        template.unscramble(answer, arrangement, payload)
        for answer, arrangement, payload in zip(answers, arranged, payloads, strict=False)
    ]
