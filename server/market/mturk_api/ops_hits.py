"""HIT operations of the requester API."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import current_app

from hits.market import hit_ops, layouts
from hits.market.errors import invalid
from hits.market.models import HIT, HITType
from hits.market.models.work import REVIEWABLE, REVIEWING
from hits.market.questions import parse_question
from server.market.mturk_api.registry import CallContext, operation
from server.market.mturk_api.wire import (
    hit_shape,
    hit_shapes,
    keyset_request,
    keyset_token,
    list_scope,
    page_reply,
)


def _checked_hit(ctx: CallContext, params: dict[str, Any]) -> hit_ops.HITSpec:
    """The HIT's members; with ``HITLayoutId``, the question is the caller's layout filled in."""
    if params.get("HITLayoutId") is None:
        return hit_ops.hit_spec(params)
    question, layout_id = layouts.layout_question(ctx.session, ctx.requester_id, params)
    return replace(hit_ops.hit_spec({**params, "Question": question}), hit_layout_id=layout_id)


def _log_unserved(hit: HIT, question: str) -> None:
    """Log the CDN URLs an HTMLQuestion loads that this site does not serve.

    CreateHIT's reply has no field for a warning, so a script's requester learns
    them from this line, ``hitforge batch check --hit`` or the dashboard.
    """
    if "HTMLQuestion" not in question:
        return  # ExternalQuestion and QuestionForm pages load nothing of the requester's from here
    from server.cdn import unserved_urls

    unserved = unserved_urls(parse_question(question).html or "")
    if unserved:
        current_app.logger.warning(
            "HIT %s (requester %s) loads URLs hitforge does not serve: %s",
            hit.id,
            hit.requester_id,
            " ".join(unserved),
        )


@operation("CreateHIT")
def create_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    spec = hit_ops.hit_type_spec(params)
    checked = _checked_hit(ctx, params)  # a layout is read first; a plain Question needs no query
    hit_type = hit_ops.find_or_create_hit_type(ctx.session, ctx.requester_id, spec)
    hit = hit_ops.create_hit(ctx.session, ctx.requester_id, hit_type, checked)
    _log_unserved(hit, checked.question)
    return {"HIT": hit_shape(ctx.session, hit, counts={})}  # a new HIT has no assignments


@operation("CreateHITType")
def create_hit_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    spec = hit_ops.hit_type_spec(params)
    hit_type = hit_ops.find_or_create_hit_type(ctx.session, ctx.requester_id, spec)
    return {"HITTypeId": hit_type.id}


@operation("CreateHITWithHITType")
def create_hit_with_hit_type(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    checked = _checked_hit(ctx, params)
    hit_type = ctx.session.get(HITType, params.get("HITTypeId"))
    if hit_type is None or hit_type.requester_id != ctx.requester_id:
        raise invalid(f"HITTypeId {params.get('HITTypeId')} does not exist.")
    hit = hit_ops.create_hit(ctx.session, ctx.requester_id, hit_type, checked)
    _log_unserved(hit, checked.question)
    return {"HIT": hit_shape(ctx.session, hit, counts={})}  # a new HIT has no assignments


@operation("GetHIT")
def get_hit(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    # Locked, as a submission locks it: the status written back is worked out from the
    # assignments, and one counted beside a submission in flight would undo what it wrote.
    hit = hit_ops.get_hit(ctx.session, params.get("HITId"), ctx.requester_id, for_update=True)
    counts = hit_ops.slot_counts(ctx.session, hit.id)
    hit_ops.refresh_status(ctx.session, hit, counts=counts)
    return {"HIT": hit_shape(ctx.session, hit, counts)}


@operation("ListHITs", read_only=True)
def list_hits(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    scope = list_scope("ListHITs", ctx.requester_id)
    after, limit = keyset_request(params, scope)
    hits = hit_ops.page_of_hits(ctx.session, ctx.requester_id, after, limit)
    return _page_of_hits(ctx, hits, limit, scope)


def _page_of_hits(ctx: CallContext, hits: list[HIT], limit: int, scope: str) -> dict[str, Any]:
    token = keyset_token((hits[-1].created_at, hits[-1].id) if hits else None, len(hits), limit, scope)
    return page_reply("HITs", hit_shapes(ctx.session, hits), token)


@operation("ListReviewableHITs", read_only=True)
def list_reviewable_hits(ctx: CallContext, params: dict[str, Any]) -> dict[str, Any]:
    status = params.get("Status", REVIEWABLE)
    if status not in (REVIEWABLE, REVIEWING):
        raise invalid("Status must be Reviewable or Reviewing.")
    hit_type_id = params.get("HITTypeId") or None
    if hit_type_id is not None and not isinstance(hit_type_id, str):
        raise invalid("HITTypeId must be a string.")
    # A token of ListHITs, of another HIT type or of the other status is not a place in this list.
    scope = list_scope("ListReviewableHITs", ctx.requester_id, status=status, hit_type=hit_type_id)
    after, limit = keyset_request(params, scope)
    hits = hit_ops.page_of_hits(ctx.session, ctx.requester_id, after, limit, status, hit_type_id)
    return _page_of_hits(ctx, hits, limit, scope)
