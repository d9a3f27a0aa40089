"""Serving a WSGI app the way production does, for the benchmarks: granian or gunicorn.

Both serve ``processes`` worker processes of ``threads`` threads each and keep
connections alive. granian (the recommended production server, see the
README) parses HTTP in Rust outside the interpreter lock; gunicorn's gthread
worker does it in Python, which costs about 0.3 ms of CPU more a request
(``python -m bench.api_throughput`` prints both floors).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from server.cli.serve import production_argv

SERVERS = ("granian", "gunicorn")


def server_argv(kind: str, app: str, port: int, processes: int, threads: int) -> list[str]:
    """The command serving ``app`` ("module:attr", or "module:factory()" for an app factory)."""
    if kind == "granian":
        return production_argv(app, port=port, workers=processes, threads=threads)
    if kind == "gunicorn":
        # gthread keeps connections alive (sync workers close each after one request).
        return [
            sys.executable, "-m", "gunicorn", "-w", str(processes), "-k", "gthread",
            "--threads", str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning", app,
        ]  # fmt: skip
    raise ValueError(f"unknown server {kind!r}; choose one of {', '.join(SERVERS)}")


def serve(
    kind: str, app: str, port: int, processes: int, threads: int, env: dict[str, str], log: Path
) -> subprocess.Popen[bytes]:
    """Start serving ``app`` on 127.0.0.1:``port``; return once it accepts connections."""
    argv = server_argv(kind, app, port, processes, threads)
    # A session of its own, so that stopping it reaches the worker processes too: a master
    # stopped while its workers were still importing the app left them serving.
    process = subprocess.Popen(  # noqa: S603 - our own interpreter's tools
        argv,
        env={**os.environ, **env},
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    # Importing the app in each worker took over 30 s when the shared machine's load was near 20.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    stop(process)
    raise RuntimeError(f"{kind} did not start; see {log}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server started by :func:`serve`, its worker processes with it, and wait for it."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    except ProcessLookupError:
        process.wait(timeout=10)
