"""`hitforge serve --production`: the documented production command serves the API and the site.

A real granian process with two workers, on this test session's database,
driven by the real boto3 client.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest
import requests
from botocore.config import Config

from demo.runner import free_port
from hits.market.accounts import add_funds
from hits.settings import Settings
from server.cli.serve import SHUTDOWN_GRACE_SECONDS
from tests.conftest import boto3_client, new_requester

pytestmark = pytest.mark.timeout(120)


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"the server did not listen:\n{log.read_text()}")


def _serve(settings: Settings, port: int, *, workers: int, log: Path) -> subprocess.Popen[bytes]:
    """``hitforge serve --production`` on ``port`` as an operator starts it, on the test's databases."""
    env = {
        **os.environ,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_BROKER_URL": settings.broker_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{port}",
    }
    argv = [sys.executable, "-m", "server.cli", "serve", "--production", "--port", str(port)]
    argv += ["--workers", str(workers), "--threads", "2"]
    return subprocess.Popen(argv, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT)  # noqa: S603


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            raw = stat.read_text()
        except OSError:
            continue
        if int(raw[raw.rindex(")") + 2 :].split()[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_production_server_answers_boto3_and_the_worker_site(
    settings: Settings, market_sessions, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    port, log = free_port(), tmp_path / "server.log"
    url = f"http://127.0.0.1:{port}"
    process = _serve(settings, port, workers=2, log=log)
    try:
        _wait_for_port(port, process, log)
        # The command became granian (exec, not a child), which runs the two workers asked for.
        assert b"granian" in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        deadline = time.monotonic() + 60  # returns as soon as both workers run
        while len(_children(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_children(process.pid)) >= 2
        key = new_requester(market_sessions, "12.50")
        mturk = boto3_client(url, key)
        assert mturk.get_account_balance()["AvailableBalance"] == "12.50"
        hit_ids = set()
        for n in range(6):  # several connections' worth, so both workers answer
            hit = mturk.create_hit(
                MaxAssignments=1,
                LifetimeInSeconds=600,
                AssignmentDurationInSeconds=300,
                Reward="0.10",
                Title=f"Production server check {n}",
                Description="A HIT created through the production server.",
                Question=(
                    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
                    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://example.invalid/task</ExternalURL>'
                    "<FrameHeight>400</FrameHeight></ExternalQuestion>"
                ),
            )["HIT"]
            hit_ids.add(hit["HITId"])
        listed = {h["HITId"] for page in mturk.get_paginator("list_hits").paginate() for h in page["HITs"]}
        assert hit_ids <= listed
        with pytest.raises(mturk.exceptions.RequestError):
            mturk.get_hit(HITId="3NOSUCHHIT000000000000000000")
        page = requests.get(url + "/", timeout=10)
        assert page.status_code == 200
        assert "text/html" in page.headers["Content-Type"]
        assert requests.get(url + "/readyz", timeout=10).json()["status"] == "ready"
        # Each worker process counts its own calls; a scrape of either one sums them all.
        counted = Path(settings.var_dir) / "metrics"
        assert len({f.name.rsplit("_", 1)[1] for f in counted.glob("counter_*.db")}) >= 1
        for _ in range(3):
            scrape = requests.get(url + "/metrics", timeout=10).text
            assert 'hitforge_mturk_api_calls_total{operation="CreateHIT",outcome="ok"} 6.0' in scrape
            assert 'operation="GetHIT",outcome="AWS.MechanicalTurk.HITDoesNotExist"} 1.0' in scrape
    finally:
        process.send_signal(signal.SIGTERM)  # exec'd: the signal reaches granian itself
        try:
            assert process.wait(timeout=30) is not None
        finally:
            if process.poll() is None:
                process.kill()


def test_a_stop_does_not_wait_without_end_for_a_request_stuck_behind_another_writer(
    settings: Settings, market_sessions, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # A request waiting for a row or the database's write lock that another process holds
    # (a long CLI command, a Celery task) must not keep a stopping server alive: granian
    # waited for it without limit, so a stop (a deploy, SIGTERM from systemd) hung.
    port, log = free_port(), tmp_path / "server.log"
    url = f"http://127.0.0.1:{port}"
    process = _serve(settings, port, workers=1, log=log)
    key = new_requester(market_sessions, "5.00")
    mturk = boto3_client(url, key, Config(retries={"max_attempts": 0}, read_timeout=120))
    holder = market_sessions()
    try:
        _wait_for_port(port, process, log)
        mturk.get_account_balance()  # the worker is up and has answered once
        add_funds(holder, key.requester_id, Decimal("1.00"), "held-open")  # its balance row, held
        holder.flush()
        stuck = threading.Thread(target=_create_one_hit, args=(mturk,), daemon=True)
        stuck.start()
        time.sleep(2)  # the CreateHIT is now waiting for the balance the holder keeps
        process.send_signal(signal.SIGTERM)
        began = time.monotonic()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=SHUTDOWN_GRACE_SECONDS + 20)
        waited = time.monotonic() - began
        assert process.poll() is not None, "the server was still waiting for the stuck request"
        assert waited < SHUTDOWN_GRACE_SECONDS + 20
    finally:
        holder.rollback()
        holder.close()
        if process.poll() is None:
            process.kill()
            process.wait(10)


def _create_one_hit(mturk) -> None:  # type: ignore[no-untyped-def]
    with contextlib.suppress(Exception):  # the server is stopped under it: any error will do
        mturk.create_hit(
            MaxAssignments=1,
            LifetimeInSeconds=600,
            AssignmentDurationInSeconds=300,
            Reward="0.10",
            Title="Waits for a held balance",
            Description="Created while another process holds the requester's balance.",
            Question=(
                '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
                '2006-07-14/ExternalQuestion.xsd"><ExternalURL>https://example.invalid/task</ExternalURL>'
                "<FrameHeight>400</FrameHeight></ExternalQuestion>"
            ),
        )
