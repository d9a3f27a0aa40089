"""A stage fed by an earlier one: a write stage's approved sentences seed the refine rounds."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner
from sqlalchemy import select

from demo.crowd import Bot, Profile
from demo.tasks import get_demo_task
from hits.db import session_scope
from hits.requester.tables.campaigns import Submission
from hits.requester.tables.workflows import Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.workflows.publish import run_step
from server.cli.main import main
from tests.server.worker_helpers import WorkerClient
from tests.workflows.test_refine_blinding import _round_hit, _sync


def _two_stage_file(tmp_path, name: str) -> dict:  # type: ignore[no-untyped-def]
    """A write stage feeding a refine stage; returns the write bots' truth."""
    task = get_demo_task("write")
    truth = task.write_data(tmp_path, 2, 0, 5)
    spec = {
        "name": name,
        "template": "write",
        "title": f"Write one sentence {name}",
        "description": "One sentence per drawing.",
        "reward": "0.05",
        "budget": "3.00",
        "assignments_per_hit": 1,
        "items_per_hit": 1,
        "items": "items.jsonl",
        "media_dir": "media",
        "auto_approval_delay_seconds": 3600,
        "quality": {"min_words": 3},
        "workflow": {
            "first_stage": "sentence",
            "stages": [
                {
                    "name": "describe",
                    "template": "refine",
                    "from": "sentence",
                    "title": f"Improve a description {name}",
                    "reward": "0.10",
                    "rounds": {"max_rounds": 2},
                }
            ],
        },
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    return truth


def test_approved_sentences_of_the_first_stage_seed_the_rounds_and_their_writers_are_kept_out(
    tmp_path, settings, live_server, requester, market, requester_sessions
) -> None:
    task = get_demo_task("write")
    truth = _two_stage_file(tmp_path, "two-stage")
    env = {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_PUBLIC_URL": settings.public_url,
        "HITFORGE_MTURK_ENDPOINT_URL": settings.public_url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
    }
    runner = CliRunner()
    launched = runner.invoke(main, ["workflow", "launch", str(tmp_path / "campaign.yaml")], env=env)
    assert launched.exit_code == 0, launched.output
    status = json.loads(
        runner.invoke(main, ["workflow", "status", "two-stage", "--format", "json"], env=env).output
    )
    assert [(s["name"], s["source"], s["kind"], s["hits"]) for s in status["stages"]] == [
        ("sentence", "items", "single", 2),
        ("describe", "sentence", "rounds", 0),
    ]
    assert {c["waiting_on"] for c in status["chains"]} == {
        "stage sentence: approved work on this picture (or its QA review)"
    }

    writer = Bot(
        live_server.url, "two-stage-writer", Profile("perfect", 1.0), truth, fill_form=task.fill_form
    )
    writer.title_filter = "two-stage"
    assert writer.run(max_hits=2).submitted == 2
    _sync(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        workflow = session.scalar(select(Workflow).where(Workflow.name == "two-stage"))
        assert workflow is not None
        workflow_id = workflow.id
        sentences = {
            s.assignment_id: s.answers["answers"][0]
            for s in session.scalars(
                select(Submission).where(Submission.worker_id == writer.result.worker_id)
            )
        }
        assert len(sentences) == 2
    assert run_step(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit").published == 2

    with session_scope(requester_sessions) as session:
        chains = session.scalars(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(Chain.status == "running", WorkflowStage.workflow_id == workflow_id)
        ).all()
        firsts = session.scalars(
            select(ChainRound).where(ChainRound.chain_id.in_([c.id for c in chains]), ChainRound.round == 1)
        ).all()
    assert len(chains) == 2 and all(c.seed_source == "seeder builtin + upstream stage" for c in chains)
    starts = sorted(r.previous_text for r in firsts)
    expected = sorted(f"A drawing of two coloured shapes. {s}" for s in sentences.values())
    assert starts == expected
    # The writer has seen these drawings: the rounds' HITs are hidden from them; a newcomer sees them.
    hit_id = _round_hit(requester_sessions, workflow_id, 1)
    writer_view = writer.http.get(live_server.url + f"/hits/{hit_id}")
    assert writer_view.status_code == 403
    newcomer = WorkerClient(live_server.url, "two-stage-new")
    assert newcomer.get(f"/hits/{hit_id}").status_code == 200
    # The status says how many are kept out: a pool no larger never works the round.
    status = json.loads(
        runner.invoke(main, ["workflow", "status", "two-stage", "--format", "json"], env=env).output
    )
    assert {c["waiting_on"] for c in status["chains"] if c["stage"] == "describe"} == {
        "round 1: a worker new to the picture (1 kept out, having seen it)"
    }


def test_a_picture_whose_first_stage_work_is_held_waits_for_the_reviewer(
    tmp_path, live_server, market, requester_sessions
) -> None:
    from hits.requester.campaigns.service import publish_campaign
    from hits.requester.files.campaign import load_campaign_file
    from hits.requester.tables.campaigns import Campaign
    from hits.requester.workflows.engine import advance
    from hits.requester.workflows.setup import create_workflow

    task = get_demo_task("write")
    truth = _two_stage_file(tmp_path, "two-held")
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(tmp_path / "campaign.yaml"))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
        first = session.scalar(select(Campaign).where(Campaign.name == "two-held"))
        assert first is not None
        first_id = first.id
    publish_campaign(requester_sessions, market, first_id, live_server.url + "/tasks/hit")
    writer = Bot(live_server.url, "two-held-writer", Profile("perfect", 1.0), truth, fill_form=task.fill_form)
    writer.title_filter = "two-held"
    assert writer.run(max_hits=2).submitted == 2
    _sync(requester_sessions, market)
    with session_scope(requester_sessions) as session:
        held = session.scalars(
            select(Submission).where(Submission.worker_id == writer.result.worker_id).order_by(Submission.id)
        ).first()
        assert held is not None
        held.decision = "held"  # a flag held it for QA
        held_id = held.id
        campaign = session.get(Campaign, first_id)
        assert campaign is not None
        campaign.status = "review"  # the first stage is over
    with session_scope(requester_sessions) as session:
        made = advance(session, workflow_id)
        chains = session.scalars(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.workflow_id == workflow_id, WorkflowStage.name == "describe")
        ).all()
    assert len(made.need_seeds) == 1 and sorted(c.status for c in chains) == ["waiting", "waiting"]
    assert all(c.stop_reason is None for c in chains)
    with session_scope(requester_sessions) as session:
        again = session.get(Submission, held_id)
        assert again is not None
        again.decision = "approve"  # the reviewer approved it
    with session_scope(requester_sessions) as session:
        assert len(advance(session, workflow_id).need_seeds) == 2
