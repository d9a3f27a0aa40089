"""``kill -9`` of a worker leaves no scheduler behind, and a restarted worker's beat runs alone."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from demo.runner import spawn_worker, stop_process
from tests.workers.test_review_pipeline import wait_for, worker_env
from workers.app import create_celery_app
from workers.beat import lock_path

pytestmark = pytest.mark.celery


def session_members(sid: int) -> set[int]:
    """Live processes of session ``sid`` (a worker started in its own session, and its children)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state, ppid, pgrp, session, ...
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def describe(pids: set[int]) -> str:
    """Each process's pid, state and command line, for a failure message."""
    out = []
    for pid in sorted(pids):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        out.append(f"{pid} [{state}] {command}")
    return "; ".join(out) or "nothing"


def scheduler_pid(lock: Path) -> int | None:
    """The pid written by the scheduler holding ``lock``, if one holds it."""
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text and alive(int(text)) else None


def started_scheduler(lock: Path, workers: list[subprocess.Popen[bytes]]) -> int:
    def holder() -> bool:
        pid = scheduler_pid(lock)
        return pid is not None and any(pid in session_members(w.pid) for w in workers)

    wait_for(holder, timeout=60)
    pid = scheduler_pid(lock)
    assert pid is not None
    return pid


def stop_all(*workers: subprocess.Popen[bytes] | None) -> None:
    """Stop the workers, and whatever of their sessions a failed test left running."""
    for process in workers:
        if process is not None:
            stop_process(process)
            for pid in session_members(process.pid):
                os.kill(pid, signal.SIGKILL)


def test_killing_the_worker_kills_its_beat(tmp_path, settings, live_server, requester) -> None:  # type: ignore[no-untyped-def]
    lock = Path(lock_path(create_celery_app(settings).conf.beat_schedule_filename))
    env = worker_env(settings, requester)
    first = spawn_worker(env, tmp_path / "celery-1.log", concurrency=1)
    second = None
    try:
        log1 = tmp_path / "celery-1.log"
        wait_for(lambda: "Sending due task" in log1.read_text(), timeout=60)  # beat is scheduling
        # The pool's process(es) and the embedded beat: the beat may be scheduling before the
        # pool's process has started (seen once under load), so wait for both rather than look once.
        wait_for(lambda: len(session_members(first.pid) - {first.pid}) >= 2, timeout=60)
        children = session_members(first.pid) - {first.pid}
        assert len(children) >= 2, describe(children)
        os.kill(first.pid, signal.SIGKILL)  # the worker only, as `kill -9 <pid>` does
        first.wait(10)
        deadline = time.monotonic() + 60  # returns as soon as they are gone
        while session_members(first.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = session_members(first.pid)
        assert left == set(), f"the killed worker left {describe(left)}\n{log1.read_text()[-3000:]}"
        assert scheduler_pid(lock) is None

        # Restarted, the worker's beat is the only scheduler.
        second = spawn_worker(env, tmp_path / "celery-2.log", concurrency=1)
        beat2 = started_scheduler(lock, [second])
        assert beat2 in session_members(second.pid)
    finally:
        stop_all(first, second)


def test_a_second_worker_beat_waits_for_the_first(tmp_path, settings, live_server, requester) -> None:  # type: ignore[no-untyped-def]
    lock = Path(lock_path(create_celery_app(settings).conf.beat_schedule_filename))
    env = worker_env(settings, requester)
    first = spawn_worker(env, tmp_path / "celery-1.log", concurrency=1)
    second = None
    try:
        beat = started_scheduler(lock, [first])
        second = spawn_worker(env, tmp_path / "celery-2.log", concurrency=1)
        log2 = tmp_path / "celery-2.log"
        wait_for(lambda: "holds" in log2.read_text() and "waiting" in log2.read_text(), timeout=60)
        assert scheduler_pid(lock) == beat  # the second beat did not start scheduling

        stop_process(first)  # a warm shutdown releases the lock; the waiting beat takes over
        beat2 = started_scheduler(lock, [second])
        assert beat2 != beat and beat2 in session_members(second.pid)
    finally:
        stop_all(first, second)
