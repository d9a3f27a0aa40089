"""The production stack of deploy/docker-compose.yml, brought up on this machine without Docker.

The services, their commands and their environment are read from the compose
file itself (so the recipe cannot drift from what is tested): a migration run,
the production web server, two Celery workers with their own node names and
one beat, on fresh databases and the test broker (PostgreSQL and Redis under
``HITFORGE_TEST_BACKEND=postgres``, the embedded default otherwise). A
campaign is launched with ``hitforge launch`` as a requester would, a small
crowd works through the production server, and the stack collects, decides
and applies every assignment once; ``/readyz`` and ``/metrics`` say so.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from demo.crowd import Profile
from demo.data import write_rating_demo
from demo.runner import free_port, stop_process
from hits.db import make_engine, make_session_factory, session_scope
from tests.conftest import BACKEND, _postgres_database
from tests.helpers import campaign_bot, rating_campaign_spec
from tests.server.test_observability import metric_sample

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

COMPOSE = Path(__file__).parents[2] / "deploy" / "docker-compose.yml"
#: The compose file's services that run hitforge, in the order the stack starts them.
HITFORGE_SERVICES = ("migrate", "web", "worker", "beat")


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return loaded


def _environment(var_dir: Path, port: int) -> dict[str, str]:
    """The compose file's variables, with this machine's values for what names a service or a secret."""
    declared = _compose()["x-hitforge"]["environment"]
    env = {
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_SECRET_KEY": secrets.token_urlsafe(32),
        "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "HITFORGE_MTURK_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "HITFORGE_METRICS_TOKEN": secrets.token_urlsafe(16),
        "HITFORGE_TRUSTED_PROXIES": "0",
        "HITFORGE_LOG_FORMAT": declared["HITFORGE_LOG_FORMAT"],
        "HITFORGE_MTURK_ACCESS_KEY_ID": "",
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": "",
        "HITFORGE_SYNC_INTERVAL": "0.5",
    }
    if BACKEND == "postgres":
        env["HITFORGE_DATABASE_URL"] = _postgres_database()
        # A Redis database of its own: the test session's workers must not take this stack's tasks.
        env["HITFORGE_BROKER_URL"] = str(make_url(os.environ["HITFORGE_TEST_REDIS_URL"]).set(database="7"))
    else:
        env["HITFORGE_DATABASE_URL"] = ""  # the embedded default under HITFORGE_VAR_DIR
        env["HITFORGE_BROKER_URL"] = ""
    # Every variable the recipe sets is set here too (with this machine's value).
    assert set(declared) <= set(env), set(declared) - set(env)
    return env


def _argv(service: str, **replace: str) -> list[str]:
    """The service's command from the compose file, run as this interpreter's ``hitforge``."""
    command: list[str] = list(_compose()["services"][service]["command"])
    assert command[0] == "hitforge", command
    for old, new in replace.items():
        command = [part.replace(old, new) for part in command]
    return [sys.executable, "-m", "server.cli", *command[1:]]


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module
        argv,
        env={**os.environ, **env},
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait(predicate, timeout: float, what: str, logs: list[Path]) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    tails = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}" for log in logs)
    raise AssertionError(f"timed out waiting until {what}\n{tails}")


def _sample(scrape: str, name: str, **labels: str) -> float:
    """The scrape's value of ``name`` with exactly ``labels``; 0 for a series not there (never counted)."""
    return metric_sample(scrape, name, **labels) or 0.0


def test_the_compose_stack_runs_a_campaign_end_to_end(tmp_path: Path) -> None:
    compose = _compose()
    assert set(HITFORGE_SERVICES) <= set(compose["services"])
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = _environment(tmp_path / "var", port)
    env = {key: value for key, value in env.items() if value != "" or key.startswith("HITFORGE_MTURK")}
    (tmp_path / "var").mkdir()
    migrated = subprocess.run(  # noqa: S603
        _argv("migrate"), env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert migrated.returncode == 0, migrated.stderr
    made = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "server.cli", "requester", "create", "stack-lab", "--deposit", "20.00"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    keys = dict(re.findall(r"^(HITFORGE_MTURK_\w+)=(\S+)$", made.stdout, re.MULTILINE))
    assert set(keys) == {"HITFORGE_MTURK_ACCESS_KEY_ID", "HITFORGE_MTURK_SECRET_ACCESS_KEY"}, made.stdout
    env.update(keys)

    logs = [tmp_path / name for name in ("web.log", "worker-1.log", "worker-2.log", "beat.log")]
    # The recipe listens on every interface inside its container; here, on loopback only.
    web = _start(_argv("web", **{"0.0.0.0": "127.0.0.1", "8000": str(port)}), env, logs[0])  # noqa: S104
    workers = [_start(_argv("worker", **{"%h": f"host{n}"}), env, logs[n]) for n in (1, 2)]
    beat = _start(_argv("beat"), env, logs[3])
    try:
        _wait(lambda: _ready(url), 90, "the web server is ready", logs)
        folder = tmp_path / "campaign"
        folder.mkdir()
        truth = write_rating_demo(folder, items=8, gold=4, seed=3)
        spec = rating_campaign_spec(
            "stack",
            assignments_per_hit=2,
            # Gold alone: with two workers, the worker model's consensus for each is the other one,
            # and whether the perfect worker's work is judged before or after the always-wrong one's
            # answers arrive decides whether it is approved or held. This test is about the stack.
            quality={"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "worker_model": False},
        )
        (folder / "campaign.yaml").write_text(yaml.safe_dump(spec))
        launched = subprocess.run(  # noqa: S603
            [sys.executable, "-m", "server.cli", "launch", str(folder / "campaign.yaml")],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert launched.returncode == 0, launched.stdout + launched.stderr
        good = campaign_bot(url, "stack-good", Profile("perfect", 1.0), truth, "stack")
        bad = campaign_bot(url, "stack-bad", Profile("always-off", 0.0), truth, "stack")
        submitted = good.run(max_hits=4).submitted + bad.run(max_hits=4).submitted
        assert submitted == 8

        sessions = make_session_factory(make_engine(_requester_url(env)))
        _wait(lambda: _all_applied(sessions, 8), 150, "every assignment is decided and applied", logs)
        scrape = requests.get(
            url + "/metrics", headers={"Authorization": f"Bearer {env['HITFORGE_METRICS_TOKEN']}"}, timeout=10
        ).text
    finally:
        for process in (*workers, beat):
            stop_process(process)
        web.send_signal(signal.SIGTERM)
        try:
            web.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(web.pid, signal.SIGKILL)

    # Each decision applied once: as many approvals and rejections as assignments, none refused.
    decided = _sample(
        scrape, "hitforge_mturk_api_calls_total", operation="ApproveAssignment", outcome="ok"
    ) + (_sample(scrape, "hitforge_mturk_api_calls_total", operation="RejectAssignment", outcome="ok"))
    assert decided == 8, scrape
    refused = [line for line in scrape.splitlines() if re.search(r'Assignment",outcome="(?!ok)', line)]
    assert not refused, refused
    assert _sample(scrape, "hitforge_worker_submissions_total") == 8
    assert _sample(scrape, "hitforge_outbox_backlog") == 0
    # Both workers took part, each under its own node name; one beat scheduled.
    texts = [log.read_text(errors="replace") for log in logs]
    for n in (1, 2):
        assert f"review@host{n}" in texts[n] and "succeeded" in texts[n], texts[n][-2000:]
    assert "Sending due task sync-submissions" in texts[3]
    assert "Traceback" not in "".join(texts[1:]), "".join(texts[1:])[-4000:]
    # JSON logs with request ids, as the recipe asks for.
    access = [line for line in texts[0].splitlines() if '"logger": "hitforge.access"' in line]
    assert access and all('"request_id": "' in line for line in access)


def _ready(url: str) -> bool:
    try:
        return requests.get(url + "/readyz", timeout=5).status_code == 200
    except requests.RequestException:
        return False


def _requester_url(env: dict[str, str]) -> str:
    return env.get("HITFORGE_DATABASE_URL") or f"sqlite:///{env['HITFORGE_VAR_DIR']}/requester.sqlite"


def _all_applied(sessions, assignments: int) -> bool:  # type: ignore[no-untyped-def]
    from hits.requester.tables.campaigns import OutboxEntry

    with session_scope(sessions) as session:
        rows = Counter(
            dict(
                session.execute(
                    select(OutboxEntry.status, func.count())
                    .where(OutboxEntry.action.in_(("approve", "reject")))
                    .group_by(OutboxEntry.status)
                ).all()
            )
        )
    return rows["done"] == assignments and sum(rows.values()) == assignments
