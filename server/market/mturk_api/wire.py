"""Turning marketplace rows into the output shapes of the 2017-01-17 service model."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.orm import Session

from hits.market.errors import invalid
from hits.market.hit_ops import counts_for_wire, slot_counts_of
from hits.market.models import (
    HIT,
    Assignment,
    BonusPayment,
    QualificationRequest,
    QualificationType,
    WorkerBlock,
    WorkerQualification,
)
from hits.market.qualification_admin import is_requestable
from hits.money import format_amount
from hits.wire.authenticity import API_MEMBER


def ts(value: datetime | None) -> float | None:
    """A timestamp as botocore's JSON parser reads it: epoch seconds."""
    return None if value is None else value.timestamp()


def prune(shape: dict[str, Any]) -> dict[str, Any]:
    """Drop members with no value, as AWS omits them."""
    return {k: v for k, v in shape.items() if v is not None}


def hit_shape(session: Session, hit: HIT, counts: dict[str, int] | None = None) -> dict[str, Any]:
    hit_type = hit.hit_type
    return prune(
        {
            "HITId": hit.id,
            "HITTypeId": hit_type.id,
            "HITGroupId": hit_type.id,
            "HITLayoutId": hit.hit_layout_id,
            "CreationTime": ts(hit.created_at),
            "Title": hit_type.title,
            "Description": hit_type.description,
            "Question": hit.question,
            "Keywords": hit_type.keywords,
            "HITStatus": hit.status,
            "MaxAssignments": hit.max_assignments,
            "Reward": format_amount(hit_type.reward),
            "AutoApprovalDelayInSeconds": hit_type.auto_approval_delay_seconds,
            "Expiration": ts(hit.expires_at),
            "AssignmentDurationInSeconds": hit_type.assignment_duration_seconds,
            "RequesterAnnotation": hit.requester_annotation,
            "QualificationRequirements": [requirement_shape(r) for r in hit_type.qualification_requirements],
            "HITReviewStatus": hit.review_status,
            **counts_for_wire(session, hit, counts),
        }
    )


def hit_shapes(session: Session, hits: list[HIT]) -> list[dict[str, Any]]:
    """:func:`hit_shape` of a page of HITs, their assignments counted in one query, not one a HIT."""
    counts = slot_counts_of(session, [h.id for h in hits])
    return [hit_shape(session, h, counts[h.id]) for h in hits]


def requirement_shape(req: dict[str, Any]) -> dict[str, Any]:
    shape: dict[str, Any] = {
        "QualificationTypeId": req["QualificationTypeId"],
        "Comparator": req["Comparator"],
        "ActionsGuarded": req.get("ActionsGuarded", "Accept"),
    }
    if req.get("IntegerValues"):
        shape["IntegerValues"] = req["IntegerValues"]
    if req.get("LocaleValues"):
        shape["LocaleValues"] = req["LocaleValues"]
    if req.get("RequiredToPreview"):
        shape["RequiredToPreview"] = True
    return shape


def assignment_shape(assignment: Assignment | Row[Any]) -> dict[str, Any]:
    """An Assignment as the API returns it, from the object or a row of its table."""
    return prune(
        {
            "AssignmentId": assignment.id,
            "WorkerId": assignment.worker_id,
            "HITId": assignment.hit_id,
            "AssignmentStatus": assignment.status,
            "AutoApprovalTime": ts(assignment.auto_approval_time),
            "AcceptTime": ts(assignment.accept_time),
            "SubmitTime": ts(assignment.submit_time),
            "ApprovalTime": ts(assignment.approval_time),
            "RejectionTime": ts(assignment.rejection_time),
            "Deadline": ts(assignment.deadline),
            "Answer": assignment.answer,
            "RequesterFeedback": assignment.requester_feedback,
            # hitforge's own member (the page's typing record): not in MTurk's model, so boto3
            # leaves it out for every client but hitforge's requester side, which asks for it.
            API_MEMBER: assignment.authenticity,
        }
    )


def qualification_type_shape(qtype: QualificationType) -> dict[str, Any]:
    return prune(
        {
            "QualificationTypeId": qtype.id,
            "CreationTime": ts(qtype.created_at),
            "Name": qtype.name,
            "Description": qtype.description,
            "Keywords": qtype.keywords,
            "QualificationTypeStatus": qtype.status,
            "Test": qtype.test,
            "TestDurationInSeconds": qtype.test_duration_seconds,
            "AnswerKey": qtype.answer_key,
            "RetryDelayInSeconds": qtype.retry_delay_seconds,
            "IsRequestable": is_requestable(qtype),
            "AutoGranted": qtype.auto_granted,
            "AutoGrantedValue": qtype.auto_granted_value,
        }
    )


def qualification_shape(grant: WorkerQualification) -> dict[str, Any]:
    return prune(
        {
            "QualificationTypeId": grant.qualification_type_id,
            "WorkerId": grant.worker_id,
            "GrantTime": ts(grant.granted_at),
            "IntegerValue": grant.integer_value,
            "LocaleValue": grant.locale_value,
            "Status": grant.status,
        }
    )


def _max_results(params: dict[str, Any]) -> int:
    limit = params.get("MaxResults", 100)
    if not isinstance(limit, int) or not 1 <= limit <= 100:
        raise invalid("MaxResults must be between 1 and 100.")
    return limit


def list_scope(operation: str, requester_id: str, **filters: Any) -> str:
    """The name of one list, which its tokens carry: the operation, whose list it is and its filters.

    Give the filters as the list reads them (defaults filled in, order that
    does not matter taken out), so that two requests for the same rows name
    the same list and any other request names another.
    """
    return json.dumps([operation, requester_id, filters], sort_keys=True, default=str)


def _scope_tag(scope: str) -> str:
    """What a token carries of the list it pages: a short digest (a token has at most 255 characters)."""
    return hashlib.blake2b(scope.encode(), digest_size=6).hexdigest()


def _token_data(params: dict[str, Any], scope: str) -> dict[str, Any] | None:
    """What NextToken holds, refused unless it is one of ours and was issued for the list ``scope``."""
    token = params.get("NextToken")
    if token is None:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError, AttributeError) as exc:
        raise invalid("NextToken is not valid.") from exc
    if not isinstance(data, dict):
        raise invalid("NextToken is not valid.")
    if data.get("s") != _scope_tag(scope):
        raise invalid("NextToken is not valid for this list.")
    return data


def _token(scope: str, data: dict[str, Any]) -> str:
    # The list's tag, and a nonce: a token is never returned twice.
    raw = json.dumps({**data, "s": _scope_tag(scope), "n": secrets.token_hex(6)}).encode()
    return base64.urlsafe_b64encode(raw).decode()


#: The deepest position a token may hold (more than any list has rows; the database takes it).
MAX_OFFSET = 2**31 - 1


def page_request(params: dict[str, Any], scope: str) -> tuple[int, int]:
    """(offset, limit) of the list ``scope`` from NextToken and MaxResults (1 to 100, default 100).

    A token of another list (another operation, requester or filter), or not
    one of ours, is refused, never read as a position in this one.
    """
    limit = _max_results(params)
    data = _token_data(params, scope)
    if data is None:
        return 0, limit
    offset = data.get("o")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise invalid("NextToken is not valid.")
    return offset, limit


#: Where a keyset page starts: after this (creation time, id), or at the first row.
PageKey = tuple[datetime, str] | None


def keyset_request(params: dict[str, Any], scope: str) -> tuple[PageKey, int]:
    """(key, limit) for a list ordered by (creation time, id): the page starts after ``key``.

    Unlike an offset, a key does not shift when rows before it leave the list
    (a HIT turning Reviewing while the pipeline pages through the
    Reviewable ones, an assignment approved as it is read), so no row is
    skipped, and a deep page costs no more than the first. ``scope`` names
    the list (operation and its filter, such as the HIT): a token issued for
    another list is refused, not read as a position in this one.
    """
    limit = _max_results(params)
    data = _token_data(params, scope)
    if data is None:
        return None, limit
    try:
        created, row_id = data["k"]
        if not isinstance(created, str) or not isinstance(row_id, str) or len(row_id) > 64:
            raise TypeError("not a key of ours")
        after = datetime.fromisoformat(created)
        if after.tzinfo is None:
            raise ValueError("a key's time is always in UTC")
        return (after.astimezone(UTC), row_id), limit
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise invalid("NextToken is not valid.") from exc


def keyset_token(last: PageKey, returned: int, limit: int, scope: str) -> str | None:
    """A token for the page after the row keyed ``last`` of the list ``scope``; None after an empty page.

    As MTurk did, every page with rows carries a token, a short last page
    too: the end of the list is the empty page that follows. Scripts written
    against MTurk read ``response["NextToken"]`` while ``NumResults > 0``.
    """
    if returned == 0 or last is None:
        return None
    return _token(scope, {"k": [last[0].isoformat(), last[1]]})


def next_token(offset: int, limit: int, returned: int, scope: str) -> str | None:
    """A token for the next page of the list ``scope`` paged by position; None after an empty page.

    Every page with rows carries one, as with :func:`keyset_token`.
    """
    if returned == 0:
        return None
    return _token(scope, {"o": offset + returned})


def page_reply(key: str, items: list[dict[str, Any]], token: str | None) -> dict[str, Any]:
    """A page of a list operation: NumResults, the items under ``key``, and NextToken unless it is empty."""
    out: dict[str, Any] = {"NumResults": len(items), key: items}
    if token:
        out["NextToken"] = token
    return out


def paged(key: str, items: list[dict[str, Any]], offset: int, limit: int, scope: str) -> dict[str, Any]:
    """:func:`page_reply` for the list ``scope`` paged by position."""
    return page_reply(key, items, next_token(offset, limit, len(items), scope))


def bonus_shape(bonus: BonusPayment) -> dict[str, Any]:
    return {
        "WorkerId": bonus.worker_id,
        "BonusAmount": format_amount(bonus.amount),
        "AssignmentId": bonus.assignment_id,
        "Reason": bonus.reason,
        "GrantTime": ts(bonus.granted_at),
    }


def worker_block_shape(block: WorkerBlock) -> dict[str, Any]:
    return {"WorkerId": block.worker_id, "Reason": block.reason}


def qualification_request_shape(request: QualificationRequest) -> dict[str, Any]:
    return prune(
        {
            "QualificationRequestId": request.id,
            "QualificationTypeId": request.qualification_type_id,
            "WorkerId": request.worker_id,
            "Test": request.test,
            "Answer": request.answer,
            "SubmitTime": ts(request.submitted_at),
        }
    )
