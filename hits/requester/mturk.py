"""The one boto3 facade the requester side uses to talk to a marketplace.

It paginates with NextToken (botocore's paginators), maps error *codes* (the
``TurkErrorCode`` members, never message text) to domain exceptions, and
takes every ``UniqueRequestToken`` from its caller, who derives it from a
database row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from hits import shared_limits
from hits.money import format_amount
from hits.settings import Settings
from hits.wire.authenticity import API_MEMBER

#: MTurk's largest page: every list the requester side reads asks for it.
PAGE_SIZE = 100


class MarketplaceError(Exception):
    """An error the marketplace reported; ``code`` is its TurkErrorCode or error type."""

    retryable = False

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        # Celery ships task exceptions between processes: keep them picklable.
        return (type(self), (self.code, self.message))


class HITAlreadyExists(MarketplaceError):
    """The UniqueRequestToken was used already: the HIT exists."""


class QualificationTypeAlreadyExists(MarketplaceError):
    """A qualification type of that name already belongs to this requester."""


class DuplicateRequest(MarketplaceError):
    """The UniqueRequestToken was processed already (within MTurk's 24 hours): the call took effect."""


class InvalidAssignmentState(MarketplaceError):
    """The assignment is not in a state that allows the call (e.g. already approved)."""


class InvalidHITState(MarketplaceError):
    """The HIT is not in a state that allows the call (e.g. it is being worked on again)."""


class NotFound(MarketplaceError):
    """The HIT, assignment or qualification does not exist."""


class InsufficientFunds(MarketplaceError):
    """The requester's balance cannot cover the charge."""


class Throttled(MarketplaceError):
    """Rate exceeded; retry with backoff."""

    retryable = True


class ServiceUnavailable(MarketplaceError):
    """A ServiceFault or a 5xx; retry with backoff."""

    retryable = True


_BY_TURK_CODE: dict[str, type[MarketplaceError]] = {
    "AWS.MechanicalTurk.HitAlreadyExists": HITAlreadyExists,
    "AWS.MechanicalTurk.InvalidAssignmentState": InvalidAssignmentState,
    "AWS.MechanicalTurk.DuplicateRequest": DuplicateRequest,
    "AWS.MechanicalTurk.QualificationTypeAlreadyExists": QualificationTypeAlreadyExists,
    "AWS.MechanicalTurk.InvalidHITState": InvalidHITState,
    "AWS.MechanicalTurk.AssignmentDoesNotExist": NotFound,
    "AWS.MechanicalTurk.HITDoesNotExist": NotFound,
    "AWS.MechanicalTurk.QualificationTypeDoesNotExist": NotFound,
    "AWS.MechanicalTurk.InsufficientFunds": InsufficientFunds,
}
_BY_ERROR_CODE: dict[str, type[MarketplaceError]] = {
    "ThrottlingException": Throttled,
    "ServiceFault": ServiceUnavailable,
}


def translate(exc: ClientError) -> MarketplaceError:
    """The domain exception for a botocore ``ClientError``, chosen by code."""
    response: dict[str, Any] = exc.response  # type: ignore[assignment]
    error = response.get("Error", {})
    code = error.get("Code", "Unknown")
    turk_code = response.get("TurkErrorCode")
    message = error.get("Message", "")
    if turk_code in _BY_TURK_CODE:
        return _BY_TURK_CODE[turk_code](turk_code, message)
    if code in _BY_ERROR_CODE:
        return _BY_ERROR_CODE[code](code, message)
    if response.get("ResponseMetadata", {}).get("HTTPStatusCode", 400) >= 500:
        return ServiceUnavailable(code, message)
    return MarketplaceError(turk_code or code, message)


#: The marketplace could not be reached, or did not answer in time: worth a retry with backoff.
#: (A call that timed out may have been carried out: callers' retries must be idempotent.)
_UNREACHABLE = (EndpointConnectionError, ConnectionClosedError, ReadTimeoutError)


def _keep_typing_records(http_response: Any = None, parsed: Any = None, **_: Any) -> None:
    """Copy hitforge's own Assignment member (a page's typing record) from the raw reply into boto3's.

    boto3 parses replies by MTurk's model and drops members it does not know;
    hitforge's marketplace sends the record as one (``API_MEMBER``), so the
    answers themselves stay exactly what MTurk would store.
    """
    if not isinstance(parsed, dict):
        return
    try:
        raw = json.loads(http_response.content)
    except (AttributeError, TypeError, ValueError):
        return
    if not isinstance(raw, dict):
        return
    raws = raw.get("Assignments") if "Assignments" in raw else [raw.get("Assignment")]
    records = {
        a.get("AssignmentId"): a[API_MEMBER]
        for a in raws or []
        if isinstance(a, dict) and isinstance(a.get(API_MEMBER), str)
    }
    for assignment in parsed.get("Assignments") or [parsed.get("Assignment")]:
        if isinstance(assignment, dict) and assignment.get("AssignmentId") in records:
            assignment[API_MEMBER] = records[assignment["AssignmentId"]]


@dataclass(frozen=True)
class Pacing:
    """At most ``rate`` calls a second with one access key, counted in buckets every process shares.

    The marketplace throttles a requester that calls too fast (MTurk does, and so
    can hitforge's); pacing keeps the requester side under that, across all its
    workers and hosts at once (``hits/shared_limits.py``), by waiting rather than
    failing.
    """

    buckets: shared_limits.Buckets
    key: str
    rate: float

    def wait(self) -> float:
        """Wait until the next call may go out; the seconds waited."""
        return shared_limits.wait_for_token(self.buckets, self.key, self.rate)


class Marketplace:
    """A requester's view of one MTurk-compatible marketplace."""

    def __init__(self, client: Any, access_key_id: str = "", pacing: Pacing | None = None):
        self.client = client
        #: How fast calls go out (None: as fast as they are made).
        self.pacing = pacing
        events = getattr(getattr(client, "meta", None), "events", None)
        if events is not None:
            for operation in ("ListAssignmentsForHIT", "GetAssignment"):
                events.register(f"after-call.mturk.{operation}", _keep_typing_records)
        #: The access key this facade signs with (never the secret): campaigns record it.
        self.access_key_id = access_key_id

    @classmethod
    def connect(
        cls, endpoint_url: str, access_key_id: str, secret_access_key: str, region: str = "us-east-1"
    ) -> Marketplace:
        """A facade over a boto3 ``mturk`` client for ``endpoint_url``."""
        client = boto3.client(
            "mturk",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            # Retries are the caller's business (the outbox backs off itself).
            config=Config(
                retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=10, read_timeout=60
            ),
        )
        return cls(client, access_key_id)

    @classmethod
    def from_settings(cls, settings: Settings) -> Marketplace:
        if not settings.mturk_access_key_id:
            raise RuntimeError(
                "HITFORGE_MTURK_ACCESS_KEY_ID and HITFORGE_MTURK_SECRET_ACCESS_KEY are not set"
            )
        market = cls.connect(
            settings.mturk_endpoint_url,
            settings.mturk_access_key_id,
            settings.mturk_secret_access_key,
            settings.mturk_region,
        )
        if settings.mturk_call_rate:
            market.pacing = Pacing(
                shared_limits.buckets_for(settings),
                f"mturk-calls:{settings.mturk_access_key_id}",
                settings.mturk_call_rate,
            )
        return market

    def _pace(self) -> None:
        if self.pacing is not None:
            self.pacing.wait()

    def _call(self, name: str, **params: Any) -> dict[str, Any]:
        self._pace()
        try:
            result: dict[str, Any] = getattr(self.client, name)(**params)
            return result
        except ClientError as exc:
            raise translate(exc) from exc
        except _UNREACHABLE as exc:
            raise ServiceUnavailable("Unreachable", str(exc)) from exc

    def _pages(self, name: str, key: str, **params: Any) -> Iterator[list[dict[str, Any]]]:
        """The ``key`` list of each page of ``name``, following NextToken.

        With ``MaxResults``, a page shorter than that is the last: MTurk (and
        hitforge, which pages by key) puts a NextToken on every page with rows,
        a short last one too, and the empty page it leads to would cost a call
        of its own (a third of the sync's calls, at three assignments a HIT).
        """
        size = params.get("MaxResults")
        try:
            pages = iter(self.client.get_paginator(name).paginate(**params))
            while True:
                self._pace()  # each page is a call of its own
                page = next(pages, None)
                if page is None:
                    return
                items = list(page.get(key, []))
                yield items
                if size is not None and len(items) < size:
                    return
        except ClientError as exc:
            raise translate(exc) from exc
        except _UNREACHABLE as exc:
            raise ServiceUnavailable("Unreachable", str(exc)) from exc

    def _paginate(self, name: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
        for page in self._pages(name, key, **params):
            yield from page

    # -- HITs ---------------------------------------------------------------
    def create_hit(self, *, unique_request_token: str, reward: Decimal, **params: Any) -> dict[str, Any]:
        """CreateHIT; ``unique_request_token`` makes a retried call harmless."""
        result = self._call(
            "create_hit", UniqueRequestToken=unique_request_token, Reward=format_amount(reward), **params
        )
        return dict(result["HIT"])

    def create_hit_once(
        self, *, unique_request_token: str, reward: Decimal, **params: Any
    ) -> tuple[dict[str, Any], bool]:
        """CreateHIT annotated with its token, or the HIT an earlier call with that token made.

        The HIT and whether this call created it. A publish retried after a
        crash between CreateHIT and recording its id finds that HIT by its
        RequesterAnnotation (the token) instead of making a second one.
        """
        try:
            hit = self.create_hit(
                unique_request_token=unique_request_token,
                reward=reward,
                RequesterAnnotation=unique_request_token,
                **params,
            )
        except HITAlreadyExists:
            found = self.find_hit_by_annotation(unique_request_token)
            if found is None:
                raise
            return found, False
        return hit, True

    def create_hit_type(self, *, reward: Decimal, **params: Any) -> str:
        """CreateHITType; the marketplace returns the same id for the same properties."""
        return str(self._call("create_hit_type", Reward=format_amount(reward), **params)["HITTypeId"])

    def create_hit_with_hit_type(self, *, unique_request_token: str, **params: Any) -> dict[str, Any]:
        """CreateHITWithHITType; ``unique_request_token`` makes a retried call harmless."""
        result = self._call("create_hit_with_hit_type", UniqueRequestToken=unique_request_token, **params)
        return dict(result["HIT"])

    def find_hit_by_annotation(self, annotation: str) -> dict[str, Any] | None:
        """The requester's HIT whose RequesterAnnotation is ``annotation``, if any."""
        for hit in self._paginate("list_hits", "HITs", MaxResults=PAGE_SIZE):
            if hit.get("RequesterAnnotation") == annotation:
                return dict(hit)
        return None

    def reviewable_hits(self, hit_type_id: str) -> Iterator[dict[str, Any]]:
        """ListReviewableHITs of one HIT type (all paged in)."""
        for page in self.reviewable_hit_pages(hit_type_id):
            yield from page

    def reviewable_hit_pages(
        self, hit_type_id: str, page_size: int = PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """ListReviewableHITs of one HIT type, a page (``page_size`` HITs at most) at a time."""
        return self._pages(
            "list_reviewable_hits", "HITs", HITTypeId=hit_type_id, Status="Reviewable", MaxResults=page_size
        )

    def all_reviewable_hit_pages(self, page_size: int = PAGE_SIZE) -> Iterator[list[dict[str, Any]]]:
        """ListReviewableHITs of every HIT type of this requester, a page at a time."""
        return self._pages("list_reviewable_hits", "HITs", Status="Reviewable", MaxResults=page_size)

    def get_hit(self, hit_id: str) -> dict[str, Any]:
        return dict(self._call("get_hit", HITId=hit_id)["HIT"])

    def assignments_for_hit(self, hit_id: str, statuses: list[str]) -> Iterator[dict[str, Any]]:
        """ListAssignmentsForHIT in pages of 100 (most HITs: one call)."""
        return self._paginate(
            "list_assignments_for_hit",
            "Assignments",
            HITId=hit_id,
            AssignmentStatuses=statuses,
            MaxResults=PAGE_SIZE,
        )

    def get_assignment(self, assignment_id: str) -> dict[str, Any]:
        return dict(self._call("get_assignment", AssignmentId=assignment_id)["Assignment"])

    # -- decisions -------------------------------------------------------------
    def approve(self, assignment_id: str, feedback: str | None = None) -> None:
        params: dict[str, Any] = {"AssignmentId": assignment_id}
        if feedback:
            params["RequesterFeedback"] = feedback
        self._call("approve_assignment", **params)

    def override_rejection(self, assignment_id: str, feedback: str | None = None) -> None:
        """ApproveAssignment with OverrideRejection: a rejected assignment approved and paid after all."""
        params: dict[str, Any] = {"AssignmentId": assignment_id, "OverrideRejection": True}
        if feedback:
            params["RequesterFeedback"] = feedback
        self._call("approve_assignment", **params)

    def reject(self, assignment_id: str, feedback: str) -> None:
        self._call("reject_assignment", AssignmentId=assignment_id, RequesterFeedback=feedback)

    # -- money and qualifications ---------------------------------------------
    def balance(self) -> Decimal:
        return Decimal(self._call("get_account_balance")["AvailableBalance"])

    def create_qualification_type(self, **params: Any) -> dict[str, Any]:
        return dict(self._call("create_qualification_type", **params)["QualificationType"])

    def associate_qualification(self, qualification_type_id: str, worker_id: str, value: int) -> None:
        self._call(
            "associate_qualification_with_worker",
            QualificationTypeId=qualification_type_id,
            WorkerId=worker_id,
            IntegerValue=value,
            SendNotification=False,
        )

    def disassociate_qualification(self, qualification_type_id: str, worker_id: str) -> None:
        """DisassociateQualificationFromWorker: the worker's grant is revoked."""
        self._call(
            "disassociate_qualification_from_worker",
            QualificationTypeId=qualification_type_id,
            WorkerId=worker_id,
        )

    def qualification_score(self, qualification_type_id: str, worker_id: str) -> int | None:
        """The worker's score on the qualification (GetQualificationScore); None: they hold none."""
        try:
            found = self._call(
                "get_qualification_score", QualificationTypeId=qualification_type_id, WorkerId=worker_id
            )["Qualification"]
        except MarketplaceError as exc:
            # Never granted, or revoked (MTurk shows a revoked qualification to no one).
            if exc.code.endswith(("QualificationDoesNotExist", "InvalidQualificationState")):
                return None
            if isinstance(exc, NotFound):
                return None
            raise
        value = found.get("IntegerValue")
        return int(value) if isinstance(value, int) else None

    def find_qualification_type(self, name: str) -> dict[str, Any] | None:
        """This requester's qualification type called exactly ``name``, if any."""
        for qtype in self._paginate(
            "list_qualification_types",
            "QualificationTypes",
            Query=name,
            MustBeRequestable=False,
            MustBeOwnedByCaller=True,
            MaxResults=PAGE_SIZE,
        ):
            if qtype.get("Name") == name:
                return dict(qtype)
        return None

    def ensure_qualification_type(self, name: str, description: str) -> str:
        """The id of this requester's qualification type ``name``, created if missing (safe to repeat)."""
        found = self.find_qualification_type(name)
        if found is not None:
            return str(found["QualificationTypeId"])
        try:
            created = self.create_qualification_type(
                Name=name, Description=description, QualificationTypeStatus="Active"
            )
        except QualificationTypeAlreadyExists:
            again = self.find_qualification_type(name)
            if again is None:
                raise
            return str(again["QualificationTypeId"])
        return str(created["QualificationTypeId"])

    # -- follow-ups on workers and HITs ----------------------------------------
    def send_bonus(
        self, worker_id: str, assignment_id: str, amount: Decimal, reason: str, unique_request_token: str
    ) -> None:
        """SendBonus; the token makes a retried call pay once."""
        self._call(
            "send_bonus",
            WorkerId=worker_id,
            AssignmentId=assignment_id,
            BonusAmount=format_amount(amount),
            Reason=reason,
            UniqueRequestToken=unique_request_token,
        )

    def bonus_payments(self, assignment_id: str) -> list[dict[str, Any]]:
        """ListBonusPayments for one assignment, every page."""
        return list(
            self._paginate(
                "list_bonus_payments", "BonusPayments", AssignmentId=assignment_id, MaxResults=PAGE_SIZE
            )
        )

    def block_worker(self, worker_id: str, reason: str) -> None:
        """CreateWorkerBlock (blocking again only updates the reason)."""
        self._call("create_worker_block", WorkerId=worker_id, Reason=reason)

    def unblock_worker(self, worker_id: str) -> None:
        """DeleteWorkerBlock (lifting a block that does not exist is not an error)."""
        self._call("delete_worker_block", WorkerId=worker_id)

    def notify(self, worker_ids: list[str], subject: str, message: str) -> list[dict[str, Any]]:
        """NotifyWorkers; returns MTurk's per-worker failure statuses (empty: all delivered)."""
        result = self._call("notify_workers", Subject=subject, MessageText=message, WorkerIds=worker_ids)
        return list(result.get("NotifyWorkersFailureStatuses", []))

    def set_reviewing(self, hit_id: str) -> None:
        """UpdateHITReviewStatus to Reviewing: ListReviewableHITs(Status=Reviewable) stops returning it."""
        self._call("update_hit_review_status", HITId=hit_id, Revert=False)

    def update_expiration(self, hit_id: str, expire_at: datetime) -> None:
        """UpdateExpirationForHIT: a time in the past expires the HIT now; a later one extends it."""
        self._call("update_expiration_for_hit", HITId=hit_id, ExpireAt=expire_at)

    def update_hit_type_of_hit(self, hit_id: str, hit_type_id: str) -> None:
        """UpdateHITTypeOfHIT: the HIT takes the type's properties (its requirements) from now on."""
        self._call("update_hit_type_of_hit", HITId=hit_id, HITTypeId=hit_type_id)

    def add_assignments(self, hit_id: str, count: int, unique_request_token: str) -> None:
        """CreateAdditionalAssignmentsForHIT; the token makes a retried call add them once."""
        self._call(
            "create_additional_assignments_for_hit",
            HITId=hit_id,
            NumberOfAdditionalAssignments=count,
            UniqueRequestToken=unique_request_token,
        )
