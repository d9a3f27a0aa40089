"""A layout batch's campaign row only anchors its outbox and scopes: campaign tools leave it alone.

It has no template, so aggregating it (``hitforge results``, the dashboard's
Compute button) would fail in the worker; both say what to use instead.
"""

from __future__ import annotations

import uuid

from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.tables.campaigns import Campaign
from server.cli.main import main
from tests.batches.test_batch_cli import cli_env, files, publish
from tests.server.test_dashboard_roles import Dashboard, make_user


def test_campaign_tools_point_a_batch_to_batch_results(
    live_server, settings, requester, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    name = f"anchor-{uuid.uuid4().hex[:6]}"
    layout, csv = files(tmp_path, b"word\nhello\n")
    assert publish(env, layout, csv, name).exit_code == 0
    for command in (["results", "export", f"batch: {name}"], ["results", "aggregate", f"batch: {name}"]):
        refused = CliRunner().invoke(main, command, env=env)
        assert refused.exit_code == 1, refused.output
        assert "is a layout batch: use `hitforge batch results`" in refused.output
        assert "Traceback" not in refused.output

    with session_scope(requester_sessions) as session:
        campaign_id = session.scalar(select(Campaign.id).where(Campaign.name == f"batch: {name}"))
    dash = Dashboard(live_server.url, make_user(requester_sessions, "requester", requester.access_key_id))
    home = dash.home()
    assert f"batch: {name}" in home
    assert f"/dashboard/campaigns/{campaign_id}/results" not in home
    answered = dash.post(f"/dashboard/campaigns/{campaign_id}/results")
    assert answered.status_code == 200 and "has no labels to aggregate" in answered.text
