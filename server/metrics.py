"""Prometheus metrics of the web server: what it counts, and ``/metrics`` that exposes them.

Counters and histograms are kept per process by ``prometheus_client``. Under
several server processes (``hitforge serve --production``) each process writes
its values to files in ``PROMETHEUS_MULTIPROC_DIR`` and a scrape of any one of
them sums them all (the library's multiprocess mode): the figures are the
server's, not one process's. The variable must be set before this module is
first imported, which ``hitforge serve`` does for its workers.

Figures that are a state rather than a count (the outbox's backlog, queue
depths, open HITs) are read at scrape time by collectors each web half
registers (``register_collector``): they are right however many processes
serve, and cost nothing between scrapes.

``/metrics`` answers loopback clients, or anyone with ``HITFORGE_METRICS_TOKEN``
as a bearer token: campaign names and backlogs are the operator's business.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Callable, Iterable

from flask import Blueprint, Flask, Response, abort, current_app, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from server.request_log import elapsed_seconds, endpoint_name

#: The counters and histograms of this process (or of every process, in multiprocess mode).
REGISTRY = CollectorRegistry(auto_describe=True)

#: Request latency, labelled by the route's endpoint name (bounded: never the raw path).
REQUEST_SECONDS = Histogram(
    "hitforge_http_request_duration_seconds",
    "Time to answer an HTTP request, by endpoint, method and status.",
    ["endpoint", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)
#: MTurk API calls by operation and outcome: "ok" or the error a boto3 client received.
API_CALLS = Counter(
    "hitforge_mturk_api_calls_total",
    "MTurk requester API calls, by operation and outcome (ok, or the MTurk error code).",
    ["operation", "outcome"],
    registry=REGISTRY,
)
#: Accepts on the worker site: "accepted" or the reason one was refused.
ACCEPTS = Counter(
    "hitforge_worker_accepts_total",
    "Accepts on the worker site, by outcome (accepted, or the MTurk error code of the refusal).",
    ["outcome"],
    registry=REGISTRY,
)
SUBMISSIONS = Counter(
    "hitforge_worker_submissions_total", "Assignments submitted by workers.", registry=REGISTRY
)
DECISIONS = Counter(
    "hitforge_assignment_decisions_total",
    "Assignments approved or rejected, by decision and by whom (requester through the API, or auto).",
    ["decision", "by"],
    registry=REGISTRY,
)

#: Operations that record a decision on an assignment, and the decision each records.
DECIDING_OPERATIONS = {"ApproveAssignment": "approved", "RejectAssignment": "rejected"}

bp = Blueprint("metrics", __name__)


def _collectors() -> list[Collector]:
    collectors: list[Collector] = current_app.extensions.setdefault("hitforge_metric_collectors", [])
    return collectors


class _ScrapeTime(Collector):
    """A web half's figures read when scraped (``describe`` empty: never read at registration)."""

    def __init__(self, read: Callable[[], Iterable[Metric]]):
        self.read = read

    def collect(self) -> Iterable[Metric]:
        return self.read()

    def describe(self) -> Iterable[Metric]:
        return []


def register_collector(app: Flask, read: Callable[[], Iterable[Metric]]) -> None:
    """Have ``read`` add its metrics to every scrape of ``app``'s ``/metrics`` (in request context)."""
    app.extensions.setdefault("hitforge_metric_collectors", []).append(_ScrapeTime(read))


def exposition() -> bytes:
    """The text a scrape gets: every process's counts, then the figures read now."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=directory)
    else:
        counted = REGISTRY
    now = CollectorRegistry(auto_describe=False)
    for collector in _collectors():
        now.register(collector)
    return generate_latest(counted) + generate_latest(now)


def _allowed() -> bool:
    token = current_app.config.get("HITFORGE_METRICS_TOKEN", "")
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    try:
        return ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        return False


@bp.get("/metrics")
def metrics() -> Response:
    """The Prometheus exposition (loopback, or with the metrics token)."""
    if not _allowed():
        abort(404)
    return Response(exposition(), mimetype=CONTENT_TYPE_LATEST)


def _observe(response: Response) -> Response:
    # The request's start is request_log's (registered before this module, in create_app).
    elapsed = elapsed_seconds()
    if elapsed is not None:
        REQUEST_SECONDS.labels(endpoint_name(), request.method, str(response.status_code)).observe(elapsed)
    return response


def init_app(app: Flask, token: str) -> None:
    """Time every request and serve ``/metrics``; ``token`` (may be empty) lets remote scrapers in."""
    app.config["HITFORGE_METRICS_TOKEN"] = token
    app.after_request(_observe)
    app.register_blueprint(bp)


def count_api_call(operation: str, outcome: str) -> None:
    """One MTurk API call of ``operation`` ended with ``outcome`` (a decision when it is one)."""
    API_CALLS.labels(operation, outcome).inc()
    decision = DECIDING_OPERATIONS.get(operation)
    if decision is not None and outcome == "ok":
        DECISIONS.labels(decision, "requester").inc()
