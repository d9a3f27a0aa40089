"""The workflow engine: the file's checks, exactly once under concurrent steps, never over budget."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.service import BudgetExceeded
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.files.workflow import StageSpec
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.workflows.engine import advance, workflow_committed
from hits.requester.workflows.publish import publish_rounds
from hits.requester.workflows.setup import create_workflow, stage_spec
from server.cli.main import main
from tests.workflows.helpers import write_refine_workflow


def _edit(path, **changes) -> None:  # type: ignore[no-untyped-def]
    spec = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        target = spec
        *parents, last = dotted.split("__")
        for p in parents:
            target = target[p]
        target[last] = value
    path.write_text(yaml.safe_dump(spec))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"workflow__stages": [{"name": "more", "template": "refine", "from": "nowhere"}]},
            "not an earlier stage",
        ),
        (
            {"workflow__stages": [{"name": "rate", "template": "rating", "from": "describe"}]},
            "only a rounds template",
        ),
        ({"assignments_per_hit": 3}, "set assignments_per_hit and items_per_hit to 1"),
        ({"quality": {"repost_rejected": True}}, "redoes rejected work itself"),
        ({"workflow__rounds": {"jaccard_threshold": 1.5}}, "jaccard_threshold"),
        ({"workflow__seeder": {"kind": "file", "nonsense": 1}}, "nonsense"),
    ],
)
def test_a_workflow_file_with_a_mistake_is_refused_naming_it(tmp_path, changes, message) -> None:  # type: ignore[no-untyped-def]
    path, _ = write_refine_workflow(tmp_path, "bad-file", pictures=1)
    _edit(path, **changes)
    with pytest.raises((InputFileError, InputFileErrors), match=message):
        load_campaign_file(path)


_STAGE = {"name": "again", "template": "refine", "from": "describe"}


@pytest.mark.parametrize(
    ("quality", "field"),
    [({"repost_rejected": True}, "repost_rejected"), ({"bonus": {"amount": "0.05"}}, "bonus")],
)
def test_a_stage_quality_that_redoes_or_pays_bonuses_is_refused_at_launch(  # type: ignore[no-untyped-def]
    tmp_path, settings, requester_sessions, quality, field
) -> None:
    # A stage's own quality is merged into its campaign: a repost there would redo a rejected
    # round a second time (the engine redoes it too) and spend outside the workflow's budget.
    path, _ = write_refine_workflow(tmp_path, "stage-repost", pictures=1)
    _edit(path, workflow__stages=[{**_STAGE, "quality": quality}])
    with pytest.raises(
        InputFileErrors, match=rf"stage 'again'.*workflow\.stages\.0\.quality\.{field}"
    ) as info:
        load_campaign_file(path)
    assert [e.path for e in info.value.errors] == [str(path)]
    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    result = CliRunner().invoke(main, ["workflow", "launch", str(path)], env=env)
    assert result.exit_code == 1, result.output
    assert str(path) in result.output and "redoes rejected work itself" in result.output
    assert f"workflow.stages.0.quality.{field}" in result.output
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(Workflow.id).where(Workflow.name == "stage-repost")) is None


def test_a_stage_quality_with_a_mistake_is_refused_at_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, _ = write_refine_workflow(tmp_path, "stage-typo", pictures=1)
    _edit(path, workflow__stages=[{**_STAGE, "quality": {"min_wrods": 3}}])
    with pytest.raises(InputFileErrors, match=r"stage 'again'.*min_wrods"):
        load_campaign_file(path)


def test_a_stage_added_in_code_with_a_repost_gets_no_campaign(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The merged policy is checked again where the stage's campaign spec is made.
    path, _ = write_refine_workflow(tmp_path, "stage-in-code", pictures=1)
    spec = load_campaign_file(path).spec
    stage = StageSpec.model_validate({**_STAGE, "quality": {"repost_rejected": "yes"}})
    with pytest.raises(ValueError, match="stage 'again'.*remove quality.repost_rejected"):
        stage_spec(spec, stage)


def test_launch_points_a_workflow_file_to_workflow_launch(tmp_path, settings) -> None:  # type: ignore[no-untyped-def]
    path, _ = write_refine_workflow(tmp_path, "wrong-command", pictures=1)
    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    result = CliRunner().invoke(main, ["launch", str(path)], env=env)
    assert result.exit_code == 2 and "hitforge workflow launch" in result.output


def _approve_latest(sessions, workflow_id: int, text_of) -> int:  # type: ignore[no-untyped-def]
    """Record an approved submission on each open round of the workflow, as the review pipeline would."""
    done = 0
    with session_scope(sessions) as session:
        open_rounds = (
            select(ChainRound)
            .join(Chain, Chain.id == ChainRound.chain_id)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(ChainRound.status == "open", WorkflowStage.workflow_id == workflow_id)
        )
        for rnd in session.scalars(open_rounds):
            session.add(
                Submission(
                    assignment_id=f"3ASSIGN{rnd.id:08d}",
                    published_hit_id=rnd.published_hit_id,
                    worker_id=f"AWORKER{rnd.id:06d}",
                    answers={"answers": [text_of(rnd.previous_text)]},
                    synced=True,
                    graded=True,
                    decision="approve",
                    work_seconds=12.5,
                )
            )
            done += 1
    return done


def test_a_chain_stops_rather_than_go_over_budget(tmp_path, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    # Two pictures, $0.12 a round: the budget pays three rounds, not four.
    path, _ = write_refine_workflow(tmp_path, "tight-budget", pictures=2, complete=2, budget="0.40")
    with pytest.raises(BudgetExceeded, match="needs at least 0.24"):
        _edit(path, budget="0.20")
        with session_scope(requester_sessions) as session:
            create_workflow(session, load_campaign_file(path))
    _edit(path, budget="0.40")
    with session_scope(requester_sessions) as session:
        workflow_id = create_workflow(session, load_campaign_file(path)).id
    with session_scope(requester_sessions) as session:
        assert len(advance(session, workflow_id).new_rounds) == 2
    assert (
        _approve_latest(
            requester_sessions, workflow_id, lambda old: "Something entirely new is written here now."
        )
        == 2
    )
    with session_scope(requester_sessions) as session:
        made = advance(session, workflow_id)
        workflow = session.get(Workflow, workflow_id)
        assert workflow is not None
        committed = workflow_committed(session, workflow)
        stage_id = session.scalar(select(WorkflowStage.id).where(WorkflowStage.workflow_id == workflow_id))
        chains = session.scalars(select(Chain).where(Chain.stage_id == stage_id)).all()
        stopped = [c for c in chains if c.status == "stopped"]
    assert len(made.new_rounds) == 1 and committed == Decimal("0.36") <= Decimal("0.40")
    assert chains and len(stopped) == 1 and stopped[0].stop_reason is not None
    assert stopped[0].stop_reason.startswith("budget: round 2 would cost 0.12, and 0.36 of the 0.40 budget")


def test_concurrent_steps_make_and_publish_each_round_once(
    tmp_path, live_server, market, mturk, requester_sessions
) -> None:
    path, _ = write_refine_workflow(tmp_path, "concurrent", pictures=6, complete=6)
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    errors: list[BaseException] = []
    made: list[int] = []

    def step() -> None:
        try:
            with session_scope(requester_sessions) as session:
                made.extend(advance(session, workflow_id).new_rounds)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=step) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(made) == 6
    published: list[int] = []

    def publish() -> None:
        try:
            published.append(
                publish_rounds(requester_sessions, market, workflow_id, live_server.url + "/tasks/hit")[0]
            )
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=publish) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with session_scope(requester_sessions) as session:
        campaign_id = session.scalar(
            select(WorkflowStage.campaign_id).where(WorkflowStage.workflow_id == workflow_id)
        )
        mine = dict(
            session.execute(
                select(PublishedHIT.id, PublishedHIT.mturk_hit_id).where(
                    PublishedHIT.campaign_id == campaign_id
                )
            ).all()
        )
    # Each publisher created or found all six (a token already used answers HITAlreadyExists).
    assert published == [6, 6, 6]
    assert len(mine) == 6 and all(mine.values()) and len(set(mine.values())) == 6
    annotations = [
        h["RequesterAnnotation"] for page in mturk.get_paginator("list_hits").paginate() for h in page["HITs"]
    ]
    tokens = {f"hitforge-c{campaign_id}-h{i}" for i in mine}
    assert sorted(a for a in annotations if a in tokens) == sorted(tokens)


def test_a_round_held_for_qa_waits_for_the_reviewer_then_moves_on(tmp_path, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    from hits.requester.workflows.report import find_workflow, workflow_view

    path, _ = write_refine_workflow(tmp_path, "held-round", pictures=1, complete=0)
    with session_scope(requester_sessions) as session:
        workflow_id = create_workflow(session, load_campaign_file(path)).id
    with session_scope(requester_sessions) as session:
        assert advance(session, workflow_id).need_seeds  # the builtin seeder: run outside a transaction
        chain = session.scalar(
            select(Chain)
            .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
            .where(WorkflowStage.workflow_id == workflow_id)
        )
        assert chain is not None
        chain.seed_text, chain.seed_source = "A drawing.", "test"
    with session_scope(requester_sessions) as session:
        assert len(advance(session, workflow_id).new_rounds) == 1
    _approve_latest(requester_sessions, workflow_id, lambda old: "Two shapes, one above the other, on grey.")
    with session_scope(requester_sessions) as session:
        submission = session.scalar(select(Submission).order_by(Submission.id.desc()))
        assert submission is not None
        submission.decision = "held"  # as finish_campaigns or a flag would leave it
        submission_id = submission.id
    with session_scope(requester_sessions) as session:
        assert advance(session, workflow_id).new_rounds == []
        found = find_workflow(session, "held-round")
        assert found is not None
        assert [c.waiting_on for c in workflow_view(session, found).chains] == ["round 1: a QA reviewer"]
    with session_scope(requester_sessions) as session:
        held = session.get(Submission, submission_id)
        assert held is not None
        held.decision = "approve"  # the reviewer approved it
    with session_scope(requester_sessions) as session:
        assert len(advance(session, workflow_id).new_rounds) == 1
        rounds = session.scalars(
            select(ChainRound).where(ChainRound.chain_id == chain.id).order_by(ChainRound.id)
        ).all()
    assert [(r.round, r.status) for r in rounds] == [(1, "approved"), (2, "open")]
    assert rounds[1].previous_text == "Two shapes, one above the other, on grey."


@pytest.mark.parametrize(
    ("seeder", "message"),
    [
        ({"kind": "file", "path": "missing.jsonl"}, "missing.jsonl does not exist"),
        ({"kind": "http", "url": "http://169.254.169.254/latest/meta-data"}, "cannot be used"),
        ({"kind": "nosuch"}, "unknown seeder 'nosuch'"),
    ],
)
def test_a_seeder_that_cannot_work_is_refused_at_launch(
    tmp_path, requester_sessions, seeder, message
) -> None:  # type: ignore[no-untyped-def]
    path, _ = write_refine_workflow(tmp_path, f"bad-seeder-{seeder['kind']}", pictures=1, seeder=seeder)
    with pytest.raises(ValueError, match=message), session_scope(requester_sessions) as session:
        create_workflow(session, load_campaign_file(path))
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(Workflow).where(Workflow.name == f"bad-seeder-{seeder['kind']}")) is None
