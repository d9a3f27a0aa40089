"""Qualification operations of the requester API."""

from __future__ import annotations

from typing import Any

from hits.market import qualification_ops
from hits.market.errors import invalid
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import qualification_type_shape


@operation("CreateQualificationType")
def create_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype = qualification_ops.create_type(ctx.session, ctx.requester_id, params)
    return {"QualificationType": qualification_type_shape(qtype)}


@operation("GetQualificationType", read_only=True)
def get_qualification_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    qtype = qualification_ops.get_type(ctx.session, params.get("QualificationTypeId"))
    return {
        "QualificationType": qualification_type_shape(qualification_ops.as_seen_by(qtype, ctx.requester_id))
    }


@operation("AssociateQualificationWithWorker")
def associate_qualification_with_worker(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    value = params.get("IntegerValue")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise invalid("IntegerValue must be an integer.")
    qualification_ops.associate(
        ctx.session,
        ctx.requester_id,
        params.get("QualificationTypeId", ""),
        params.get("WorkerId", ""),
        value,
    )
    return {}
