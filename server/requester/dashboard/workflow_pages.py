"""The dashboard's workflow page: a stage campaign's workflow, its pictures and the per-round record.

Under ``/dashboard/campaigns/<id>/workflow`` for any stage campaign the user
may see; stages whose campaigns the user may not see are left out (their
pictures and figures too), so the page shows nothing beyond the user's scope.
"""

from __future__ import annotations

from typing import Any

from flask import abort, render_template
from sqlalchemy import select

from hits.requester.campaigns.staff import scoped_campaign_ids
from hits.requester.tables.workflows import Workflow, WorkflowStage
from hits.requester.workflows.report import round_records, round_summary, workflow_view
from server.db import requester_session
from server.requester.dashboard.base import bp, campaign_or_404, signed_in_staff, staff_required


def workflow_stage_ids() -> set[int]:
    """Campaign ids that are a stage of some workflow (for the home page's links)."""
    return set(requester_session().scalars(select(WorkflowStage.campaign_id)))


@bp.get("/campaigns/<int:campaign_id>/workflow")
@staff_required
def workflow_page(campaign_id: int) -> Any:
    """The workflow the campaign is a stage of: stage graph, each picture's state, rounds over time."""
    rs = requester_session()
    campaign_or_404(campaign_id)
    stage = rs.scalar(select(WorkflowStage).where(WorkflowStage.campaign_id == campaign_id))
    if stage is None:
        abort(404)
    workflow = rs.get(Workflow, stage.workflow_id)
    assert workflow is not None
    visible = set(
        rs.scalars(
            select(WorkflowStage.name).where(
                WorkflowStage.workflow_id == workflow.id,
                WorkflowStage.campaign_id.in_(scoped_campaign_ids(signed_in_staff())),
            )
        )
    )
    view = workflow_view(rs, workflow)
    records = [r for r in round_records(rs, workflow.id, all_attempts=True) if r["stage"] in visible]
    approved = [r for r in records if r["status"] == "approved"]
    return render_template(
        "dashboard/workflow.html",
        view=view,
        stages=[s for s in view.stages if s.name in visible],
        hidden_stages=[s.name for s in view.stages if s.name not in visible],
        chains=[c for c in view.chains if c.stage in visible],
        items=[i for i in view.items if i.stage in visible],
        summary=round_summary(approved),
        records=records,
        pos_columns=sorted({k for r in records for k in r if k.startswith("pos_")}),
    )
