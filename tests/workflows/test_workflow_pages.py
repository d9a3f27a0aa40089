"""The dashboard's workflow page: role-scoped like every page, and what it shows is escaped."""

from __future__ import annotations

import json

from sqlalchemy import select

from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.workflows import WorkflowStage
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from tests.server.test_dashboard_roles import Dashboard, make_user
from tests.workflows.helpers import write_refine_workflow

HOSTILE = 'pic-<script>alert("x")</script>'


def test_the_workflow_page_shows_stages_pictures_and_rounds_to_those_who_may_see_them(
    tmp_path, live_server, market, requester_sessions
) -> None:
    path, _truth = write_refine_workflow(tmp_path, "refine-pages", pictures=2, complete=0)
    rows = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    rows[0]["id"] = HOSTILE
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    assert run_step(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit").published == 2
    with session_scope(requester_sessions) as session:
        campaign_id = session.scalar(
            select(WorkflowStage.campaign_id).where(WorkflowStage.workflow_id == workflow_id)
        )
    page = f"/dashboard/campaigns/{campaign_id}/workflow"

    owner = Dashboard(live_server.url, make_user(requester_sessions, "requester", market.access_key_id))
    assert page in owner.home()
    shown = owner.get(page)
    assert shown.status_code == 200
    assert "describe" in shown.text and "round 1: a worker" in shown.text and "refine" in shown.text
    assert HOSTILE not in shown.text and "&lt;script&gt;" in shown.text

    stranger = Dashboard(live_server.url, make_user(requester_sessions, "qa"))
    assert stranger.get(page).status_code == 404
    assert page not in stranger.home()
    assigned = Dashboard(live_server.url, make_user(requester_sessions, "qa", assigned=(campaign_id,)))
    assert assigned.get(page).status_code == 200
    admin = Dashboard(live_server.url, make_user(requester_sessions, "admin"))
    assert admin.get(page).status_code == 200
    assert admin.get("/dashboard/campaigns/999999/workflow").status_code == 404
