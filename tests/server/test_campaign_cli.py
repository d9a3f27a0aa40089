"""A requester steering a campaign from the shell: list, status, pause, resume, extend, budget, cancel.

Each command is checked against the running marketplace (boto3) and the audit log,
which names the command line and the shell's user.
"""

from __future__ import annotations

import uuid

from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import Campaign, PublishedHIT, ReviewAction
from server.cli.main import main
from tests.helpers import launch_demo_campaign
from tests.workers.test_review_pipeline import worker_env


def test_the_shell_lists_pauses_resumes_and_cancels_a_campaign(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    name = f"shell-{uuid.uuid4().hex[:6]}"
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=3, name=name
    )
    env = worker_env(settings, requester)
    run = CliRunner()
    with session_scope(requester_sessions) as session:
        hit_ids = set(
            session.scalars(select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id))
        )

    def states() -> set[str]:
        return {h["HITStatus"] for h in mturk.list_hits(MaxResults=100)["HITs"] if h["HITId"] in hit_ids}

    listed = run.invoke(main, ["campaign", "list", "--status", "running"], env=env)
    assert listed.exit_code == 0 and name in listed.output and "0/6" in listed.output, listed.output
    paused = run.invoke(main, ["campaign", "pause", name, "--note", "waiting for more pictures"], env=env)
    assert paused.exit_code == 0 and "paused" in paused.output and "applied: expire (3 HITs)" in paused.output
    assert "Assignable" not in states()
    again = run.invoke(main, ["campaign", "pause", name], env=env)
    assert (
        again.exit_code == 2 and "is paused: pause applies only to a campaign that is running" in again.output
    )
    resumed = run.invoke(main, ["campaign", "resume", name], env=env)
    assert resumed.exit_code == 0 and states() == {"Assignable"}
    assert run.invoke(main, ["campaign", "extend", name, "--hours", "48"], env=env).exit_code == 0
    low = run.invoke(main, ["campaign", "budget", name, "0.01"], env=env)
    assert low.exit_code == 2 and "would be below it" in low.output
    assert run.invoke(main, ["campaign", "budget", name, "lots"], env=env).exit_code == 2
    assert run.invoke(main, ["campaign", "budget", name, "$20.00"], env=env).exit_code == 0
    cancelled = run.invoke(main, ["campaign", "cancel", name], env=env)
    assert cancelled.exit_code == 0 and "Assignable" not in states()
    status = run.invoke(main, ["campaign", "status", name], env=env)
    assert "cancelling" in status.output and "budget $20.00" in status.output, status.output
    assert run.invoke(main, ["campaign", "pause", "no-such-campaign"], env=env).exit_code == 2
    with session_scope(requester_sessions) as session:
        assert session.get(Campaign, campaign_id).status == "cancelling"  # type: ignore[union-attr]
        logged = session.scalars(
            select(ReviewAction).where(ReviewAction.campaign_id == campaign_id).order_by(ReviewAction.id)
        ).all()
    assert [a.action for a in logged] == [
        "campaign pause",
        "campaign resume",
        "campaign extend",
        "campaign budget",
        "campaign cancel",
    ]
    assert "on the command line; waiting for more pictures" in logged[0].note


def test_work_is_added_to_a_running_campaign_within_its_budget_and_published(
    tmp_path, settings, live_server, requester, market, mturk, requester_sessions
) -> None:
    import json

    name = f"more-{uuid.uuid4().hex[:6]}"
    campaign_id, _ = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name=name
    )
    env = worker_env(settings, requester)
    run = CliRunner()
    first = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps({**row, "id": f"extra-{n}"}) + "\n" for n, row in enumerate(first)))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x1", "item": {"sentence": "no picture"}}) + "\n")

    def hits() -> set[str]:
        with session_scope(requester_sessions) as session:
            return {
                h
                for h in session.scalars(
                    select(PublishedHIT.mturk_hit_id).where(PublishedHIT.campaign_id == campaign_id)
                )
                if h
            }

    before = hits()
    again = run.invoke(main, ["campaign", "add", name, str(tmp_path / "items.jsonl")], env=env)
    assert again.exit_code == 2 and "has items with these ids already: 'item-0000'" in again.output, (
        again.output
    )
    broken = run.invoke(main, ["campaign", "add", name, str(bad)], env=env)
    assert broken.exit_code == 2 and "bad.jsonl" in broken.output and "line 1" in broken.output, broken.output
    with session_scope(requester_sessions) as session:
        budget = str(session.get(Campaign, campaign_id).budget)  # type: ignore[union-attr]
    # A budget with no room: refused, saying how to make room.
    assert run.invoke(main, ["campaign", "budget", name, "0.00"], env=env).exit_code == 2
    with session_scope(requester_sessions) as session:
        from hits.requester.quality.followups import committed_cost

        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.budget = committed_cost(session, campaign)
    poor = run.invoke(main, ["campaign", "add", name, str(more)], env=env)
    assert poor.exit_code == 2 and f"hitforge campaign budget {name}" in poor.output, poor.output
    assert hits() == before
    assert run.invoke(main, ["campaign", "budget", name, budget], env=env).exit_code == 0
    added = run.invoke(main, ["campaign", "add", name, str(more), "--note", "second batch"], env=env)
    assert added.exit_code == 0, added.output
    assert f"{len(first)} items added in 2 new HITs" in added.output and "published 2 HITs" in added.output
    now = hits()
    assert len(now - before) == 2
    states = {h["HITId"]: h["HITStatus"] for h in mturk.list_hits(MaxResults=100)["HITs"]}
    assert all(states[h] == "Assignable" for h in now - before)
    with session_scope(requester_sessions) as session:
        logged = session.scalars(
            select(ReviewAction.note).where(
                ReviewAction.campaign_id == campaign_id, ReviewAction.action == "campaign add work"
            )
        ).all()
    assert len(logged) == 1 and "items from more.jsonl; second batch" in logged[0]
    paused = run.invoke(main, ["campaign", "pause", name], env=env)
    assert paused.exit_code == 0
    late = run.invoke(main, ["campaign", "add", name, str(more)], env=env)
    assert late.exit_code == 2 and "resume it first" in late.output
    # A workflow's stage: its items come from the workflow, never by hand (they would belong to
    # no chain, and race the rounds for the campaign's next positions).
    assert run.invoke(main, ["campaign", "resume", name], env=env).exit_code == 0
    with session_scope(requester_sessions) as session:
        from decimal import Decimal

        from hits.requester.tables.workflows import Workflow, WorkflowStage

        workflow = Workflow(name=f"wf-{name}", spec={}, budget=Decimal("5.00"))
        session.add(workflow)
        session.flush()
        session.add(
            WorkflowStage(
                workflow_id=workflow.id, name="caption", position=0, campaign_id=campaign_id,
                source="items", kind="single",
            )
        )  # fmt: skip
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_text(more.read_text().replace('"extra-', '"fresh-'))
    staged = run.invoke(main, ["campaign", "add", name, str(fresh)], env=env)
    assert staged.exit_code == 2, staged.output
    assert f"is the 'caption' stage of workflow 'wf-{name}'" in staged.output, staged.output
    assert hits() == now
