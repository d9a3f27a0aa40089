"""Running the server in a thread and the Celery worker as a process.

Used by ``hitforge demo``, the tests and the benchmarks: the same real parts,
started the same way. (Production serving is ``server.cli.serve``.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server


@dataclass
class RunningServer:
    server: BaseWSGIServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://{self.server.host}:{self.server.port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)


def serve_in_thread(
    app: Flask, host: str = "127.0.0.1", port: int = 0, *, fd: int | None = None
) -> RunningServer:
    """Serve ``app`` on ``host:port`` (0: a free port) from a background thread.

    ``fd``: a socket already bound and listening, to serve on instead (its own address).
    """
    server = make_server(host, port, app, threaded=True, fd=fd)
    thread = threading.Thread(target=server.serve_forever, name="hitforge-server", daemon=True)
    thread.start()
    return RunningServer(server, thread)


def free_port(host: str = "127.0.0.1") -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def spawn_worker(
    env: Mapping[str, str], log_path: Path, *, concurrency: int = 2, beat: bool = True
) -> subprocess.Popen[bytes]:
    """Start ``hitforge worker`` as a real separate process with ``env``."""
    argv = [sys.executable, "-m", "server.cli", "worker", f"--concurrency={concurrency}"]
    argv.append("--beat" if beat else "--no-beat")
    log = log_path.open("ab")
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module
        argv,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=str(Path(__file__).resolve().parent.parent),
        start_new_session=True,
    )


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """Ask a worker to stop (warm shutdown), then insist; no process of its group outlives it.

    A child left behind (an embedded beat slow to follow its parent) would keep
    the scheduler lock and consume the broker's messages after the worker is
    gone: it goes with the group.
    """
    if process.poll() is None:
        # SIGTERM to the main process only: Celery's warm shutdown stops its pool itself.
        process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    # Its own session (start_new_session), so only its group; none left: nothing to do.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(5)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block SIGTERM raises ``KeyboardInterrupt``, as Ctrl-C does.

    Python's default for SIGTERM ends the process at once, skipping every
    ``finally``: the worker, in a session of its own, would be left running.
    Outside the main thread (where no handler can be set) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Ctrl-C or SIGTERM within the block is raised as ``KeyboardInterrupt`` once the block is done.

    Around starting the worker (so it is never started without being known to
    the code that stops it) and stopping it (so a second Ctrl-C does not cut
    the shutdown short and leave it running).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    watched = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda got, frame: caught.append(got)) for signum in watched}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if caught:
        raise KeyboardInterrupt
