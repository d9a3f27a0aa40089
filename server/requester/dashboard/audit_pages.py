"""The audit log: every decision staff made, by campaign, worker or reviewer; and as CSV."""

from __future__ import annotations

from typing import Any

from flask import Response, render_template, request
from sqlalchemy import select

from hits.requester.campaigns.staff import scoped_campaign_ids
from hits.requester.quality.audit import PER_PAGE, audit_csv, audit_log
from hits.requester.tables.campaigns import Campaign
from server.db import requester_session
from server.requester.dashboard.base import bp, page_number, row_id, signed_in_staff, staff_required


def _filters() -> dict[str, Any]:
    return {
        "campaign_id": row_id(request.args.get("campaign")),
        "worker_id": request.args.get("worker") or None,
        "reviewer": request.args.get("reviewer") or None,
    }


@bp.get("/audit")
@staff_required
def audit() -> Any:
    """The log, newest first, within the campaigns the user may see."""
    number = page_number(request.args.get("page"))
    rows, total = audit_log(
        requester_session(), scoped_campaign_ids(signed_in_staff()), page=number, **_filters()
    )
    pages = max(1, -(-total // PER_PAGE))
    campaigns = requester_session().execute(
        select(Campaign.id, Campaign.name)
        .where(Campaign.id.in_(scoped_campaign_ids(signed_in_staff())))
        .order_by(Campaign.name)
    )
    return render_template(
        "dashboard/audit.html",
        rows=rows,
        total=total,
        page=number,
        pages=pages,
        args=request.args,
        campaigns=list(campaigns),
    )


@bp.get("/audit.csv")
@staff_required
def audit_export() -> Response:
    """The whole log (with the page's filters) as CSV."""
    rows, _ = audit_log(
        requester_session(), scoped_campaign_ids(signed_in_staff()), per_page=None, **_filters()
    )
    return Response(
        audit_csv(rows),
        mimetype="text/csv",
        headers={"Content-Disposition": 'attachment; filename="hitforge-audit.csv"'},
    )
