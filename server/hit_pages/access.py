"""Who a HIT page's assignment belongs to: checked, never taken from the query string on trust.

The marketplace frames an accepted assignment's page with ``assignmentId,
hitId, workerId, turkSubmitTo``, and ``turkSubmitTo`` is ``<marketplace>/s/<capability>``,
an HMAC of exactly that assignment, worker and HIT made with the marketplace's
secret (``server.worker_site.work.submit_capability``). This server's HIT pages
run in the same app as its marketplace, so they can check that HMAC without a
call: only the worker the marketplace framed the page for gets it, and answers
are relayed only to that ``turkSubmitTo``, the marketplace's own. A preview
(``ASSIGNMENT_ID_NOT_AVAILABLE``) shows the HIT as every assignment of it sees
it, gold included, indistinguishable; it needs the ``hitforgePreview``
capability the worker site adds to a preview frame, which it gives only to
workers the HIT's qualification requirements let preview.

A marketplace elsewhere signs with a secret this server does not hold, so its
assignments' pages are refused rather than served unchecked.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass

from server.db import runtime
from server.worker_site.work import submit_capability

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


def page_access(params: Mapping[str, str]) -> PageAccess:
    """Check MTurk's page parameters; raise :class:`AccessRefused` unless they are the marketplace's."""
    hit_id = params.get("hitId", "")
    assignment_id = params.get("assignmentId", "") or NOT_AVAILABLE
    if assignment_id == NOT_AVAILABLE:
        # The worker site frames a preview only for workers who may preview the HIT
        # (ActionsGuarded); its link carries a capability a bare HIT id does not.
        expected = submit_capability(NOT_AVAILABLE, "", hit_id)
        if not (
            hit_id and hmac.compare_digest(params.get("hitforgePreview", "").encode(), expected.encode())
        ):
            raise AccessRefused(REFUSED)
        return PageAccess(hit_id)
    worker_id, turk_submit_to = params.get("workerId", ""), params.get("turkSubmitTo", "")
    prefix = runtime().settings.public_url.rstrip("/") + "/s/"
    capability = turk_submit_to.removeprefix(prefix) if turk_submit_to.startswith(prefix) else ""
    expected = submit_capability(assignment_id, worker_id, hit_id)
    if not (worker_id and hit_id and hmac.compare_digest(capability.encode(), expected.encode())):
        raise AccessRefused(REFUSED)
    return PageAccess(hit_id, assignment_id, worker_id, prefix + capability)
