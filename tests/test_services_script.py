"""``scripts/test-services.sh``: free ports, recorded; only what it started is stopped.

Run from a copy of the script in its own folder, so its state (and servers)
are its own: the PostgreSQL and Redis the rest of the suite uses are never touched.

The reported bug: the script used fixed ports (Redis on 63799, PostgreSQL on
54329, commit 0be2eb7), so a Redis someone else ran on 63799 was re-used by
``start`` and shut down by ``stop``. The decoy therefore sits on that very port.
"""

from __future__ import annotations

import fcntl
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
# The port the script's first version always used for its Redis.
OLD_FIXED_REDIS_PORT = 63799


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.fixture
def old_fixed_port() -> Iterator[int]:
    """The old fixed Redis port, free for this test's decoy.

    Two runs of this test on one machine (two checkouts) would both want the
    port, so they take turns on a lock file; one that finds the port held by
    something else for a minute fails saying so.
    """
    with open(Path(tempfile.gettempdir()) / f"hitforge-decoy-{OLD_FIXED_REDIS_PORT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        deadline = time.monotonic() + 60
        while not port_is_free(OLD_FIXED_REDIS_PORT):
            assert time.monotonic() < deadline, f"port {OLD_FIXED_REDIS_PORT} is taken; the decoy needs it"
            time.sleep(0.5)
        yield OLD_FIXED_REDIS_PORT


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


def test_a_redis_on_the_old_fixed_port_is_not_reused_or_stopped(checkout: Path, old_fixed_port: int) -> None:
    decoy = subprocess.Popen(  # noqa: S603 - someone else's Redis on the machine, on the old fixed port
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(old_fixed_port),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        decoy_client = redis.Redis(host="127.0.0.1", port=old_fixed_port)
        # The decoy must hold its port before start looks for one (slow to start on a loaded machine).
        deadline = time.monotonic() + 60
        while True:
            try:
                decoy_client.set("owner", "someone else")
                break
            except redis.ConnectionError:
                assert decoy.poll() is None, f"the decoy Redis could not listen on {old_fixed_port}"
                assert time.monotonic() < deadline, "the decoy Redis did not start"
                time.sleep(0.1)
        started = run(checkout, "start")
        assert started.returncode == 0, started.stdout + started.stderr
        env = parse_env(run(checkout, "env").stdout)
        ours = redis.Redis.from_url(env["HITFORGE_TEST_REDIS_URL"])
        # The decoy's key seen through the URL start handed out means start re-used the decoy.
        reused = ours.get("owner") is not None

        assert ours.ping()
        engine = create_engine(env["HITFORGE_TEST_POSTGRES_URL"])
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT 1")) == 1
        engine.dispose()

        again = run(checkout, "start")  # a second start re-uses its own servers
        assert again.returncode == 0 and parse_env(run(checkout, "env").stdout) == env

        state = checkout / "var" / "test-services"
        recorded_ports = (state / "ports").read_text() if (state / "ports").exists() else ""
        pids = [
            int(path.read_text().split()[0])
            for path in (state / "redis.pid", state / "pg" / "postmaster.pid")
            if path.exists()
        ]
        stopped = run(checkout, "stop")
        assert stopped.returncode == 0, stopped.stderr
        decoy_alive = decoy.poll() is None and decoy_client.get("owner") == b"someone else"
        assert not reused and decoy_alive, (
            f"a Redis the script did not start (on {old_fixed_port}): "
            + ("re-used by start; " if reused else "")
            + ("shut down by stop" if not decoy_alive else "left alone by stop")
        )

        ports = parse_env(recorded_ports)
        assert env["HITFORGE_TEST_REDIS_URL"] == f"redis://127.0.0.1:{ports['redis_port']}/0"
        assert f"127.0.0.1:{ports['pg_port']}/" in env["HITFORGE_TEST_POSTGRES_URL"]
        assert len(pids) == 2 and not any(alive(pid) for pid in pids)  # ours: stopped
        assert run(checkout, "env").returncode != 0  # nothing recorded any more
        assert run(checkout, "stop").returncode == 0  # stopping twice is harmless
    finally:
        decoy.terminate()
        decoy.wait(10)
