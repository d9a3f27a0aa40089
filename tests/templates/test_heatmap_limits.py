"""Limits on live heatmaps under pressure: many requests at the same instant, and providers that hang.

The requests are real ones, sent by threads at the running server the way
many tabs (or a worker's script) would send them; the hung provider is a real
installed package's entry point that never returns.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest
import requests
from sqlalchemy import func, select

from hits.db import session_scope
from hits.requester.heatmaps.providers import BREAKER_TIMEOUTS, ENTRY_POINT_GROUP
from hits.requester.tables.heatmaps import HeatmapRequest
from tests.helpers import install_package
from tests.server.worker_helpers import accept_framed
from tests.templates.test_heatmap_live import launch, model_server

__all__ = ["model_server"]  # a fixture shared with the HTTP tests

AT_ONCE = 10


def _all_at_once(url: str, frame: dict[str, str]) -> list[requests.Response]:
    """AT_ONCE requests, every one released at the same instant.

    Each asks again for report sentence 2 (the first request chooses it): a worker's own prompt
    is refused before round one's choice, and the race for a turn is the same in either round.
    """
    start = threading.Barrier(AT_ONCE)

    def send(_: int) -> requests.Response:
        start.wait()
        data = {**frame, "position": "0", "round": "report", "sentence": "1"}
        return requests.post(url + "/tasks/heatmaps/make", data=data, timeout=60)

    with ThreadPoolExecutor(AT_ONCE) as pool:
        return list(pool.map(send, range(AT_ONCE)))


def _calls(requester_sessions, assignment_id: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return int(
            session.scalar(
                select(func.count(func.distinct(HeatmapRequest.call_id))).where(
                    HeatmapRequest.assignment_id == assignment_id
                )
            )
            or 0
        )


def test_requests_at_the_same_instant_get_one_pause_and_one_cap_between_them(
    tmp_path, live_server, model_server, market, requester_sessions
) -> None:
    """The pause between two requests and the cap per image hold however many requests race."""
    hit_id, _ = launch(
        tmp_path / "pause", market, requester_sessions, live_server.url, model_server, "hm-race-pause",
        min_interval=30,
    )  # fmt: skip
    _, frame = accept_framed(live_server.url, hit_id, "race")
    answers = _all_at_once(live_server.url, frame)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [429] * (AT_ONCE - 1), [a.text for a in answers]
    assert all("wait a moment" in a.json()["error"] for a in answers if a.status_code == 429)
    assert _calls(requester_sessions, frame["assignmentId"]) == 1

    hit_id, _ = launch(
        tmp_path / "cap", market, requester_sessions, live_server.url, model_server, "hm-race-cap",
        min_interval=0, live_requests=3,
    )  # fmt: skip
    _, frame = accept_framed(live_server.url, hit_id, "race")
    answers = _all_at_once(live_server.url, frame)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] * 3 + [429] * (AT_ONCE - 3), [a.text for a in answers]
    assert _calls(requester_sessions, frame["assignmentId"]) == 3


#: Requests made while a model never answers: more than the 16 threads the providers once shared.
HUNG_REQUESTS = 24


def _install_sleeper(folder: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A real installed package whose provider never answers (until the test lets it go)."""
    source = (
        "import threading\n"
        "RELEASE = threading.Event()\n"
        "CALLS = []\n"
        "class Sleeper:\n"
        "    def heatmap(self, image, text):\n"
        "        CALLS.append(text)\n"
        "        RELEASE.wait()\n"
        "        return [[1.0]]\n"
    )
    install_package(
        folder,
        monkeypatch,
        "sleeper_model",
        source,
        f"[{ENTRY_POINT_GROUP}]\nsleeper = sleeper_model:Sleeper\n",
    )
    return importlib.import_module("sleeper_model")


def test_a_provider_that_never_answers_cannot_starve_the_healthy_models(
    tmp_path, monkeypatch, live_server, model_server, market, requester_sessions
) -> None:
    """More requests than there were provider threads: the healthy model still answers every time."""
    sleeper = _install_sleeper(tmp_path / "package", monkeypatch)
    try:
        models = {
            "zebranet-seven": {"provider": "builtin", "spread": 0.1},
            "dozing-net": {"provider": "entry_point", "entry_point": "sleeper"},
        }
        hit_id, _ = launch(
            tmp_path / "campaign", market, requester_sessions, live_server.url, model_server, "hm-hang",
            models=models, time_limit=0.5,
        )  # fmt: skip
        frames = [accept_framed(live_server.url, hit_id, f"hang{n}")[1] for n in range(2)]
        asked = [(frame, position) for frame in frames for position in ("0", "1")] * (HUNG_REQUESTS // 4)
        for n, (frame, position) in enumerate(asked):
            started = time.monotonic()
            answer = requests.post(
                live_server.url + "/tasks/heatmaps/make",
                # Report sentence 2 has no precomputed heatmaps: every model is asked live.
                data={**frame, "position": position, "round": "report", "sentence": "1"},
                timeout=30,
            )
            took = time.monotonic() - started
            assert answer.status_code == 200, answer.text
            assert sorted(h["ok"] for h in answer.json()["heatmaps"]) == [False, True], (n, answer.text)
            assert took < 0.5 + 1.0, (n, took)
        with session_scope(requester_sessions) as session:
            rows = session.scalars(
                select(HeatmapRequest)
                .where(HeatmapRequest.assignment_id.in_([f["assignmentId"] for f in frames]))
                .order_by(HeatmapRequest.id)
            ).all()
        healthy = [r for r in rows if r.model == "zebranet-seven"]
        dozing = [r for r in rows if r.model == "dozing-net"]
        assert len(healthy) == len(dozing) == HUNG_REQUESTS and {r.status for r in healthy} == {"ok"}
        # Timed out a few times, then no longer called: the record says so, and why.
        statuses = [r.status for r in dozing]
        assert statuses[:BREAKER_TIMEOUTS] == ["timeout"] * BREAKER_TIMEOUTS
        assert set(statuses[BREAKER_TIMEOUTS:]) == {"unavailable"}
        assert all("timed out 3 times in a row" in r.detail for r in dozing[BREAKER_TIMEOUTS:])
        assert len(sleeper.CALLS) == BREAKER_TIMEOUTS
    finally:
        sleeper.RELEASE.set()
        sys.modules.pop("sleeper_model", None)
