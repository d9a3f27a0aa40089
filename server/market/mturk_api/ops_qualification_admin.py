"""Qualification maintenance and qualification-request operations of the requester API."""

from __future__ import annotations

from typing import Any

from hits.market import qualification_admin, qualification_ops
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import (
    keyset_request,
    keyset_token,
    list_scope,
    page_reply,
    page_request,
    paged,
    qualification_request_shape,
    qualification_shape,
    qualification_type_shape,
)


@operation("DisassociateQualificationFromWorker")
def disassociate_qualification_from_worker(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qualification_admin.disassociate(
        ctx.session,
        ctx.requester_id,
        params.get("QualificationTypeId"),
        params.get("WorkerId"),
        params.get("Reason"),
    )
    return {}


@operation("GetQualificationScore", read_only=True)
def get_qualification_score(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    grant = qualification_admin.score(
        ctx.session, ctx.requester_id, params.get("QualificationTypeId"), params.get("WorkerId")
    )
    return {"Qualification": qualification_shape(grant)}


@operation("ListWorkersWithQualificationType", read_only=True)
def list_workers_with_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype_id, status = params.get("QualificationTypeId"), params.get("Status")
    scope = list_scope("ListWorkersWithQualificationType", ctx.requester_id, type=qtype_id, status=status)
    after, limit = keyset_request(params, scope)
    rows = qualification_admin.grants(ctx.session, ctx.requester_id, qtype_id, status, after, limit)
    token = keyset_token((rows[-1].granted_at, rows[-1].worker_id) if rows else None, len(rows), limit, scope)
    return page_reply("Qualifications", [qualification_shape(g) for g in rows], token)


@operation("UpdateQualificationType")
def update_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype = qualification_admin.update_type(ctx.session, ctx.requester_id, params)
    return {"QualificationType": qualification_type_shape(qtype)}


@operation("DeleteQualificationType")
def delete_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qualification_admin.delete_type(ctx.session, ctx.requester_id, params.get("QualificationTypeId"))
    return {}


@operation("ListQualificationTypes", read_only=True)
def list_qualification_types(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    filters = {
        "query": params.get("Query"),
        "must_be_requestable": params.get("MustBeRequestable"),
        "must_be_owned_by_caller": params.get("MustBeOwnedByCaller", False),
    }
    scope = list_scope("ListQualificationTypes", ctx.requester_id, **filters)
    offset, limit = page_request(params, scope)
    rows = qualification_admin.search_types(
        ctx.session, ctx.requester_id, **filters, offset=offset, limit=limit
    )
    shown = [qualification_type_shape(qualification_ops.as_seen_by(q, ctx.requester_id)) for q in rows]
    return paged("QualificationTypes", shown, offset, limit, scope)


@operation("ListQualificationRequests", read_only=True)
def list_qualification_requests(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype_id = params.get("QualificationTypeId")
    scope = list_scope("ListQualificationRequests", ctx.requester_id, type=qtype_id)
    after, limit = keyset_request(params, scope)
    rows = qualification_admin.pending_requests(ctx.session, ctx.requester_id, qtype_id, after, limit)
    token = keyset_token((rows[-1].submitted_at, rows[-1].id) if rows else None, len(rows), limit, scope)
    return page_reply("QualificationRequests", [qualification_request_shape(r) for r in rows], token)


@operation("AcceptQualificationRequest")
def accept_qualification_request(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qualification_admin.accept_request(
        ctx.session, ctx.requester_id, params.get("QualificationRequestId"), params.get("IntegerValue")
    )
    return {}


@operation("RejectQualificationRequest")
def reject_qualification_request(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qualification_admin.reject_request(
        ctx.session, ctx.requester_id, params.get("QualificationRequestId"), params.get("Reason")
    )
    return {}
