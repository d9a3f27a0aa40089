"""Broker round-trip latency: the embedded SQLite transport against Redis.

``python -m bench.broker_latency [--redis redis://127.0.0.1:63799/0]`` sends
messages one at a time from a producer thread and times how long each takes
to reach a consumer blocked on the queue, which is what a Celery task waits
before it starts.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import threading
import time
from pathlib import Path

from kombu import Connection

from bench.results import export
from workers.broker import EmbeddedTransport


def measure(connection: Connection, count: int) -> list[float]:
    latencies: list[float] = []
    queue_name = f"bench-{time.time_ns()}"
    ready = threading.Event()

    def consume() -> None:
        with connection.clone() as conn:
            queue = conn.SimpleQueue(queue_name)
            ready.set()
            for _ in range(count):
                message = queue.get(timeout=30)
                latencies.append(time.perf_counter() - message.payload["sent"])
                message.ack()
            queue.close()

    consumer = threading.Thread(target=consume)
    consumer.start()
    ready.wait(10)
    with connection.clone() as conn:
        queue = conn.SimpleQueue(queue_name)
        for _ in range(count):
            queue.put({"sent": time.perf_counter()})
            time.sleep(0.05)  # one at a time, as beat and the outbox send them
        queue.close()
    consumer.join()
    return latencies


def report(name: str, latencies: list[float]) -> dict[str, float]:
    ms = sorted(x * 1000 for x in latencies)
    p95 = ms[max(0, int(len(ms) * 0.95) - 1)]
    median = statistics.median(ms)
    print(f"{name:<30} n={len(ms):<4} median {median:7.1f} ms   p95 {p95:7.1f} ms   max {ms[-1]:7.1f} ms")
    return {"median": median, "p95": p95, "max": ms[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--redis", help="also measure this Redis URL")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'broker.sqlite'}"
        embedded = Connection(url, transport=EmbeddedTransport)
        figures = {"embedded": report("embedded (SQLite, 0.05 s poll)", measure(embedded, args.count))}
    if args.redis:
        figures["redis"] = report("redis", measure(Connection(args.redis), args.count))
    export({"count": args.count, "brokers": figures})


if __name__ == "__main__":
    main()
