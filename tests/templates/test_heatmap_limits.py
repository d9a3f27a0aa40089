"""Limits on live heatmaps under pressure: many requests at the same instant, and providers that hang.

The requests are real ones, sent by threads at the running server the way
many tabs (or a worker's script) would send them; the hung provider is a real
installed package's entry point that never returns.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import requests
from sqlalchemy import func, select

from hits.db import session_scope
from hits.heatmaps.log import HeatmapRequest
from tests.server.worker_helpers import accept_framed
from tests.templates.test_heatmap_live import launch, model_server

__all__ = ["model_server"]  # a fixture shared with the HTTP tests

AT_ONCE = 10


def _all_at_once(url: str, frame: dict[str, str], prompts: list[str]) -> list[requests.Response]:
    """One custom-prompt request per prompt, every one released at the same instant."""
    start = threading.Barrier(len(prompts))

    def send(prompt: str) -> requests.Response:
        start.wait()
        data = {**frame, "position": "0", "round": "custom", "prompt": prompt}
        return requests.post(url + "/tasks/heatmaps/make", data=data, timeout=60)

    with ThreadPoolExecutor(len(prompts)) as pool:
        return list(pool.map(send, prompts))


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
    prompts = [f"a shadow number {k}" for k in range(AT_ONCE)]
    hit_id, _ = launch(
        tmp_path / "pause", market, requester_sessions, live_server.url, model_server, "hm-race-pause",
        min_interval=30,
    )  # fmt: skip
    _, frame = accept_framed(live_server.url, hit_id, "race")
    answers = _all_at_once(live_server.url, frame, prompts)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [429] * (AT_ONCE - 1), [a.text for a in answers]
    assert all("wait a moment" in a.json()["error"] for a in answers if a.status_code == 429)
    assert _calls(requester_sessions, frame["assignmentId"]) == 1

    hit_id, _ = launch(
        tmp_path / "cap", market, requester_sessions, live_server.url, model_server, "hm-race-cap",
        min_interval=0, live_requests=3,
    )  # fmt: skip
    _, frame = accept_framed(live_server.url, hit_id, "race")
    answers = _all_at_once(live_server.url, frame, prompts)
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] * 3 + [429] * (AT_ONCE - 3), [a.text for a in answers]
    assert _calls(requester_sessions, frame["assignmentId"]) == 3
