"""A round's HIT page URL: a random token that lets the page find its round before the HIT id is recorded.

A round's HIT is created through the API and its id recorded on the
requester side right after CreateHIT returns; a worker can open the HIT in
between. So the ExternalQuestion URL carries the round's ``page_token``
(random hex, unique): the page finds the round's HIT row by it, whether or
not the id is recorded yet. The token names nothing a worker could use (not
the round, the attempt, the picture nor where the text came from), and it
grants nothing by itself: the page still needs the marketplace's capability
for an assignment of *that* HIT (``server/hit_pages/access.py``), and a row
whose id is not recorded yet is served only for a HIT the marketplace says
this workflow's requester created with the row's UniqueRequestToken
(``PublishedHIT.unique_request_token``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlencode

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.campaigns.models import PublishedHIT
from hits.workflows.models import Chain, ChainRound, Workflow, WorkflowStage

#: The query parameter of a round's page URL (and the page's hidden field) carrying the token.
PAGE_PARAM = "page"


def new_page_token() -> str:
    """A fresh token: 128 random bits in hex (no letters that could spell a word next to '-')."""
    return secrets.token_hex(16)


def round_page_url(hit_page_url: str, token: str | None) -> str:
    """The ExternalQuestion URL of a round: the HIT page with the round's token (rows from before, none)."""
    if not token:
        return hit_page_url
    return hit_page_url + ("&" if "?" in hit_page_url else "?") + urlencode({PAGE_PARAM: token})


@dataclass(frozen=True)
class RoundPage:
    """The HIT row a page token names, and what proves a marketplace HIT is that row's."""

    published: PublishedHIT
    #: The access key the workflow publishes with (whose requester owns the HIT).
    access_key_id: str | None


def round_page(session: Session, token: str) -> RoundPage | None:
    """The round HIT row ``token`` names, or None."""
    if not token:
        return None
    found = session.execute(
        select(PublishedHIT, Workflow.access_key_id)
        .join(ChainRound, ChainRound.published_hit_id == PublishedHIT.id)
        .join(Chain, Chain.id == ChainRound.chain_id)
        .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
        .join(Workflow, Workflow.id == WorkflowStage.workflow_id)
        .where(ChainRound.page_token == token)
    ).first()
    if found is None:
        return None
    published, access_key_id = found
    return RoundPage(published, access_key_id)
