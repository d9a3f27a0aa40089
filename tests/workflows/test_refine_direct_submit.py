"""A round's work that never passed through its HIT page (posted straight to externalSubmit) still counts."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

from bs4 import Tag
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.workflows import Chain, ChainRound, WorkflowStage
from hits.requester.workflows.publish import run_step
from hits.requester.workflows.setup import create_workflow
from tests.server.worker_helpers import WorkerClient, soup
from tests.workflows.helpers import write_refine_workflow
from tests.workflows.test_refine_blinding import _round_hit


def test_a_round_submitted_past_its_page_is_synced_and_the_chain_moves_on(
    tmp_path, live_server, market, requester_sessions
) -> None:
    path, _truth = write_refine_workflow(tmp_path, "refine-direct", pictures=2, complete=0)
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 2
    # The first picture's HIT: its type is not the stage campaign's latest (the second picture's).
    hit_id = _round_hit(requester_sessions, workflow_id, 1)
    worker = WorkerClient(live_server.url, "direct")
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    frame = soup(work).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    params = {k: v[0] for k, v in parse_qs(urlsplit(str(frame["src"])).query).items()}
    text = "A green square stands above a small orange circle on a pale background."
    done = worker.http.post(
        params["turkSubmitTo"] + "/mturk/externalSubmit",
        data={"assignmentId": params["assignmentId"], "text-0": text},
    )
    assert done.status_code == 200 and "submitted" in done.text

    report = run_step(requester_sessions, market, workflow_id, hit_page)
    assert report.created == 1 and report.published == 1
    assert report.outbox  # the approval, applied through the outbox
    with session_scope(requester_sessions) as session:
        rounds = session.scalars(
            select(ChainRound)
            .join(Chain, Chain.id == ChainRound.chain_id)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.workflow_id == workflow_id)
            .order_by(ChainRound.id)
        ).all()
    first = rounds[0]
    assert first.status == "approved" and first.text == text and first.worker_id == worker.worker_id
    assert [(r.chain_id, r.round) for r in rounds[2:]] == [(first.chain_id, 2)]
    assert rounds[2].previous_text == text


def test_a_round_whose_hit_expires_unworked_is_offered_again(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    path, _truth = write_refine_workflow(tmp_path, "refine-expired", pictures=1, complete=0)
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    hit_id = _round_hit(requester_sessions, workflow_id, 1)
    mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))

    report = run_step(requester_sessions, market, workflow_id, hit_page)
    assert report.created == 1 and report.published == 1
    with session_scope(requester_sessions) as session:
        rounds = session.scalars(
            select(ChainRound)
            .join(Chain, Chain.id == ChainRound.chain_id)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.workflow_id == workflow_id)
            .order_by(ChainRound.id)
        ).all()
    assert [(r.round, r.attempt, r.status) for r in rounds] == [(1, 1, "expired"), (1, 2, "open")]
    assert rounds[1].previous_text == rounds[0].previous_text
