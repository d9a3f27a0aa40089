"""Who a HIT page's assignment belongs to: checked, never taken from the query string on trust.

The marketplace frames an accepted assignment's page with ``assignmentId,
hitId, workerId, turkSubmitTo``, and ``turkSubmitTo`` is ``<marketplace>/s/<capability>``,
an HMAC of exactly that assignment, worker and HIT made with the marketplace's
secret (``server.capabilities.submit_capability``). This server's HIT pages
run in the same app as its marketplace, so they can check that HMAC without a
call: only the worker the marketplace framed the page for gets it, and answers
are relayed only to that ``turkSubmitTo``, the marketplace's own. A preview
(``ASSIGNMENT_ID_NOT_AVAILABLE``) shows the HIT as every assignment of it sees
it, gold included, indistinguishable; it needs the ``hitforgePreview``
capability the worker site adds to a preview frame, which it gives only to
workers the HIT's qualification requirements let preview.

When the requester side publishes to a marketplace elsewhere
(``HITFORGE_MTURK_ENDPOINT_URL`` on another host), whose secret this server
does not hold, an assignment is checked through the API instead: its
``GetAssignment`` must name the same worker and HIT, and ``turkSubmitTo`` must
be on that marketplace's host. Such a marketplace adds no preview capability,
so its previews are open, as MTurk's were.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import select

from hits.market.models import HIT, AccessKey
from hits.requester.mturk import Marketplace, MarketplaceError
from server.capabilities import submit_capability
from server.db import market_session, runtime

NOT_AVAILABLE = "ASSIGNMENT_ID_NOT_AVAILABLE"
REFUSED = (
    "This page belongs to an assignment the marketplace gave to someone else, or its link is "
    "incomplete. Open the HIT from the worker site."
)


class AccessRefused(Exception):
    """The parameters do not name an assignment the marketplace framed this page for."""


@dataclass(frozen=True)
class PageAccess:
    """A checked request for a HIT page: a preview (no assignment) or one worker's assignment."""

    hit_id: str
    assignment_id: str | None = None
    worker_id: str = ""
    turk_submit_to: str = ""

    @property
    def preview(self) -> bool:
        return self.assignment_id is None


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _marketplace_elsewhere() -> bool:
    settings = runtime().settings
    return _origin(settings.mturk_endpoint_url) != _origin(settings.public_url)


def page_access(params: Mapping[str, str]) -> PageAccess:
    """Check MTurk's page parameters; raise :class:`AccessRefused` unless they are the marketplace's."""
    hit_id = params.get("hitId", "")
    assignment_id = params.get("assignmentId", "") or NOT_AVAILABLE
    if not hit_id:
        raise AccessRefused(REFUSED)
    if assignment_id == NOT_AVAILABLE:
        # The worker site frames a preview only for workers who may preview the HIT
        # (ActionsGuarded); its link carries a capability a bare HIT id does not.
        expected = submit_capability(NOT_AVAILABLE, "", hit_id)
        given = params.get("hitforgePreview", "")
        if not (_marketplace_elsewhere() or hmac.compare_digest(given.encode(), expected.encode())):
            raise AccessRefused(REFUSED)
        return PageAccess(hit_id)
    worker_id, turk_submit_to = params.get("workerId", ""), params.get("turkSubmitTo", "")
    if not worker_id:
        raise AccessRefused(REFUSED)
    if _marketplace_elsewhere():
        return _checked_through_api(hit_id, assignment_id, worker_id, turk_submit_to)
    prefix = runtime().settings.public_url.rstrip("/") + "/s/"
    capability = turk_submit_to.removeprefix(prefix) if turk_submit_to.startswith(prefix) else ""
    expected = submit_capability(assignment_id, worker_id, hit_id)
    if not hmac.compare_digest(capability.encode(), expected.encode()):
        raise AccessRefused(REFUSED)
    return PageAccess(hit_id, assignment_id, worker_id, prefix + capability)


def _checked_through_api(hit_id: str, assignment_id: str, worker_id: str, turk_submit_to: str) -> PageAccess:
    """Ask the marketplace whose assignment this is; relay only to that marketplace's host."""
    settings = runtime().settings
    if _origin(turk_submit_to) != _origin(settings.mturk_endpoint_url) or urlsplit(turk_submit_to).query:
        raise AccessRefused(REFUSED)
    if not settings.mturk_access_key_id:  # nothing to ask the marketplace with: nothing is trusted
        raise AccessRefused(REFUSED)
    try:
        assignment = Marketplace.from_settings(settings).get_assignment(assignment_id)
    except MarketplaceError as exc:  # no such assignment (or not this requester's), or unreachable
        raise AccessRefused(REFUSED) from exc
    if (assignment.get("WorkerId"), assignment.get("HITId")) != (worker_id, hit_id):
        raise AccessRefused(REFUSED)
    return PageAccess(hit_id, assignment_id, worker_id, turk_submit_to.rstrip("/"))


def hit_created_as(hit_id: str, unique_request_token: str, access_key_id: str | None) -> bool:
    """Whether HIT ``hit_id`` is the one ``access_key_id``'s requester created with this request token.

    Asked for a HIT page opened before the requester side has recorded the
    HIT's id (``hits.requester.pages.urls``): the page token names the
    row, and only the HIT made for that row may show it or store answers for it.
    """
    if not access_key_id:
        return False
    if _marketplace_elsewhere():
        settings = runtime().settings
        if settings.mturk_access_key_id != access_key_id:
            return False  # another requester's credentials could not see the HIT anyway
        try:
            listed = Marketplace.from_settings(settings).get_hit(hit_id)
        except MarketplaceError:
            return False
        # GetHIT answers only the requester's own HITs; the publisher sets the annotation to the token.
        return listed.get("RequesterAnnotation") == unique_request_token
    session = market_session()
    owner = session.scalar(select(AccessKey.requester_id).where(AccessKey.access_key_id == access_key_id))
    hit = session.get(HIT, hit_id)
    return (
        owner is not None
        and hit is not None
        and hit.requester_id == owner
        and hit.unique_request_token == unique_request_token
    )
