"""Assignment operations of the requester API."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select, tuple_

from hits.db import UTCDateTime
from hits.market import decisions, hit_ops
from hits.market.errors import invalid
from hits.market.models import Assignment
from hits.market.models.work import APPROVED, REJECTED, SUBMITTED
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import (
    assignment_shape,
    hit_shape,
    keyset_request,
    keyset_token,
    list_scope,
    page_reply,
)

LISTABLE = (SUBMITTED, APPROVED, REJECTED)


@cache
def _page_of_assignments(after_key: bool) -> Select[Any]:
    # Plain rows through Core, built once (once for first pages, once for the
    # rest): a page is read, shaped and sent, never changed, and ORM objects
    # for it cost more than the query. Paged by key, (accept time, id), which
    # never changes: an assignment approved as it is read shifts no other.
    table = Assignment.__table__
    stmt = select(table).where(
        table.c.hit_id == bindparam("hit_id"), table.c.status.in_(bindparam("statuses", expanding=True))
    )
    if after_key:
        after = tuple_(bindparam("after_time", type_=UTCDateTime()), bindparam("after_id"))
        stmt = stmt.where(tuple_(table.c.accept_time, table.c.id) > after)
    return stmt.order_by(table.c.accept_time, table.c.id).limit(bindparam("limit"))


@operation("ListAssignmentsForHIT", read_only=True)
def list_assignments_for_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    statuses = params.get("AssignmentStatuses") or list(LISTABLE)
    if not isinstance(statuses, list) or any(s not in LISTABLE for s in statuses):
        raise invalid("AssignmentStatuses may hold Submitted, Approved and Rejected.")
    hit_id = hit_ops.check_own_hit(ctx.session, params.get("HITId"), ctx.requester_id)
    scope = list_scope("ListAssignmentsForHIT", ctx.requester_id, hit=hit_id, statuses=sorted(set(statuses)))
    after, limit = keyset_request(params, scope)
    bound: dict[str, Any] = {"hit_id": hit_id, "statuses": statuses, "limit": limit}
    if after is not None:
        bound.update(after_time=after[0], after_id=after[1])
    rows = ctx.session.connection().execute(_page_of_assignments(after is not None), bound).all()
    last = (rows[-1].accept_time, rows[-1].id) if rows else None
    return page_reply(
        "Assignments", [assignment_shape(a) for a in rows], keyset_token(last, len(rows), limit, scope)
    )


@operation("GetAssignment", read_only=True)
def get_assignment(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    assignment = decisions.get_assignment(ctx.session, params.get("AssignmentId"), ctx.requester_id)
    return {"Assignment": assignment_shape(assignment), "HIT": hit_shape(ctx.session, assignment.hit)}


@operation("ApproveAssignment")
def approve_assignment(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    feedback = params.get("RequesterFeedback")
    if feedback is not None and len(feedback) > 1024:
        raise invalid("RequesterFeedback must be at most 1024 characters.")
    decisions.approve(
        ctx.session,
        ctx.requester_id,
        params.get("AssignmentId", ""),
        feedback,
        override_rejection=bool(params.get("OverrideRejection", False)),
    )
    return {}


@operation("RejectAssignment")
def reject_assignment(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    feedback = params.get("RequesterFeedback")
    # Required, but MTurk's model sets no minimum: an empty reason is taken, as MTurk took it.
    if not isinstance(feedback, str) or len(feedback) > 1024:
        raise invalid("RequesterFeedback is required (at most 1024 characters) when rejecting.")
    decisions.reject(ctx.session, ctx.requester_id, params.get("AssignmentId", ""), feedback)
    return {}
