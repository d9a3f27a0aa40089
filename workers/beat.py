"""The beat scheduler: one at a time, and never outliving the worker that embeds it.

``hitforge worker`` embeds beat as a child process. Killed with SIGKILL, a
worker gets no chance to stop that child, which then went on scheduling
syncs as an orphan; restarted workers added one scheduler per crash. Two
guards fix that:

* the embedded beat asks the kernel for SIGTERM when its parent dies
  (``PR_SET_PDEATHSIG`` on Linux; elsewhere a thread watches the parent), and
* every scheduler holds an exclusive lock on ``<schedule file>.lock`` while it
  runs, so a second scheduler on the same machine waits for the first to end
  instead of running beside it (the kernel drops the lock of a dead process).

The lock is taken before the schedule file is opened, so two schedulers never
write the same shelve file either.

Across hosts a file lock is no help: each host's scheduler also schedules
only while it holds the ``beat`` lease in the requester database
(``workers/lease.py``), so however many hosts run a beat, one schedules, and
another takes over within ``LEASE_SECONDS`` of its death.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import logging
import os
import signal
import sys
import threading
import time
from typing import IO, Any

from billiard.process import current_process
from celery.beat import PersistentScheduler

from workers.lease import holder_name, release, renew_every, take_or_renew

log = logging.getLogger(__name__)

#: The lease whose holder is the one scheduler of the deployment.
BEAT_LEASE = "beat"

#: From <linux/prctl.h>: deliver a signal to this process when its parent thread dies.
_PR_SET_PDEATHSIG = 1
#: How often the fallback watcher looks at the parent, in seconds.
_WATCH_INTERVAL = 0.5


def lock_path(schedule_filename: str) -> str:
    """The lock file that guards the schedule file ``schedule_filename``."""
    return f"{schedule_filename}.lock"


def die_with_parent(parent_pid: int) -> None:
    """Make this process get SIGTERM when ``parent_pid`` (its parent) dies.

    If the parent is already gone (it died before we asked), exit now.
    """
    done = False
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        done = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    if not done:
        watcher = threading.Thread(target=_watch_parent, args=(parent_pid,), name="beat-parent-watch")
        watcher.daemon = True
        watcher.start()
    # The parent may have died between fork and prctl: then no signal will come.
    if os.getppid() != parent_pid:
        log.warning("beat: the worker (pid %s) is gone; exiting", parent_pid)
        os._exit(0)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_WATCH_INTERVAL)
    log.warning("beat: the worker (pid %s) is gone; exiting", parent_pid)
    os.kill(os.getpid(), signal.SIGTERM)


def hold_lock(path: str) -> IO[str]:
    """Take the exclusive scheduler lock at ``path``, waiting while another process holds it.

    The returned file must stay open: closing it (or the process ending) releases the lock.
    The holder's pid is written into the file, for people and tests to see who schedules.
    """
    handle = open(path, "a+")  # noqa: SIM115 - held open for the life of the scheduler
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "?"
        log.warning("beat: another scheduler (pid %s) holds %s; waiting for it to stop", holder, path)
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    log.info("beat: scheduler lock %s taken by pid %s", path, os.getpid())
    return handle


class SingleScheduler(PersistentScheduler):
    """Celery's file-backed scheduler, run by at most one process per schedule file.

    Embedded in a worker (the child process celery names "Beat"), it also
    arranges to die with that worker.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        process = current_process()
        parent_pid = getattr(process, "_parent_pid", None)
        if process.name == "Beat" and parent_pid and not kwargs.get("lazy"):
            die_with_parent(parent_pid)
        self._lock: IO[str] | None = None
        if not kwargs.get("lazy"):
            # A lazy scheduler (for a banner) opens no schedule file: it needs no lock.
            app = kwargs.get("app") or args[0]
            filename = kwargs.get("schedule_filename") or app.conf.beat_schedule_filename
            self._lock = hold_lock(lock_path(filename))
        self._holder = holder_name()
        self._lease_checked_at: float | None = None
        self._lease_held = False
        super().__init__(*args, **kwargs)

    def _holds_lease(self) -> bool:
        """Whether this scheduler holds the beat lease now (renewed every third of the lease)."""
        now = time.monotonic()
        if self._lease_checked_at is not None and now - self._lease_checked_at < self._renew_every:
            return self._lease_held
        was_held = self._lease_held
        runtime = self.app.hitforge
        try:
            self._lease_held = take_or_renew(
                runtime.sessions, BEAT_LEASE, self._holder, seconds=runtime.settings.beat_lease_seconds
            )
        except Exception:
            log.exception("beat: the lease could not be taken or renewed; not scheduling until it is")
            self._lease_held = False
        self._lease_checked_at = now
        if self._lease_held != was_held:
            state = "running" if self._lease_held else "not running"
            log.warning("beat: %s the schedule (%s)", state, self._holder)
        return self._lease_held

    def tick(self, *args: Any, **kwargs: Any) -> float:
        """One round: run what is due if this scheduler holds the lease; the time until the next."""
        if not self._holds_lease():
            return self._renew_every  # another host schedules; ask again when its lease could lapse
        # Never sleep past a renewal: a long sleep would let the lease lapse under a live holder.
        return min(float(super().tick(*args, **kwargs)), self._renew_every)

    @property
    def _renew_every(self) -> float:
        return renew_every(self.app.hitforge.settings.beat_lease_seconds)

    def close(self) -> None:
        """Stop: give the lease up at once, so another host's beat need not wait for it to expire."""
        super().close()
        if self._lease_held:
            try:
                release(self.app.hitforge.sessions, BEAT_LEASE, self._holder)
            except Exception:
                log.exception("beat: the lease could not be released; it expires on its own")
            self._lease_held = False
