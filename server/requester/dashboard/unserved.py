"""Open HITs made through the API whose pages load URLs this site does not serve.

CreateHIT's reply has no room for a warning, so a requester whose boto3 script
made such a HIT learns it here (and from the server log and ``hitforge batch
check --hit``): the dashboard lists them per HIT type, as a batch's are listed
under its campaign. Read from this installation's marketplace; HITs published
to a marketplace elsewhere are not seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from hits.db import utcnow
from hits.market.errors import RequestError
from hits.market.models import HIT, AccessKey
from hits.market.questions import parse_question
from hits.requester.tables.campaigns import StaffUser
from server.db import market_session

#: The newest open HTMLQuestion HITs looked at per page view (each page is parsed).
LOOKED_AT = 200


@dataclass
class UnservedHITType:
    """A HIT type with open HITs whose pages load URLs that are not served."""

    hit_type_id: str
    title: str
    hit_ids: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)


def unserved_api_hits(staff: StaffUser) -> list[UnservedHITType]:
    """For an admin, every requester's; for a requester user, its account's; else none.

    A QA reviewer is shown none: it sees campaigns, not an account's other HITs.
    """
    from server.cdn import unserved_urls

    session = market_session()
    query = select(HIT).where(HIT.expires_at > utcnow(), HIT.question.contains("HTMLQuestion"))
    if staff.role == "requester" and staff.access_key_id:
        owner = select(AccessKey.requester_id).where(AccessKey.access_key_id == staff.access_key_id)
        query = query.where(HIT.requester_id.in_(owner.scalar_subquery()))
    elif staff.role != "admin":
        return []
    found: dict[str, UnservedHITType] = {}
    for hit in session.scalars(query.order_by(HIT.created_at.desc()).limit(LOOKED_AT)):
        try:
            html = parse_question(hit.question).html or ""
        except RequestError:
            continue  # stored before a rule tightened: nothing to report on
        urls = unserved_urls(html)
        if not urls:
            continue
        entry = found.setdefault(hit.hit_type_id, UnservedHITType(hit.hit_type_id, hit.hit_type.title))
        entry.hit_ids.append(hit.id)
        entry.urls.extend(u for u in urls if u not in entry.urls)
    return list(found.values())
