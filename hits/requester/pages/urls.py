"""A HIT page URL: a random token that lets the page find its HIT row before the HIT id is recorded.

Every HIT the requester side publishes with an ExternalQuestion (a campaign's
HITs, a workflow's rounds) is created through the API and its id recorded on
its ``PublishedHIT`` row right after CreateHIT returns; a worker can open the
HIT in between (many workers polling the HIT list make that likely while a
campaign publishes). So the ExternalQuestion URL carries the row's
``page_token`` (random hex, unique): the page finds the row by it, whether or
not the id is recorded yet.

The token names nothing a worker could use (not the campaign, the row, the
round nor whether the HIT holds gold: every HIT's URL is the same page with
a fresh random token), and it grants nothing by itself: the page still needs
the marketplace's capability for an assignment of *that* HIT
(``server/requester/hit_pages/access.py``), and a row whose id is not recorded yet is
served only for a HIT the marketplace says the campaign's requester created
with the row's UniqueRequestToken (``PublishedHIT.unique_request_token``).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Campaign, PublishedHIT

#: The query parameter of a HIT's page URL (and the page's hidden field) carrying the token.
PAGE_PARAM = "page"


def question_url(page_url: str, token: str | None) -> str:
    """The ExternalQuestion URL of a HIT row: the HIT page with the row's token (rows from before: none)."""
    if not token:
        return page_url
    return page_url + ("&" if "?" in page_url else "?") + urlencode({PAGE_PARAM: token})


@dataclass(frozen=True)
class TokenPage:
    """The HIT row a page token names, and what proves a marketplace HIT is that row's."""

    published: PublishedHIT
    #: The access key the campaign publishes with (whose requester owns the HIT). Recorded
    #: before its first HIT is created, so it is known while that HIT's id is not.
    access_key_id: str | None


def page_by_token(session: Session, token: str) -> TokenPage | None:
    """The HIT row ``token`` names, or None."""
    if not token:
        return None
    found = session.execute(
        select(PublishedHIT, Campaign.access_key_id)
        .join(Campaign, Campaign.id == PublishedHIT.campaign_id)
        .where(PublishedHIT.page_token == token)
    ).first()
    if found is None:
        return None
    published, access_key_id = found
    return TokenPage(published, access_key_id)
