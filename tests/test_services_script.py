"""``scripts/test-services.sh``: free ports, recorded; only what it started is stopped.

Run from a copy of the script in its own folder, so its state (and servers)
are its own: the PostgreSQL and Redis the rest of the suite uses are never touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "test-services.sh"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def checkout() -> Iterator[Path]:
    """A folder holding a copy of the script, reachable by PostgreSQL's system user."""
    if shutil.which("redis-server") is None or not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        pytest.fail("PostgreSQL and Redis must be installed (scripts/test-services.sh start installs them)")
    root = Path(tempfile.mkdtemp(prefix="hitforge-services-", dir="/tmp"))
    root.chmod(0o755)
    (root / "scripts").mkdir()
    shutil.copy2(SCRIPT, root / "scripts" / "test-services.sh")
    try:
        yield root
    finally:
        run(root, "stop")
        shutil.rmtree(root, ignore_errors=True)


def run(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HITFORGE_TEST_SERVICES_DIR"}
    return subprocess.run(  # noqa: S603 - our own script
        [str(root / "scripts" / "test-services.sh"), command],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def parse_env(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def alive(pid: int) -> bool:
    return (
        Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]
    )


def test_start_picks_free_ports_and_stop_leaves_other_servers_alone(checkout: Path) -> None:
    decoy_port = free_port()
    decoy = subprocess.Popen(  # noqa: S603 - someone else's Redis on the machine
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(decoy_port),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        decoy_client = redis.Redis(host="127.0.0.1", port=decoy_port)
        # The decoy must hold its port before start looks for free ones (slow to start on a loaded machine).
        deadline = time.monotonic() + 60
        while True:
            try:
                decoy_client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "the decoy Redis did not start"
                time.sleep(0.1)
        started = run(checkout, "start")
        assert started.returncode == 0, started.stdout + started.stderr
        env = parse_env(run(checkout, "env").stdout)
        state = checkout / "var" / "test-services"
        ports = parse_env((state / "ports").read_text())
        assert env["HITFORGE_TEST_REDIS_URL"] == f"redis://127.0.0.1:{ports['redis_port']}/0"
        assert f"127.0.0.1:{ports['pg_port']}/" in env["HITFORGE_TEST_POSTGRES_URL"]
        assert decoy_port != int(ports["redis_port"])

        assert redis.Redis.from_url(env["HITFORGE_TEST_REDIS_URL"]).ping()
        engine = create_engine(env["HITFORGE_TEST_POSTGRES_URL"])
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT 1")) == 1
        engine.dispose()

        again = run(checkout, "start")  # a second start re-uses its own servers
        assert again.returncode == 0 and parse_env(run(checkout, "env").stdout) == env

        redis_pid = int((state / "redis.pid").read_text())
        pg_pid = int((state / "pg" / "postmaster.pid").read_text().split()[0])
        stopped = run(checkout, "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert not alive(redis_pid) and not alive(pg_pid)
        assert decoy.poll() is None and decoy_client.ping()  # not ours: still running
        assert run(checkout, "env").returncode != 0  # nothing recorded any more
        assert run(checkout, "stop").returncode == 0  # stopping twice is harmless
    finally:
        decoy.terminate()
        decoy.wait(10)
