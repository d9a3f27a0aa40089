"""One beat schedules, however many hosts start one; another takes over when it dies.

Two hosts are two ``hitforge beat`` processes with var folders of their own
(so the per-machine file lock cannot be what keeps them apart), sharing the
databases and the broker, as beats on two machines would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from hits.db import utcnow
from hits.settings import Settings
from workers.lease import current_holder, release, take_or_renew

pytestmark = pytest.mark.timeout(180)


def test_a_lease_has_one_holder_until_it_expires_or_is_released(requester_sessions) -> None:  # type: ignore[no-untyped-def]
    name = f"duty-{time.monotonic_ns()}"
    assert take_or_renew(requester_sessions, name, "host-a", seconds=30)
    assert not take_or_renew(requester_sessions, name, "host-b", seconds=30)
    assert take_or_renew(requester_sessions, name, "host-a", seconds=30)  # renewed by its holder
    assert current_holder(requester_sessions, name) == "host-a"
    later = utcnow() + timedelta(seconds=31)  # host-a died: nobody renewed it
    assert take_or_renew(requester_sessions, name, "host-b", now=later, seconds=30)
    assert not take_or_renew(requester_sessions, name, "host-a", now=later, seconds=30)
    release(requester_sessions, name, "host-a")  # not host-a's any more: nothing happens
    assert current_holder(requester_sessions, name) == "host-b"
    release(requester_sessions, name, "host-b")
    assert current_holder(requester_sessions, name) is None
    assert take_or_renew(requester_sessions, name, "host-a", seconds=30)


def _race(requester_sessions, name: str, hosts: int) -> list[str]:  # type: ignore[no-untyped-def]
    """``hosts`` threads asking for lease ``name`` at the same moment; those told they hold it."""
    start = threading.Barrier(hosts)
    won: list[str] = []
    failed: list[BaseException] = []

    def ask(holder: str) -> None:
        try:
            start.wait()
            if take_or_renew(requester_sessions, name, holder, seconds=30):
                won.append(holder)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    threads = [threading.Thread(target=ask, args=(f"host-{n}",)) for n in range(hosts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failed, failed
    return won


def test_hosts_racing_for_a_free_lease_get_one_holder(requester_sessions) -> None:  # type: ignore[no-untyped-def]
    for round_ in range(5):
        name = f"race-{round_}-{time.monotonic_ns()}"
        won = _race(requester_sessions, name, 8)
        assert len(won) == 1 and current_holder(requester_sessions, name) == won[0]


def _beat(settings: Settings, var_dir: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "HITFORGE_VAR_DIR": str(var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_BROKER_URL": settings.broker_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
        "HITFORGE_SYNC_INTERVAL": "0.5",
        "HITFORGE_BEAT_LEASE_SECONDS": "3",
    }
    var_dir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "beat"],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _sent(log: Path) -> int:
    return log.read_text(errors="replace").count("Sending due task sync-submissions")


def _wait(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting until {what}")


def test_two_hosts_beats_schedule_once_and_one_takes_over_when_the_other_dies(
    settings: Settings, requester_sessions, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    # Whatever another test's beat left: this test's two beats start from a free lease.
    release(requester_sessions, "beat", current_holder(requester_sessions, "beat") or "")
    logs = [tmp_path / "beat-a.log", tmp_path / "beat-b.log"]
    beats = [_beat(settings, tmp_path / f"host-{n}", logs[n]) for n in range(2)]
    try:
        _wait(lambda: any(_sent(log) >= 4 for log in logs), 60, "one beat schedules")
        time.sleep(3)  # several more rounds, and a renewal of the lease
        counts = [_sent(log) for log in logs]
        holder_index = 0 if counts[0] else 1
        assert counts[holder_index] >= 6 and counts[1 - holder_index] == 0, counts
        # The holder dies without a word (a host lost): the other takes over once the lease lapses.
        os.killpg(beats[holder_index].pid, signal.SIGKILL)
        beats[holder_index].wait(10)
        died_at = time.monotonic()
        other = logs[1 - holder_index]
        _wait(lambda: _sent(other) >= 2, 30, "the other beat takes over")
        assert time.monotonic() - died_at < 3 + 3 + 5  # the lease, a renewal round, slack
    finally:
        for beat in beats:
            if beat.poll() is None:
                beat.send_signal(signal.SIGTERM)
                try:
                    beat.wait(15)
                except subprocess.TimeoutExpired:
                    os.killpg(beat.pid, signal.SIGKILL)
    # Stopped cleanly, the survivor gave the lease up at once.
    assert current_holder(requester_sessions, "beat") is None


def test_a_dead_holder_on_this_host_is_taken_over_at_once(requester_sessions) -> None:  # type: ignore[no-untyped-def]
    import socket

    name = f"dead-{time.monotonic_ns()}"
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True
    )
    dead = f"{socket.gethostname()}:{int(finished.stdout)}:deadbeef"
    alive = f"{socket.gethostname()}:{os.getpid()}:cafef00d"
    elsewhere = f"another-host.invalid:{int(finished.stdout)}:deadbeef"
    assert take_or_renew(requester_sessions, name, elsewhere, seconds=30)
    assert not take_or_renew(requester_sessions, name, "host-b", seconds=30)  # another host's: waits
    release(requester_sessions, name, elsewhere)
    assert take_or_renew(requester_sessions, name, alive, seconds=30)
    assert not take_or_renew(requester_sessions, name, "host-b", seconds=30)  # alive here: waits
    release(requester_sessions, name, alive)
    assert take_or_renew(requester_sessions, name, dead, seconds=30)
    assert take_or_renew(requester_sessions, name, "host-b", seconds=30)  # its process is gone
