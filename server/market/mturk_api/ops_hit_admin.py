"""HIT maintenance operations of the requester API."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hits.market import decisions, hit_admin, hit_ops, review_policies
from hits.market.errors import invalid
from hits.market.qualification_ops import get_type
from hits.market.question_forms import uploaded_file_key
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import hit_shapes, list_scope, next_token, page_request, paged
from server.market.worker_site.uploads import uploaded_file_url

POLICY_LEVELS = ("Assignment", "HIT")


def _timestamp(value: Any, name: str) -> datetime:
    """A timestamp as botocore sends it in JSON (epoch seconds), or ISO 8601."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            # In UTC, as it is stored: a time at either end of the calendar may fall off it.
            return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)
        except (ValueError, OverflowError):
            pass
    raise invalid(f"{name} must be a timestamp.")


@operation("CreateAdditionalAssignmentsForHIT")
def create_additional_assignments_for_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    hit_admin.add_assignments(
        ctx.session,
        ctx.requester_id,
        params.get("HITId"),
        params.get("NumberOfAdditionalAssignments"),
        params.get("UniqueRequestToken"),
    )
    return {}


@operation("UpdateExpirationForHIT")
def update_expiration_for_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    expire_at = _timestamp(params.get("ExpireAt"), "ExpireAt")
    hit_admin.update_expiration(ctx.session, ctx.requester_id, params.get("HITId"), expire_at)
    return {}


@operation("UpdateHITReviewStatus")
def update_hit_review_status(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    revert = params.get("Revert", False)
    if not isinstance(revert, bool):
        raise invalid("Revert must be true or false.")
    hit_admin.update_review_status(ctx.session, ctx.requester_id, params.get("HITId"), revert)
    return {}


@operation("UpdateHITTypeOfHIT")
def update_hit_type_of_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    hit_admin.update_hit_type(ctx.session, ctx.requester_id, params.get("HITId"), params.get("HITTypeId"))
    return {}


@operation("DeleteHIT")
def delete_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    hit_admin.delete(ctx.session, ctx.requester_id, params.get("HITId"))
    return {}


@operation("ListHITsForQualificationType", read_only=True)
def list_hits_for_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype = get_type(ctx.session, params.get("QualificationTypeId"))
    scope = list_scope("ListHITsForQualificationType", ctx.requester_id, type=qtype.id)
    offset, limit = page_request(params, scope)
    hits = hit_admin.hits_with_qualification(ctx.session, ctx.requester_id, qtype.id, offset, limit)
    return paged("HITs", hit_shapes(ctx.session, hits), offset, limit, scope)


@operation("ListReviewPolicyResultsForHIT", read_only=True)
def list_review_policy_results_for_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    """What the HIT's review policies found (ReviewResults) and did (ReviewActions)."""
    hit = hit_ops.get_hit(ctx.session, params.get("HITId"), ctx.requester_id)
    levels = params.get("PolicyLevels") or list(POLICY_LEVELS)
    if not isinstance(levels, list) or any(level not in POLICY_LEVELS for level in levels):
        raise invalid("PolicyLevels may hold Assignment and HIT.")
    levels = sorted(set(levels))  # the records are in the order recorded, whatever order the levels are in
    wanted = {
        "results": bool(params.get("RetrieveResults", True)),
        "actions": bool(params.get("RetrieveActions", True)),
    }
    scope = list_scope("ListReviewPolicyResultsForHIT", ctx.requester_id, hit=hit.id, levels=levels, **wanted)
    offset, limit = page_request(params, scope)
    found, returned = review_policies.report(
        ctx.session, hit.id, levels, **wanted, offset=offset, limit=limit
    )
    token = next_token(offset, limit, returned, scope)
    return {"HITId": hit.id, **found, **({"NextToken": token} if token else {})}


@operation("GetFileUploadURL")
def get_file_upload_url(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    """A URL, good for 60 seconds, of the file a worker uploaded for a FileUploadAnswer question."""
    assignment = decisions.get_assignment(ctx.session, params.get("AssignmentId"), ctx.requester_id)
    question = params.get("QuestionIdentifier")
    if not isinstance(question, str) or not question:
        raise invalid("QuestionIdentifier is required.")
    key = uploaded_file_key(ctx.session, assignment.id, question)
    if key is None:
        raise invalid(f"Assignment {assignment.id} has no uploaded file for the question {question}.")
    return {"FileUploadURL": uploaded_file_url(key)}
