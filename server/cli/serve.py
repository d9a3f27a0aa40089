"""``hitforge serve`` and ``hitforge worker``: the web server and the Celery workers, as run in production."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from hits.settings import load_settings

#: How long a stopping server's workers may finish their requests before they are killed.
SHUTDOWN_GRACE_SECONDS = 5


def production_argv(
    app: str = "server:create_app()",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int = 2,
    threads: int = 4,
) -> list[str]:
    """The command that serves ``app`` in production: granian, ``workers`` processes of ``threads`` threads.

    ``app`` is "module:attr", or "module:factory()" for an app factory.
    granian parses HTTP and keeps connections in Rust, outside the interpreter
    lock: measured against gunicorn's gthread worker with the same shape, it
    spends about 0.3 ms less CPU a request (docs/benchmarks.md).
    """
    factory = app.endswith("()")
    return [
        sys.executable, "-m", "granian", "--interface", "wsgi", *(["--factory"] if factory else []),
        "--workers", str(workers), "--blocking-threads", str(threads),
        # granian waits without limit for a worker to stop gracefully, and a worker waits
        # for its idle keep-alive connections (up to the 30 s header-read timeout): a
        # stop must not hang on a client that keeps its connection pool open.
        "--workers-kill-timeout", str(SHUTDOWN_GRACE_SECONDS),
        "--host", host, "--port", str(port), "--log-level", "warning", app.removesuffix("()"),
    ]  # fmt: skip


def fresh_metrics_dir() -> Path:
    """Where the server's processes keep their metrics (``PROMETHEUS_MULTIPROC_DIR``), emptied.

    Emptied at each start: a previous run's files would be summed into this
    run's counters. An operator's own directory (the variable already set) is
    used as it is, for them to manage.
    """
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        return Path(given)
    folder = load_settings().var_dir / "metrics"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
@click.option(
    "--production",
    is_flag=True,
    help="Serve with granian, --workers processes of --threads threads, instead of the development server.",
)
@click.option("--workers", default=2, show_default=True, type=click.IntRange(min=1), help="--production")
@click.option("--threads", default=4, show_default=True, type=click.IntRange(min=1), help="--production")
def serve(host: str, port: int, production: bool, workers: int, threads: int) -> None:
    """Run the server: the development server, or with --production as in production."""
    from server.cli.cdn import check_operator_map

    check_operator_map()  # an unusable HITFORGE_CDN_MAP is one line here, not a traceback in the app
    if production:
        argv = production_argv(host=host, port=port, workers=workers, threads=threads)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(fresh_metrics_dir())
        # Replace this process: signals (a supervisor's SIGTERM) go straight to granian.
        os.execv(argv[0], argv)  # noqa: S606 - our own interpreter
    from werkzeug.serving import run_simple

    from server import create_app

    run_simple(host, port, create_app(), threaded=True, use_reloader=False)


@click.command()
@click.option("--concurrency", "-c", default=2, show_default=True, type=int)
@click.option("--beat/--no-beat", default=True, show_default=True, help="Also run the periodic sync.")
@click.option("--loglevel", default="INFO", show_default=True)
@click.option(
    "--hostname",
    "-n",
    default=None,
    help="The worker's node name (Celery's -n, e.g. review1@%h): unique per worker of a deployment.",
)
def worker(concurrency: int, beat: bool, loglevel: str, hostname: str | None) -> None:
    """Run a Celery worker for the review pipeline."""
    from workers import create_celery_app

    app = create_celery_app(load_settings())
    argv = [
        "worker",
        f"--concurrency={concurrency}",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
    ]
    if hostname:
        argv.append(f"--hostname={hostname}")
    if beat:
        argv.append("--beat")
    app.worker_main(argv)


@click.command()
@click.option("--loglevel", default="INFO", show_default=True)
def beat(loglevel: str) -> None:
    """Run the beat scheduler on its own: the one that holds the lease schedules, on any number of hosts."""
    from workers import create_celery_app

    app = create_celery_app(load_settings())
    app.Beat(loglevel=loglevel).run()
