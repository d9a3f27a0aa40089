"""A launch that stops half way is resumed with ``hitforge launch --resume`` and creates no HIT twice."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import yaml
from click.testing import CliRunner, Result
from sqlalchemy import func, select

from demo.data import write_rating_demo
from demo.runner import RunningServer, serve_in_thread
from hits.db import session_scope
from hits.market.accounts import IssuedKey
from hits.market.models import HIT
from hits.requester.tables.campaigns import Campaign, PublishedHIT
from server import create_app
from server.cli.main import main
from tests.conftest import boto3_client, new_requester
from tests.helpers import rating_campaign_spec

HITS = 8


def write_campaign(folder: Path) -> tuple[Path, str]:
    name = f"resume-{uuid.uuid4().hex[:8]}"
    write_rating_demo(folder, items=HITS * 2, gold=HITS, seed=3)
    path = folder / "campaign.yaml"
    path.write_text(yaml.safe_dump(rating_campaign_spec(name)))
    return path, name


def hitforge(settings, url: str, key: IssuedKey, *args: str, secret: str | None = None) -> Result:  # type: ignore[no-untyped-def]
    env = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_PUBLIC_URL": url,
        "HITFORGE_MTURK_ENDPOINT_URL": url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": key.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": secret or key.secret_access_key,
        "COLUMNS": "300",
    }
    return CliRunner().invoke(main, ["launch", *args], env=env)


def marketplace_hits(url: str, key: IssuedKey) -> list[dict]:  # type: ignore[type-arg]
    client = boto3_client(url, key)
    return [hit for page in client.get_paginator("list_hits").paginate() for hit in page["HITs"]]


def assert_published_once(requester_sessions, url: str, key: IssuedKey, name: str) -> None:  # type: ignore[no-untyped-def]
    hits = marketplace_hits(url, key)
    assert len(hits) == HITS
    assert len({h["RequesterAnnotation"] for h in hits}) == HITS
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None and campaign.status == "running"
        rows = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign.id)).all()
        assert sorted(r.mturk_hit_id or "" for r in rows) == sorted(h["HITId"] for h in hits)


def stop_after(server: RunningServer, market_sessions, requester_id: str, hits: int) -> threading.Thread:  # type: ignore[no-untyped-def]
    """Stop ``server`` once the requester has ``hits`` HITs: the marketplace goes away mid-launch."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with session_scope(market_sessions) as session:
                count = session.scalar(
                    select(func.count()).select_from(HIT).where(HIT.requester_id == requester_id)
                )
            if (count or 0) >= hits:
                server.stop()
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_launch_cut_off_half_way_is_resumed(
    tmp_path, settings, live_server, market_sessions, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions)
    path, name = write_campaign(tmp_path)
    doomed = serve_in_thread(create_app(settings=settings))
    watcher = stop_after(doomed, market_sessions, key.requester_id, 3)

    stopped = hitforge(settings, doomed.url, key, str(path))
    watcher.join(10)
    assert stopped.exit_code == 1, stopped.output
    published = len(marketplace_hits(live_server.url, key))
    assert 3 <= published < HITS
    assert f"stopped with {published} of {HITS} HITs published" in stopped.output
    assert "Unreachable" in stopped.output
    assert f"hitforge launch --resume {name}" in stopped.output
    assert stopped.exception is None or isinstance(stopped.exception, SystemExit)  # no traceback

    again = hitforge(settings, live_server.url, key, str(path))  # the same command points at --resume
    assert again.exit_code == 2 and "--resume" in again.output
    assert f"{HITS - published} of its HITs" in again.output

    resumed = hitforge(settings, live_server.url, key, "--resume", str(path))
    assert resumed.exit_code == 0, resumed.output
    assert f"campaign {name} is running" in resumed.output
    assert_published_once(requester_sessions, live_server.url, key, name)

    done = hitforge(settings, live_server.url, key, "--resume", name)
    assert done.exit_code == 2 and "all its HITs are published already" in done.output
    assert len(marketplace_hits(live_server.url, key)) == HITS


def test_a_launch_with_bad_keys_is_resumed_by_name_with_good_ones(
    tmp_path, settings, live_server, market_sessions, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions)
    path, name = write_campaign(tmp_path)
    url = live_server.url

    bad = hitforge(settings, url, key, str(path), secret="not-the-secret")
    assert bad.exit_code == 1, bad.output
    assert f"stopped with 0 of {HITS} HITs published" in bad.output
    assert f"hitforge launch --resume {name}" in bad.output

    resumed = hitforge(settings, url, key, "--resume", name)
    assert resumed.exit_code == 0, resumed.output
    assert_published_once(requester_sessions, url, key, name)


def test_a_hit_created_but_not_recorded_is_found_not_created_again(
    tmp_path, settings, live_server, market_sessions, requester_sessions
) -> None:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions)
    path, name = write_campaign(tmp_path)
    url = live_server.url
    assert hitforge(settings, url, key, str(path)).exit_code == 0
    # A crash between CreateHIT and recording its id: the row forgot two HITs.
    with session_scope(requester_sessions) as session:
        campaign = session.scalar(select(Campaign).where(Campaign.name == name))
        assert campaign is not None
        campaign.status = "publishing"
        rows = session.scalars(
            select(PublishedHIT).where(PublishedHIT.campaign_id == campaign.id).order_by(PublishedHIT.id)
        ).all()
        for row in rows[-2:]:
            row.mturk_hit_id = None
    resumed = hitforge(settings, url, key, "--resume", str(path))
    assert resumed.exit_code == 0, resumed.output
    assert_published_once(requester_sessions, url, key, name)
