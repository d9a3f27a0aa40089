"""The embedded broker: worker processes that start together all get the queue."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from kombu import Connection

from workers.broker import EmbeddedTransport


def _declare(url: str, start: object, results: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    try:
        with Connection(url, transport=EmbeddedTransport) as conn:
            queue = conn.SimpleQueue("celery")
            queue.put({"from": "a process"})
            queue.close()
        results.put("ok")  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - the parent asserts on it
        results.put(f"{type(exc).__name__}: {exc}")  # type: ignore[attr-defined]


def test_processes_declaring_the_queue_at_once_all_succeed(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    processes = 6
    for attempt in range(3):  # the race is timing-dependent: give it several chances
        url = f"sqlite:///{tmp_path / f'broker-{attempt}.sqlite'}"
        start, results = ctx.Barrier(processes), ctx.Queue()
        workers = [ctx.Process(target=_declare, args=(url, start, results)) for _ in range(processes)]
        for w in workers:
            w.start()
        outcomes = [results.get(timeout=60) for _ in workers]
        for w in workers:
            w.join(timeout=30)
        assert outcomes == ["ok"] * processes
        with Connection(url, transport=EmbeddedTransport) as conn:
            queue = conn.SimpleQueue("celery")
            got = [queue.get(timeout=5).payload for _ in range(processes)]
            queue.close()
        assert got == [{"from": "a process"}] * processes  # nothing lost, one queue
