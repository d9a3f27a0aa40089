"""A redo that keeps out the workers who already saw its HIT's pictures (``exclude_from_hit``).

Moved out of ``outbox.py`` (which applies it for a ``repost`` entry) to keep
that module small; ``outbox`` re-exports these names.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hits.requester.mturk import Marketplace, MarketplaceError
from hits.wire.limits import MAX_REQUIREMENTS

#: A HIT's properties a HIT type of the same look is made from (``exclude_from_hit``).
_TYPE_FIELDS = (
    "Title",
    "Description",
    "Keywords",
    "AssignmentDurationInSeconds",
    "AutoApprovalDelayInSeconds",
)


class TooManyRequirements(MarketplaceError):
    """A redo cannot keep anyone out: the HIT already has as many requirements as a HIT type takes.

    Not retryable: the same call would be refused again forever; the entry
    keeps the message (shown with the campaign's outbox) for a person to act.
    """

    retryable = False


def redo_qualification_name(hit_id: str) -> str:
    """The name of the one qualification type a redo of ``hit_id`` requires absent (one per HIT)."""
    return f"hitforge redo of HIT {hit_id}: kept out"


def exclude_from_hit(market: Marketplace, hit_id: str, exclude: list[dict[str, Any]]) -> str:
    """Keep workers out of a HIT's next assignments; return the HIT type the HIT now has.

    An added assignment (CreateAdditionalAssignmentsForHIT) takes the HIT's
    requirements, which cannot be edited; the HIT is moved to a HIT type like
    its own plus one ``DoesNotExist`` requirement (guarding discovery, preview
    and accept) on a qualification type of this HIT's own, which every worker
    to keep out is given. One requirement however many pictures (and so
    exclusion rules) the HIT shows: a HIT type takes at most
    ``MAX_REQUIREMENTS``, and a HIT already at that limit is refused with a
    clear error. Every call is idempotent: the type is found by its name,
    associating again sets the same value, and the same properties give the
    same HIT type.
    """
    hit = market.get_hit(hit_id)
    requirements = list(hit.get("QualificationRequirements") or [])
    qualification_id = market.ensure_qualification_type(
        redo_qualification_name(hit_id),
        "Workers who have already seen this HIT's pictures (a redo of its work).",
    )
    if not any(r.get("QualificationTypeId") == qualification_id for r in requirements):
        if len(requirements) >= MAX_REQUIREMENTS:
            raise TooManyRequirements(
                "TooManyRequirements",
                f"HIT {hit_id} already has {len(requirements)} qualification requirements, the most a "
                f"HIT type takes ({MAX_REQUIREMENTS}): its redo cannot keep out the workers who saw "
                "its pictures.",
            )
        requirements.append(
            {
                "QualificationTypeId": qualification_id,
                "Comparator": "DoesNotExist",
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        )
    for worker_id in sorted({w for rule in exclude for w in rule["workers"]}):
        market.associate_qualification(qualification_id, worker_id, 1)
    params = {k: hit[k] for k in _TYPE_FIELDS if hit.get(k) not in (None, "")}
    hit_type_id = market.create_hit_type(
        reward=Decimal(str(hit["Reward"])), QualificationRequirements=requirements, **params
    )
    if hit_type_id != hit.get("HITTypeId"):
        market.update_hit_type_of_hit(hit_id, hit_type_id)
    return hit_type_id
