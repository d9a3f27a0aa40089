"""The API's operations: each a few lines over the dashboard's own domain code."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, cast

from flask import jsonify
from sqlalchemy import func, select

from hits.requester.campaigns import control
from hits.requester.campaigns.progress import campaign_progress
from hits.requester.quality import qa_review
from hits.requester.quality.review_queue import REASONS, Reason, review_queue
from hits.requester.tables.campaigns import Campaign, CampaignResult, PublishedHIT, Submission, WorkerStats
from server.requester.api import wire
from server.requester.api.dispatch import OPERATIONS, ApiContext, ApiError, Param, bp, not_found, operation
from server.requester.api.openapi import describe

CAMPAIGN_ID = Param("campaign_id", "path", "integer", "The campaign's id.", required=True)
OBJECT = {"type": "object"}


@operation("GET", "/campaigns", "The campaigns you may see, newest first.", {"type": "array"}, paged=True)
def list_campaigns(ctx: ApiContext) -> Any:
    offset, size = ctx.page()
    listed = select(Campaign).where(Campaign.id.in_(ctx.visible()))
    total = ctx.session.scalar(select(func.count()).select_from(listed.subquery()))
    rows = ctx.session.scalars(
        listed.order_by(Campaign.created_at.desc(), Campaign.id.desc()).offset(offset).limit(size)
    )
    return {"total": total, "campaigns": [wire.campaign(c) for c in rows]}


@operation(
    "GET",
    "/campaigns/<int:campaign_id>",
    "A campaign's progress, money and throughput.",
    OBJECT,
    (CAMPAIGN_ID,),
)
def get_campaign(ctx: ApiContext) -> Any:
    return wire.progress(campaign_progress(ctx.session, ctx.campaign(ctx.args["campaign_id"])))


@operation(
    "GET",
    "/campaigns/<int:campaign_id>/results",
    "The aggregated labels (as last computed) with their confidence, and agreement.",
    OBJECT,
    (CAMPAIGN_ID,),
    paged=True,
)
def get_results(ctx: ApiContext) -> Any:
    campaign = ctx.campaign(ctx.args["campaign_id"])
    offset, size = ctx.page()
    return wire.results(ctx.session.get(CampaignResult, campaign.id), offset, size)


@operation(
    "POST",
    "/campaigns/<int:campaign_id>/control",
    "Pause, resume, cancel or extend the campaign, or set its budget (logged under your name).",
    OBJECT,
    (
        CAMPAIGN_ID,
        Param(
            "change", "body", "string", "What to do.", required=True, enum=(*control.ALLOWED_FROM, "budget")
        ),
        Param("hours", "body", "integer", "For extend: hours from now."),
        Param("budget", "body", "string", 'For budget: the new budget in dollars, e.g. "250.00".'),
        Param("note", "body", "string", "A note for the audit log."),
    ),
)
def control_campaign(ctx: ApiContext) -> Any:
    campaign = ctx.owned_campaign(ctx.args["campaign_id"])
    change, note = ctx.args["change"], ctx.args.get("note", "")
    try:
        if change == "budget":
            try:
                budget = Decimal(str(ctx.args.get("budget", "")))
            except InvalidOperation:
                raise ApiError(
                    400, "InvalidParameter", 'budget must be dollars and cents, e.g. "250.00"'
                ) from None
            if not budget.is_finite() or budget != budget.quantize(Decimal("0.01")) or budget > 10**9:
                raise ApiError(400, "InvalidParameter", 'budget must be dollars and cents, e.g. "250.00"')
            said = control.raise_budget(ctx.session, campaign, budget, ctx.user.id, note)
            return {"done": said, "campaign": wire.campaign(campaign)}
        hours = ctx.args.get("hours")
        done = control.change_campaign(
            ctx.session,
            campaign,
            cast(control.Change, change),
            ctx.user.id,
            note,
            extend_seconds=hours * 3600 if hours else None,
        )
    except control.ControlRefused as exc:
        raise ApiError(409, "NotApplicable", str(exc)) from None
    ctx.outbox.extend(done.entry_ids)
    return {"done": done.said, "campaign": wire.campaign(campaign)}


@operation(
    "GET",
    "/review-queue",
    "Flagged workers and held work across your campaigns, the decision worth most first.",
    OBJECT,
    (
        Param("campaign", "query", "integer", "Only this campaign."),
        Param("template", "query", "string", "Only this template."),
        Param("reason", "query", "string", "Only this reason.", enum=tuple(REASONS)),
    ),
    paged=True,
)
def get_review_queue(ctx: ApiContext) -> Any:
    offset, size = ctx.page()
    page = review_queue(
        ctx.session,
        ctx.visible(),
        campaign_id=ctx.args.get("campaign"),
        template=ctx.args.get("template"),
        reason=cast(Reason, ctx.args["reason"]) if "reason" in ctx.args else None,
        page=offset // size + 1,
        per_page=size,
    )
    return {"total": page.total, "rows": [wire.queue_row(r) for r in page.rows]}


@operation(
    "POST",
    "/assignments/<assignment_id>/decision",
    "Approve or reject one held assignment, with the reason the worker reads (logged under your name).",
    OBJECT,
    (
        Param("assignment_id", "path", "string", "The assignment's id.", required=True),
        Param("action", "body", "string", "The decision.", required=True, enum=("approve", "reject")),
        Param("feedback", "body", "string", "For a rejection: the reason the worker reads."),
        Param("note", "body", "string", "A note for the audit log."),
    ),
)
def decide_assignment(ctx: ApiContext) -> Any:
    found = ctx.session.execute(
        select(Submission.id, PublishedHIT.campaign_id)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            Submission.assignment_id == ctx.args["assignment_id"], PublishedHIT.campaign_id.in_(ctx.visible())
        )
    ).first()
    if found is None:
        raise not_found(f"assignment {ctx.args['assignment_id']}")
    feedback = (ctx.args.get("feedback") or "").strip()[:1024] or None
    try:
        entries = qa_review.decide_held(
            ctx.session,
            found.id,
            cast(qa_review.HeldDecision, ctx.args["action"]),
            ctx.user.id,
            (ctx.args.get("note") or "")[:2000],
            feedback=feedback,
        )
    except qa_review.NotHeld:
        raise ApiError(409, "NotHeld", "that assignment is not waiting for a reviewer") from None
    ctx.outbox.extend(entries)
    return {"assignment_id": ctx.args["assignment_id"], "decision": ctx.args["action"]}


@operation(
    "POST",
    "/campaigns/<int:campaign_id>/workers/<worker_id>/flag",
    "Confirm a flagged worker's flag (held work rejected, the flag policy applied) or clear it (held work "
    "approved); logged under your name.",
    OBJECT,
    (
        CAMPAIGN_ID,
        Param("worker_id", "path", "string", "The worker's id.", required=True),
        Param(
            "action", "body", "string", "What to do with the flag.", required=True, enum=("confirm", "clear")
        ),
        Param("note", "body", "string", "A note for the audit log."),
    ),
)
def review_flag(ctx: ApiContext) -> Any:
    campaign = ctx.campaign(ctx.args["campaign_id"])
    if ctx.session.get(WorkerStats, (campaign.id, ctx.args["worker_id"])) is None:
        raise not_found(f"worker {ctx.args['worker_id']} in campaign {campaign.id}")
    try:
        done = qa_review.review_worker(
            ctx.session,
            campaign.id,
            ctx.args["worker_id"],
            cast(qa_review.WorkerReview, ctx.args["action"]),
            ctx.user.id,
            (ctx.args.get("note") or "")[:2000],
        )
    except LookupError:
        raise not_found(f"worker {ctx.args['worker_id']} in campaign {campaign.id}") from None
    except qa_review.NotFlagged as exc:
        raise ApiError(409, "NotFlagged", str(exc)) from None
    ctx.outbox.extend(done.entry_ids)
    return {
        "decided": done.decided,
        "already_rejected": done.already_rejected,
        "already_approved": done.already_approved,
    }


@bp.get("/openapi.json")
def openapi() -> Any:
    """This API's OpenAPI 3.1 description (no token needed: it holds no data)."""
    return jsonify(describe(OPERATIONS))
