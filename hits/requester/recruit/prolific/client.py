"""The Prolific researcher API, as hitforge uses it (requests; ``Authorization: Token <token>``).

One dispatcher (:meth:`ProlificClient.call`) owns the token, retries and
errors; each operation is a few lines over it. The same code talks to the
real API and to the stand-in (``standin.py``): only the base URL differs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from hits.requester.recruit.base import (
    BonusSetUp,
    PlaceSubmission,
    RecruitAuthError,
    RecruitError,
    RecruitOutcomeUnknown,
    RecruitRefused,
    RecruitUnavailable,
    Study,
    StudyDraft,
)
from hits.requester.recruit.prolific import wire

#: Statuses worth another try: throttling and the service's own faults.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Statuses that say the request was not carried out (throttled; "unable to handle" it, RFC 9110):
#: the only ones a call that is not idempotent is retried on, or reported as not done.
NOT_CARRIED_OUT = frozenset({429, 503})


class ProlificClient:
    """A Prolific API client for one token (the token is kept out of every message and repr)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        retries: int = 4,
        backoff: float = 0.5,
        timeout: float = 30.0,
        http: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not token:
            raise RecruitAuthError(0, "no Prolific token: set HITFORGE_PROLIFIC_TOKEN")
        self.base_url = base_url.rstrip("/") + "/"
        self._token = token
        self.retries, self.backoff, self.timeout = retries, backoff, timeout
        self._http = http or requests.Session()
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"ProlificClient({self.base_url!r})"

    @classmethod
    def from_settings(cls, settings: Any) -> ProlificClient:
        """A client with ``HITFORGE_PROLIFIC_TOKEN`` and ``HITFORGE_PROLIFIC_API_URL``."""
        return cls(settings.prolific_api_url, settings.prolific_token)

    # -- the dispatcher ---------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        idempotent: bool = True,
    ) -> Any:
        """One API call (``path`` relative to the base URL, or a link the API gave); its JSON reply.

        Retries throttling (429), faults (5xx) and lost connections with
        exponential backoff, honouring ``Retry-After``; a refusal raises
        ``RecruitRefused``, a bad token ``RecruitAuthError``. A call that is
        not ``idempotent`` is retried only when it was certainly not carried
        out (429, 503, a connection never made); any other fault or lost
        answer raises ``RecruitOutcomeUnknown`` at once.
        """
        url = path if path.startswith(("http://", "https://")) else urljoin(self.base_url, path.lstrip("/"))
        if not _same_origin(url, self.base_url):
            # A link to another host must never receive the token.
            raise RecruitRefused(0, f"refusing to follow a link outside {self.base_url}: {url}")
        headers = {"Authorization": f"Token {self._token}", "Accept": "application/json"}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                reply = self._http.request(
                    method, url, json=json, params=params, headers=headers, timeout=self.timeout
                )
            except requests.RequestException as exc:
                if not idempotent and not isinstance(exc, requests.ConnectTimeout):
                    # The request may have reached Prolific: carried out or not, nobody knows.
                    raise RecruitOutcomeUnknown(0, f"{method} {_path(url)}: {type(exc).__name__}") from None
                if last:
                    raise RecruitUnavailable(0, f"{method} {_path(url)}: {type(exc).__name__}") from None
                self._sleep(self.backoff * 2**attempt)
                continue
            if not idempotent and reply.status_code >= 500 and reply.status_code not in NOT_CARRIED_OUT:
                raise RecruitOutcomeUnknown(reply.status_code, f"{method} {_path(url)}: {_detail(reply)}")
            retry = RETRY_STATUSES if idempotent else NOT_CARRIED_OUT
            if reply.status_code in retry and not last:
                self._sleep(_retry_after(reply) or self.backoff * 2**attempt)
                continue
            return _reply(method, url, reply)
        raise AssertionError("unreachable")  # pragma: no cover

    def pages(self, path: str, params: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Every result of a paged list: follows ``_links.next`` until there is none."""
        reply = self.call("GET", path, params=params)
        while True:
            yield from reply.get("results", [])
            following = (reply.get("_links") or {}).get("next") or {}
            href = following.get("href") if isinstance(following, dict) else following
            if not href:
                return
            reply = self.call("GET", href)

    # -- studies ----------------------------------------------------------------------------------

    def create_study(self, draft: StudyDraft) -> Study:
        """Create a draft study (UNPUBLISHED). Not idempotent: callers find it first by internal name."""
        return wire.study_of(self.call("POST", "studies/", json=wire.study_body(draft)))

    def find_study(self, internal_name: str) -> Study | None:
        """The study carrying ``internal_name``, if any (every page of the researcher's studies)."""
        for reply in self.pages("studies/"):
            if reply.get("internal_name") == internal_name:
                return wire.study_of(reply)
        return None

    def get_study(self, study_id: str) -> Study:
        """One study as it stands."""
        return wire.study_of(self.call("GET", f"studies/{study_id}/"))

    def study_cost(self, reward: int, places: int) -> Decimal:
        """What a study of ``places`` at ``reward`` (cents or pence) costs, Prolific's fees and VAT
        included, in the workspace's currency (``POST /study-cost-calculator/``; it only computes)."""
        reply = self.call(
            "POST", "study-cost-calculator/", json={"reward": reward, "total_available_places": places}
        )
        total = wire.major_units(reply.get("total_cost"))
        if total is None or total < 0:
            raise RecruitError(502, f"Prolific's study cost answer has no total_cost: {reply!r}")
        return total

    def transition_study(self, study_id: str, action: str) -> Study:
        """PUBLISH, PAUSE, START or STOP."""
        if action not in wire.STUDY_ACTIONS:
            raise ValueError(f"unknown study action {action!r}")
        return wire.study_of(self.call("POST", f"studies/{study_id}/transition/", json={"action": action}))

    # -- submissions ------------------------------------------------------------------------------

    def submissions(self, study_id: str) -> list[PlaceSubmission]:
        """Every submission of a study: all pages (20 to a page by default)."""
        return [wire.submission_of(s) for s in self.pages("submissions/", {"study": study_id})]

    def get_submission(self, submission_id: str) -> PlaceSubmission:
        """One submission as it stands."""
        return wire.submission_of(self.call("GET", f"submissions/{submission_id}/"))

    def approve(self, submission_id: str) -> PlaceSubmission:
        """APPROVE one submission (Prolific pays the reward)."""
        return self._transition(submission_id, {"action": "APPROVE"})

    def reject(self, submission_id: str, category: str, message: str) -> PlaceSubmission:
        """REJECT one submission; the message (100 characters or more) goes to the participant."""
        if category not in wire.REJECTION_CATEGORIES:
            raise ValueError(f"unknown rejection category {category!r}")
        if len(message) < wire.MIN_REJECT_MESSAGE:
            # Checked here too: a message Prolific would refuse is never sent.
            raise ValueError(f"a rejection message needs {wire.MIN_REJECT_MESSAGE} characters or more")
        return self._transition(
            submission_id, {"action": "REJECT", "rejection_category": category, "message": message}
        )

    def pay_in_part(self, submission_id: str, code: str, percentage: int, message: str) -> PlaceSubmission:
        """COMPLETE a place with the study's DYNAMIC_PAYMENT code: Prolific pays ``percentage`` of the
        reward (8 to 99) and the place ends PARTIALLY APPROVED. Idempotent, as every transition."""
        if percentage not in wire.PARTIAL_PERCENT:
            raise ValueError(f"a partial payment is 8 to 99 percent of the reward, not {percentage}")
        data: dict[str, Any] = {"percentage_of_reward": percentage}
        if message:
            data["message_to_participant"] = message
        return self._transition(
            submission_id, {"action": "COMPLETE", "completion_code": code, "completion_code_data": data}
        )

    def complete(self, submission_id: str, code: str) -> PlaceSubmission:
        """COMPLETE a submission with a researcher's completion code."""
        return self._transition(submission_id, {"action": "COMPLETE", "completion_code": code})

    def _transition(self, submission_id: str, body: dict[str, Any]) -> PlaceSubmission:
        reply = self.call("POST", f"submissions/{submission_id}/transition/", json=body)
        return wire.submission_of({"id": submission_id, **reply})

    def entry_url(self, base: str) -> str:
        """``base`` with ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` placeholders as URL parameters."""
        return wire.entry_url(base)

    def completion_url(self, code: str) -> str:
        """Prolific's completion redirect with ``code``."""
        return wire.completion_url(code)

    # -- bonuses, groups, messages, webhooks ------------------------------------------------------

    def set_up_bonuses(self, study_id: str, amounts: dict[str, str]) -> BonusSetUp:
        """Set up bonuses (participant id -> amount in the study's currency); the id to pay them by.

        Prolific's answer (``BulkBonus``) says what paying will take from the
        balance, fees and VAT included (``total_amount``, in cents or pence).
        """
        csv = "\n".join(f"{pid},{amount}" for pid, amount in amounts.items())
        reply = self.call(
            "POST", "submissions/bonus-payments/", json={"study_id": study_id, "csv_bonuses": csv}
        )
        return BonusSetUp(str(reply["id"]), wire.major_units(reply.get("total_amount")))

    def pay_bonuses(self, bonus_id: str) -> None:
        """Pay bonuses set up before. NOT idempotent: a second call pays again (callers record it once).

        Raises ``RecruitOutcomeUnknown`` when the call may have paid (a fault
        other than 503, a lost answer): it must not be made again.
        """
        self.call("POST", f"bulk-bonus-payments/{bonus_id}/pay/", idempotent=False)

    def create_participant_group(self, name: str, workspace_id: str | None = None) -> str:
        """A new participant group; its id."""
        body = {"name": name, **({"workspace_id": workspace_id} if workspace_id else {})}
        return str(self.call("POST", "participant-groups/", json=body)["id"])

    def add_to_group(self, group_id: str, participant_ids: list[str]) -> None:
        """Add participants to a group (adding a member again is harmless)."""
        self.call(
            "POST", f"participant-groups/{group_id}/participants/", json={"participant_ids": participant_ids}
        )

    def remove_from_group(self, group_id: str, participant_ids: list[str]) -> None:
        """Remove participants from a group (removing a non-member is harmless)."""
        self.call(
            "DELETE",
            f"participant-groups/{group_id}/participants/",
            json={"participant_ids": participant_ids},
        )

    def send_message(self, participant_id: str, study_id: str, body: str) -> None:
        """A message to one participant about a study (not idempotent: a second call sends it again)."""
        self.call(
            "POST",
            "messages/",
            json={"recipient_id": participant_id, "study_id": study_id, "body": body},
            idempotent=False,
        )

    def find_group(self, name: str) -> str | None:
        """The id of the researcher's participant group named ``name``, if one exists."""
        for group in self.pages("participant-groups/"):
            if group.get("name") == name:
                return str(group["id"])
        return None

    def new_hook_secret(self, workspace_id: str | None = None) -> str:
        """A new webhook signing secret (replacing any earlier one)."""
        body = {"workspace_id": workspace_id} if workspace_id else {}
        return str(self.call("POST", "hooks/secrets/", json=body)["value"])

    def subscribe(self, event_type: str, target_url: str, workspace_id: str | None = None) -> str:
        """Subscribe ``target_url`` to an event type; the subscription's id."""
        body = {"event_type": event_type, "target_url": target_url}
        if workspace_id:
            body["workspace_id"] = workspace_id
        return str(self.call("POST", "hooks/subscriptions/", json=body)["id"])


def _same_origin(url: str, base: str) -> bool:
    a, b = urlsplit(url), urlsplit(base)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def _path(url: str) -> str:
    return urlsplit(url).path


def _retry_after(reply: requests.Response) -> float | None:
    raw = reply.headers.get("Retry-After", "")
    try:
        return min(float(raw), 60.0) if raw else None
    except ValueError:
        return None


def _reply(method: str, url: str, reply: requests.Response) -> Any:
    """The JSON of a successful reply; the error a failed one means (its detail, never our headers)."""
    if reply.status_code < 400:
        return reply.json() if reply.content else {}
    detail = _detail(reply)
    where = f"{method} {_path(url)}"
    if reply.status_code in (401, 403):
        raise RecruitAuthError(reply.status_code, f"{where}: Prolific refused the token ({detail})")
    if reply.status_code in RETRY_STATUSES:
        raise RecruitUnavailable(reply.status_code, f"{where}: {detail}")
    if reply.status_code < 500:
        raise RecruitRefused(reply.status_code, f"{where}: {detail}")
    raise RecruitError(reply.status_code, f"{where}: {detail}")


def _detail(reply: requests.Response) -> str:
    try:
        body = reply.json()
    except ValueError:
        return reply.text[:300]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        return str(error.get("detail") or error.get("title") or error)[:300]
    return str(error)[:300]
