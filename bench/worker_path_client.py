"""The simulated workers of ``bench.worker_path``: a small HTTP client and the loop a browser goes through.

Each worker keeps one keep-alive connection and its cookies, as a browser
tab would, and reads what it needs from the pages with regular expressions
(an HTML parser would cost the client more CPU than the server spends on the
page, on a machine the client shares with the server).
"""

from __future__ import annotations

import html
import http.client
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlparse

HOST = "127.0.0.1"  # the benchmark sends traffic to this machine only
CSRF = re.compile(r'name="csrf(?:_token|middlewaretoken)" value="([^"]+)"')


class Browser:
    """One worker's connection and cookie jar."""

    def __init__(self, port: int, timeout: float = 60.0) -> None:
        self.port = port
        self.timeout = timeout
        self.cookies: dict[str, str] = {}
        self.conn = http.client.HTTPConnection(HOST, port, timeout=timeout)

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None, referer: str | None = None
    ) -> tuple[int, str, str]:
        """(status, Location header, body) of one request; reconnects once if the server closed the socket."""
        headers = {"Host": f"{HOST}:{self.port}"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if referer:
            headers["Referer"] = f"http://{HOST}:{self.port}{referer}"
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        for attempt in (1, 2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                text = response.read().decode("utf-8", "replace")
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
                if attempt == 2:
                    raise
        for cookie in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        location = response.getheader("Location") or ""
        return (
            response.status,
            urlparse(location).path + ("?" + urlparse(location).query if urlparse(location).query else ""),
            text,
        )

    def close(self) -> None:
        self.conn.close()


@dataclass
class Stats:
    """What the workers did while the clock ran (shared by their threads)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    #: The latencies of the requests that also *began* after the warm-up. ``latencies`` holds every
    #: request that ended after it, including the burst of the crowd's first, lock-step requests
    #: (cold connections and templates), which can set the p99 on its own.
    steady: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    submissions: int = 0
    failed_accepts: int = 0
    empty_lists: int = 0
    errors: int = 0
    requests: int = 0
    recording: bool = False
    #: (seconds since the first recorded request, kind, latency) of each recorded request,
    #: to see whether slow requests come together (a pause) or alone.
    timeline: list[tuple[float, str, float]] = field(default_factory=list)
    first: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, kind: str, call: Callable[[], tuple[int, str, str]]) -> tuple[int, str, str]:
        """Run one request, recording its latency under ``kind`` (5xx counts as an error)."""
        began_recorded = self.recording
        started = time.perf_counter()
        result = call()
        spent = time.perf_counter() - started
        with self.lock:
            self.requests += 1
            if began_recorded and self.recording:
                self.steady[kind].append(spent)
            if self.recording:
                self.latencies[kind].append(spent)
                self.first = started if self.first is None else min(self.first, started)
                self.timeline.append((started - self.first, kind, spent))
                if result[0] >= 500:
                    self.errors += 1
        return result

    def count(self, what: str) -> None:
        with self.lock:
            if self.recording:
                setattr(self, what, getattr(self, what) + 1)


class Flow:
    """How one site's worker signs in and does one task; ``bench.worker_path`` runs many of these."""

    def sign_in(self, browser: Browser, number: int) -> None:
        raise NotImplementedError

    def one_task(self, browser: Browser, stats: Stats, think: float) -> None:
        raise NotImplementedError


# The group's Accept; or, on the worker site before accepting by group (commit 35c652a, for an
# A/B), the accept form of the group's oldest HIT.
GROUP_ACCEPT = re.compile(r'action="(/groups/[^"/]+/accept|/hits/[^"/]+/accept)"')
IFRAME_SRC = re.compile(r'<iframe[^>]* src="([^"]+)"')


class HitforgeFlow(Flow):
    """hitforge's worker site: the list, the group's Accept, the work page, its frame, the submit."""

    def __init__(self, run: str, accept_next: bool = False) -> None:
        self.run = run
        self.accept_next = accept_next
        self.next_accept: dict[int, tuple[str, str]] = {}

    def sign_in(self, browser: Browser, number: int) -> None:
        _, _, page = browser.request("GET", "/signup")
        token = CSRF.search(page)
        form = {"username": f"crowd-{self.run}-{number}", "password": "a-long-password"}
        status, _, _ = browser.request(
            "POST", "/signup", {**form, "csrf_token": token.group(1) if token else ""}
        )
        if status not in (200, 302):
            raise RuntimeError(f"signing up worker {number} failed: HTTP {status}")

    def one_task(self, browser: Browser, stats: Stats, think: float) -> None:
        taken = self.next_accept.pop(id(browser), None)
        if taken is None:
            _, _, listing = stats.timed("list", lambda: browser.request("GET", "/"))
            action, token = GROUP_ACCEPT.search(listing), CSRF.search(listing)
            if action is None or token is None:
                stats.count("empty_lists")
                time.sleep(0.2)
                return
            taken = (action.group(1), token.group(1))
        action, token = taken
        status, location, _ = stats.timed(
            "accept", lambda: browser.request("POST", action, {"csrf_token": token}, referer="/")
        )
        if status != 302 or not location.startswith("/work/"):
            stats.count("failed_accepts")
            return
        _, _, work = stats.timed("work", lambda: browser.request("GET", location))
        src = IFRAME_SRC.search(work)
        if src is None:
            stats.count("errors")
            return
        frame = html.unescape(src.group(1))
        stats.timed("frame", lambda: browser.request("GET", frame))
        time.sleep(think)
        params = {k: v[0] for k, v in parse_qs(urlparse(frame).query).items()}
        answer = {
            "assignmentId": params["assignmentId"],
            "hitforgeToken": params["hitforgeToken"],
            "caption": "a dog",
        }
        status, _, _ = stats.timed("submit", lambda: browser.request("POST", "/mturk/externalSubmit", answer))
        if status == 200:
            stats.count("submissions")
        if self.accept_next:
            next_form = re.search(r'action="(/groups/[^"/]+/accept)" id="accept-next"', work)
            next_token = CSRF.search(work)
            if next_form and next_token:
                self.next_accept[id(browser)] = (next_form.group(1), next_token.group(1))


def run_crowd(
    flow: Flow,
    port: int,
    workers: int,
    think: float,
    clock: tuple[float, float, int],
    on_start: Callable[[], None],
    on_stop: Callable[[], None],
) -> tuple[Stats, float]:
    """Sign in ``workers`` workers, let them work, stop them; returns (stats, measured seconds).

    ``clock`` is (warmup, seconds, max_requests): the measurement starts after
    the warmup (calling ``on_start``) and ends after ``seconds`` more or once
    ``max_requests`` requests were sent in all, whichever comes first (calling
    ``on_stop``); then every worker stops after its current request.
    """
    warmup, seconds, max_requests = clock
    stats = Stats()
    browsers = [Browser(port) for _ in range(workers)]
    signing = list(range(workers))
    sign_lock = threading.Lock()

    failures: list[BaseException] = []

    def sign_some() -> None:
        while not failures:
            with sign_lock:
                if not signing:
                    return
                n = signing.pop()
            try:
                flow.sign_in(browsers[n], n)
            except Exception as err:  # reported below, in the caller's thread
                failures.append(err)

    signers = [threading.Thread(target=sign_some) for _ in range(min(8, workers))]
    for t in signers:
        t.start()
    for t in signers:
        t.join()
    if failures:
        for b in browsers:
            b.close()
        raise RuntimeError(f"workers could not sign in: {failures[0]}") from failures[0]
    stop = threading.Event()

    def work(browser: Browser) -> None:
        while not stop.is_set() and stats.requests < max_requests:
            try:
                flow.one_task(browser, stats, think)
            except (OSError, http.client.HTTPException):
                stats.count("errors")
                time.sleep(0.1)

    threads = [threading.Thread(target=work, args=(b,), daemon=True) for b in browsers]
    for t in threads:
        t.start()
    stop.wait(warmup)
    on_start()
    stats.recording = True
    started = time.monotonic()
    deadline = started + seconds
    while (
        time.monotonic() < deadline and stats.requests < max_requests and any(t.is_alive() for t in threads)
    ):
        time.sleep(0.05)
    stats.recording = False
    on_stop()
    measured = time.monotonic() - started
    stop.set()
    for t in threads:
        t.join(timeout=70)
    for b in browsers:
        b.close()
    return stats, measured
