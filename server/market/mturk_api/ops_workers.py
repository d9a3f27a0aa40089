"""Worker operations of the requester API: bonuses, blocks and notifications."""

from __future__ import annotations

from typing import Any

from hits.market import worker_relations
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import bonus_shape, list_scope, page_request, paged, worker_block_shape


@operation("SendBonus")
def send_bonus(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    worker_relations.send_bonus(
        ctx.session,
        ctx.requester_id,
        worker_id=params.get("WorkerId"),
        assignment_id=params.get("AssignmentId"),
        amount=params.get("BonusAmount"),
        reason=params.get("Reason"),
        token=params.get("UniqueRequestToken"),
    )
    return {}


@operation("ListBonusPayments", read_only=True)
def list_bonus_payments(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    filters = {"hit_id": params.get("HITId"), "assignment_id": params.get("AssignmentId")}
    scope = list_scope("ListBonusPayments", ctx.requester_id, **filters)
    offset, limit = page_request(params, scope)
    bonuses = worker_relations.bonus_payments(
        ctx.session, ctx.requester_id, **filters, offset=offset, limit=limit
    )
    return paged("BonusPayments", [bonus_shape(b) for b in bonuses], offset, limit, scope)


@operation("CreateWorkerBlock")
def create_worker_block(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    worker_relations.block(ctx.session, ctx.requester_id, params.get("WorkerId"), params.get("Reason"))
    return {}


@operation("DeleteWorkerBlock")
def delete_worker_block(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    worker_relations.unblock(ctx.session, ctx.requester_id, params.get("WorkerId"))
    return {}


@operation("ListWorkerBlocks", read_only=True)
def list_worker_blocks(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    scope = list_scope("ListWorkerBlocks", ctx.requester_id)
    offset, limit = page_request(params, scope)
    rows = worker_relations.blocks(ctx.session, ctx.requester_id, offset, limit)
    return paged("WorkerBlocks", [worker_block_shape(b) for b in rows], offset, limit, scope)


@operation("NotifyWorkers")
def notify_workers(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    failures = worker_relations.notify_workers(
        ctx.session,
        ctx.requester_id,
        params.get("Subject"),
        params.get("MessageText"),
        params.get("WorkerIds"),
    )
    return {
        "NotifyWorkersFailureStatuses": [
            {
                "NotifyWorkersFailureCode": f.code,
                "NotifyWorkersFailureMessage": f.message,
                "WorkerId": f.worker_id,
            }
            for f in failures
        ]
    }
