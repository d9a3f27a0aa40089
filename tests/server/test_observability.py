"""Health, readiness, metrics and request ids, as an operator's probes and Prometheus see them."""

from __future__ import annotations

import io
import json
import logging
import re
from pathlib import Path

import pytest
import requests
from sqlalchemy import text

from hits.db import make_engine
from hits.settings import Settings
from server import create_app
from server.request_log import JsonFormatter, RequestIdFilter
from tests.conftest import RunningServer


def metric_sample(exposition: str, name: str, **labels: str) -> float | None:
    """The value of one sample of ``name`` with exactly ``labels`` in a scrape, or None."""
    for line in exposition.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        match = re.fullmatch(rf"{re.escape(name)}(?:\{{(.*)\}})? (\S+)", line)
        if match is None:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(1) or ""))
        if found == labels:
            return float(match.group(2))
    return None


def test_healthz_answers_without_touching_a_database(settings: Settings, tmp_path: Path) -> None:
    broken = settings.with_overrides(
        database_url=f"sqlite:///{tmp_path}/missing/requester.sqlite",
        market_database_url=f"sqlite:///{tmp_path}/missing/market.sqlite",
    )
    client = create_app(settings=broken).test_client()
    reply = client.get("/healthz")
    assert reply.status_code == 200 and reply.get_json() == {"status": "ok"}


def test_readyz_is_ready_on_a_migrated_deployment(live_server: RunningServer) -> None:
    reply = requests.get(live_server.url + "/readyz", timeout=30)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["status"] == "ready"
    assert {name: check["status"] for name, check in body["checks"].items()} == {
        "market_database": "ok",
        "requester_database": "ok",
        "broker": "ok",
    }


def test_readyz_says_which_part_is_not_ready_and_nothing_more(settings: Settings, tmp_path: Path) -> None:
    # A requester database nobody migrated, and a broker on a port nothing listens on.
    empty = tmp_path / "empty.sqlite"
    make_engine(f"sqlite:///{empty}").connect().close()
    unready = settings.with_overrides(
        database_url=f"sqlite:///{empty}", broker_url="redis://:sekrit-password@127.0.0.1:1/0"
    )
    reply = create_app(settings=unready).test_client().get("/readyz")
    assert reply.status_code == 503
    body = reply.get_json()
    assert body["status"] == "unready"
    assert body["checks"]["market_database"]["status"] == "ok"
    assert body["checks"]["requester_database"]["status"].startswith("migrations not applied")
    assert body["checks"]["broker"]["status"] == "unreachable"
    assert "sekrit" not in reply.get_data(as_text=True) and "127.0.0.1" not in reply.get_data(as_text=True)


def test_readyz_notices_a_database_one_migration_behind(settings: Settings, tmp_path: Path) -> None:
    from hits.schema import upgrade_side

    url = f"sqlite:///{tmp_path}/behind.sqlite"
    upgrade_side("requester", url)
    engine = make_engine(url)
    with engine.begin() as connection:  # as if the newest migration had not run yet
        connection.execute(text("UPDATE alembic_version_requester SET version_num = 'req0001_before'"))
    client = create_app(settings=settings.with_overrides(database_url=url)).test_client()
    reply = client.get("/readyz")
    assert reply.status_code == 503
    assert reply.get_json()["checks"]["requester_database"]["status"].startswith("migrations not applied")


def test_metrics_count_api_calls_errors_and_decisions_by_code(live_server: RunningServer, mturk) -> None:  # type: ignore[no-untyped-def]
    before = requests.get(live_server.url + "/metrics", timeout=30).text
    created_before = metric_sample(
        before, "hitforge_mturk_api_calls_total", operation="GetAccountBalance", outcome="ok"
    )
    mturk.get_account_balance()
    mturk.get_account_balance()
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.get_hit(HITId="3NOSUCHHIT000000000000000000")
    reply = requests.get(live_server.url + "/metrics", timeout=30)
    assert reply.status_code == 200 and reply.headers["Content-Type"].startswith("text/plain")
    after = reply.text
    assert (
        metric_sample(after, "hitforge_mturk_api_calls_total", operation="GetAccountBalance", outcome="ok")
        == (created_before or 0) + 2
    )
    assert (
        metric_sample(
            after,
            "hitforge_mturk_api_calls_total",
            operation="GetHIT",
            outcome="AWS.MechanicalTurk.HITDoesNotExist",
        )
        or 0
    ) >= 1
    # Latency per endpoint and status: the route's name, never the raw path.
    assert (
        metric_sample(
            after,
            "hitforge_http_request_duration_seconds_count",
            endpoint="mturk_api.dispatch",
            method="POST",
            status="200",
        )
        or 0
    ) >= 2  # fmt: skip
    assert metric_sample(after, "hitforge_outbox_backlog") is not None
    assert metric_sample(after, "hitforge_outbox_oldest_age_seconds") is not None
    for queue in ("celery", "hitforge-decisions"):
        assert metric_sample(after, "hitforge_task_queue_depth", queue=queue) is not None


def test_a_made_up_operation_is_counted_under_one_label(live_server: RunningServer, mturk) -> None:  # type: ignore[no-untyped-def]
    reply = requests.post(
        live_server.url + "/",
        headers={"X-Amz-Target": "MTurkRequesterServiceV20170117.MakeUpSomething12345"},
        data="{}",
        timeout=30,
    )
    assert reply.status_code == 400
    scrape = requests.get(live_server.url + "/metrics", timeout=30).text
    assert "MakeUpSomething12345" not in scrape
    assert (
        metric_sample(
            scrape, "hitforge_mturk_api_calls_total", operation="unknown", outcome="UnknownOperationException"
        )
        or 0
    ) >= 1


def test_metrics_are_refused_to_a_remote_scraper_without_the_token(settings: Settings) -> None:
    remote = {"REMOTE_ADDR": "203.0.113.7"}
    open_app = create_app(settings=settings).test_client()
    assert open_app.get("/metrics", environ_base=remote).status_code == 404
    assert open_app.get("/metrics").status_code == 200  # the test client is loopback
    guarded = create_app(settings=settings.with_overrides(metrics_token="scrape-me")).test_client()
    assert guarded.get("/metrics", environ_base=remote).status_code == 404
    wrong = {"Authorization": "Bearer scrape-you"}
    assert guarded.get("/metrics", environ_base=remote, headers=wrong).status_code == 404
    right = {"Authorization": "Bearer scrape-me"}
    assert guarded.get("/metrics", environ_base=remote, headers=right).status_code == 200


def test_open_hits_are_counted_per_running_campaign(
    live_server: RunningServer, market, requester_sessions, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from tests.helpers import launch_template_campaign

    campaign_id, _, _ = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, "rating", hits=3, name="metered"
    )
    from sqlalchemy import func, select

    from hits.db import session_scope
    from hits.requester.tables.campaigns import PublishedHIT

    with session_scope(requester_sessions) as session:
        open_hits = session.scalar(
            select(func.count()).where(PublishedHIT.campaign_id == campaign_id, PublishedHIT.status == "open")
        )
    scrape = requests.get(live_server.url + "/metrics", timeout=30).text
    assert open_hits and metric_sample(scrape, "hitforge_hits_open", campaign="metered") == open_hits


def test_the_api_request_id_is_the_one_in_the_log(settings: Settings) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    access = logging.getLogger("hitforge.access")
    access.addHandler(handler)
    previous = access.level
    access.setLevel(logging.INFO)
    try:
        app = create_app(settings=settings)
        client = app.test_client()
        reply = client.get("/healthz")
        assert reply.headers["X-Request-Id"]
        unsigned = client.post(
            "/",
            headers={"X-Amz-Target": "MTurkRequesterServiceV20170117.GetAccountBalance"},
            data="{}",
            query_string={"secret": "never-logged"},
        )
    finally:
        access.removeHandler(handler)
        access.setLevel(previous)
    request_id = unsigned.headers["x-amzn-RequestId"]
    assert request_id == unsigned.headers["X-Request-Id"]
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    api_lines = [line for line in lines if line.get("endpoint") == "mturk_api.dispatch"]
    assert len(api_lines) == 1
    line = api_lines[0]
    assert line["request_id"] == request_id and line["status"] == unsigned.status_code
    assert line["path"] == "/" and "never-logged" not in stream.getvalue()
    assert {"time", "level", "logger", "message", "duration_ms"} <= line.keys()


def test_the_grafana_dashboard_plots_only_metrics_the_server_exposes(live_server: RunningServer) -> None:
    dashboard = json.loads((Path(__file__).parents[2] / "deploy" / "grafana" / "hitforge.json").read_text())
    used = {
        re.sub(r"_(bucket|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"hitforge_\w+", target["expr"])
    }
    scrape = requests.get(live_server.url + "/metrics", timeout=30).text
    described = set(re.findall(r"^# HELP (\w+) ", scrape, re.MULTILINE))
    assert used and used <= described, used - described


def test_metrics_off_means_no_endpoint_and_no_timing(settings: Settings) -> None:
    client = create_app(settings=settings.with_overrides(metrics_enabled=False)).test_client()
    assert client.get("/metrics").status_code == 404
    assert client.get("/healthz").status_code == 200  # the probes stay
