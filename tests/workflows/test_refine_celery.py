"""A sequential-refinement workflow run by the real Celery worker, with a simulated crowd over HTTP."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from demo.crowd import Profile
from demo.runner import spawn_worker, stop_process
from hits.db import session_scope
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import PublishedHIT
from hits.requester.tables.workflows import Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.text_metrics import round_metrics
from hits.requester.workflows.engine import workflow_committed
from hits.requester.workflows.setup import create_workflow
from server.cli.main import main
from tests.workers.test_review_pipeline import worker_env
from tests.workflows.helpers import refine_bot, work_until, write_refine_workflow

pytestmark = pytest.mark.celery


def test_chains_stop_on_similarity_or_round_limit_and_a_rejected_round_is_redone(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    name = "refine-celery"
    path, truth = write_refine_workflow(
        tmp_path, name, pictures=4, complete=2, rounds={"max_rounds": 2, "jaccard_threshold": 0.8, "ngram": 2}
    )
    with session_scope(requester_sessions) as session:
        workflow = create_workflow(session, load_campaign_file(path))
        workflow.access_key_id = market.access_key_id
        workflow_id = workflow.id
    title = f"Improve a description {name}"
    spammer = refine_bot(live_server.url, "refine-spam", Profile("spammer", 0.0, "random"), truth, title)
    careful = [
        refine_bot(live_server.url, f"refine-careful-{i}", Profile("perfect", 1.0), truth, title)
        for i in range(5)
    ]
    spammer.sign_in()
    for bot in careful:
        bot.sign_in()

    def status() -> str:
        with session_scope(requester_sessions) as session:
            found = session.get(Workflow, workflow_id)
            return found.status if found else ""

    def rounds_made() -> bool:
        with session_scope(requester_sessions) as session:
            made = (
                select(ChainRound.id)
                .join(Chain, Chain.id == ChainRound.chain_id)
                .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
                .where(WorkflowStage.workflow_id == workflow_id)
            )
            return session.scalar(made.limit(1)) is not None

    process = spawn_worker(worker_env(settings, requester), tmp_path / "celery.log")
    try:
        work_until([], rounds_made, timeout=60)
        # The spammer takes the first round HIT it sees; its nonsense is rejected and redone.
        work_until([spammer], lambda: spammer.result.submitted == 1, timeout=90)
        work_until(careful, lambda: status() == "done")
    finally:
        stop_process(process)

    with session_scope(requester_sessions) as session:
        stage = session.scalar(select(WorkflowStage).where(WorkflowStage.workflow_id == workflow_id))
        assert stage is not None
        chains = {c.key: c for c in session.scalars(select(Chain).where(Chain.stage_id == stage.id))}
        rounds = list(
            session.scalars(
                select(ChainRound)
                .where(ChainRound.chain_id.in_([c.id for c in chains.values()]))
                .order_by(ChainRound.chain_id, ChainRound.round, ChainRound.attempt)
            )
        )
        by_chain: dict[int, list[ChainRound]] = defaultdict(list)
        for r in rounds:
            by_chain[r.chain_id].append(r)
        hits = list(
            session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == stage.campaign_id))
        )
        committed = workflow_committed(session, session.get(Workflow, workflow_id))  # type: ignore[arg-type]

        # The fully described drawings converge in round 1; the others run to the round limit (2).
        complete = ["pic-0000", "pic-0001"]
        for key, chain in chains.items():
            approved = [r for r in by_chain[chain.id] if r.status == "approved"]
            assert chain.status == "done"
            if key in complete:
                assert chain.stop_reason is not None and chain.stop_reason.startswith("converged")
                assert len(approved) == 1 and approved[0].metrics["jaccard"] >= 0.8  # type: ignore[index]
            else:
                assert chain.stop_reason == "round limit: 2 rounds"
                assert [r.round for r in approved] == [1, 2]
                assert all(r.metrics["jaccard"] < 0.8 for r in approved)  # type: ignore[index]

        # The spammer's round was rejected and redone by someone else; it fed no later round.
        rejected = [r for r in rounds if r.status == "rejected"]
        assert [r.worker_id for r in rejected] == [spammer.result.worker_id]
        bad = rejected[0]
        redo = [r for r in by_chain[bad.chain_id] if r.round == bad.round and r.attempt == bad.attempt + 1]
        assert len(redo) == 1 and redo[0].status == "approved" and redo[0].worker_id != bad.worker_id
        assert redo[0].previous_text == bad.previous_text
        assert all(r.previous_text != bad.text for r in rounds)

        # No worker worked on a drawing twice (each round's worker, rejected ones included).
        for chain_rounds in by_chain.values():
            workers = [r.worker_id for r in chain_rounds]
            assert None not in workers and len(set(workers)) == len(workers)

        # The per-round record: each round starts from the last approved text, figures recomputed.
        for chain in chains.values():
            previous = chain.seed_text
            for r in by_chain[chain.id]:
                assert r.previous_text == previous
                if r.status == "approved":
                    assert r.metrics == round_metrics(previous, r.text, 2)  # type: ignore[arg-type]
                    assert r.work_seconds is not None and r.work_seconds >= 0
                    previous = r.text
        assert chains["pic-0002"].seed_text == "A drawing of two coloured shapes."
        assert chains["pic-0002"].seed_source == "seeder builtin"
        assert chains["pic-0000"].seed_source == "items file"

        # Exactly once: one HIT row per round, one marketplace HIT per row; within budget.
        assert len(hits) == len(rounds) and all(h.mturk_hit_id for h in hits)
        # Each round's HIT commits one assignment: $0.10 and MTurk's 20% fee.
        assert committed == Decimal("0.12") * len(hits) <= Decimal("5.00")
    annotations = [
        h["RequesterAnnotation"] for page in mturk.get_paginator("list_hits").paginate() for h in page["HITs"]
    ]
    mine = [a for a in annotations if a.startswith(f"hitforge-c{stage.campaign_id}-")]
    assert sorted(mine) == sorted(f"hitforge-c{stage.campaign_id}-h{h.id}" for h in hits)

    # The marketplace agrees: per drawing, every assignment of its HITs is a different worker.
    with session_scope(requester_sessions) as session:
        hit_chain = dict(
            session.execute(
                select(PublishedHIT.mturk_hit_id, ChainRound.chain_id)
                .join(ChainRound, ChainRound.published_hit_id == PublishedHIT.id)
                .where(PublishedHIT.campaign_id == stage.campaign_id)
            ).all()
        )
    seen: dict[int, list[str]] = defaultdict(list)
    for hit_id, chain_id in hit_chain.items():
        for a in mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]:
            seen[chain_id].append(a["WorkerId"])
    assert all(len(set(w)) == len(w) for w in seen.values())

    # The CLI shows the record and its evolution over rounds.
    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    runner = CliRunner()
    per_round = runner.invoke(main, ["results", "rounds", name, "--per-round", "--format", "jsonl"], env=env)
    assert per_round.exit_code == 0, per_round.output
    lines = [json.loads(line) for line in per_round.output.splitlines()]
    assert len(lines) == sum(1 for r in rounds if r.status == "approved")
    summary = runner.invoke(main, ["results", "rounds", name, "--format", "jsonl"], env=env)
    rows = [json.loads(line) for line in summary.output.splitlines()]
    assert [r["round"] for r in rows] == [1, 2] and rows[0]["pictures"] == 4 and rows[1]["pictures"] == 2
    status_out = runner.invoke(main, ["workflow", "status", name, "--format", "json"], env=env)
    assert status_out.exit_code == 0, status_out.output
    view = json.loads(status_out.output)
    assert view["status"] == "done" and view["stages"][0]["chains"] == {"done": 4}
    reasons = sorted(c["stop_reason"].split(":")[0] for c in view["chains"])
    assert reasons == ["converged", "converged", "round limit", "round limit"]
