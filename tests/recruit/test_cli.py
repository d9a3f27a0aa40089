"""``hitforge launch`` of a recruiting campaign, stopped before publishing and resumed; ``recruit``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from demo.data import write_rating_demo
from hits.requester.recruit.prolific.standin import RunningStandin
from server.cli.main import main
from tests.helpers import rating_campaign_spec
from tests.recruit.test_launch_study import RECRUIT


def cli_env(settings: Any, live_server: Any, requester: Any, standin: RunningStandin) -> dict[str, str]:
    return {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_BROKER_URL": settings.broker_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_PUBLIC_URL": live_server.url,
        "HITFORGE_MTURK_ENDPOINT_URL": live_server.url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
        "HITFORGE_PROLIFIC_API_URL": standin.api_url,
        "HITFORGE_PROLIFIC_TOKEN": standin.app.token,
    }


def test_launch_stopped_before_publishing_resumes_without_a_second_study(
    tmp_path: Path, settings: Any, live_server: Any, requester: Any, standin: RunningStandin
) -> None:
    write_rating_demo(tmp_path, items=6, gold=4, seed=1)
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(rating_campaign_spec("rc-cli", recruit=RECRUIT)))
    env = cli_env(settings, live_server, requester, standin)
    runner = CliRunner()

    no_token = runner.invoke(
        main, ["launch", str(tmp_path / "campaign.yaml")], env={**env, "HITFORGE_PROLIFIC_TOKEN": ""}
    )
    assert no_token.exit_code == 2 and "HITFORGE_PROLIFIC_TOKEN" in no_token.output
    standin.app.state.refusing["study_transition"] = 400
    first = runner.invoke(main, ["launch", str(tmp_path / "campaign.yaml")], env=env)
    assert first.exit_code == 1, first.output
    assert "not published" in first.output and "hitforge launch --resume rc-cli" in first.output
    assert len(standin.app.state.studies) == 1
    del standin.app.state.refusing["study_transition"]
    resumed = runner.invoke(main, ["launch", "--resume", "rc-cli"], env=env)
    assert resumed.exit_code == 0, resumed.output
    assert "published" in resumed.output
    (study_id,) = standin.app.state.studies
    assert standin.app.state.studies[study_id]["status"] == "ACTIVE"

    status = runner.invoke(main, ["recruit", "status", "rc-cli"], env=env)
    assert status.exit_code == 0 and f"study {study_id}: ACTIVE" in status.output
    paused = runner.invoke(main, ["recruit", "pause", "rc-cli"], env=env)
    assert paused.exit_code == 0 and standin.app.state.studies[study_id]["status"] == "PAUSED"
    assert runner.invoke(main, ["recruit", "resume", "rc-cli"], env=env).exit_code == 0
    assert standin.app.state.studies[study_id]["status"] == "ACTIVE"
    synced = runner.invoke(main, ["recruit", "sync", "rc-cli"], env=env)
    assert synced.exit_code == 0 and "0 places read" in synced.output
    assert runner.invoke(main, ["recruit", "stop", "rc-cli"], env=env).exit_code == 0
    assert standin.app.state.studies[study_id]["status"] == "AWAITING REVIEW"
    for result in (no_token, first, resumed, status, paused, synced):
        assert standin.app.token not in result.output  # the token never shows
