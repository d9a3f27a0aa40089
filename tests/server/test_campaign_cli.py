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
