"""The qualification-test clock is kept by the marketplace, not the worker's cookie.

Starting again from a new browser session continues the same clock; answers
after TestDurationInSeconds are refused whatever the cookie says; a start left
unsubmitted counts as a failed attempt for RetryDelayInSeconds.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import requests
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.models import QualificationRequest, WorkerQualification
from hits.market.models.qualifications import QualificationTestAttempt
from tests.server.test_question_forms import KEY, new_test_type
from tests.server.worker_helpers import WorkerClient, csrf_of, soup


def new_session(worker: WorkerClient) -> WorkerClient:
    """The same worker signed in again with an empty cookie jar (cookies cleared, another browser)."""
    worker.http = requests.Session()
    signin = worker.get("/signin")
    signed = worker.http.post(
        worker.base + "/signin",
        data={"csrf_token": csrf_of(signin), "username": worker.username, "password": "a-long-password"},
    )
    assert worker.worker_id in signed.text
    return worker


def start(worker: WorkerClient, qtype_id: str) -> requests.Response:
    """POST "Start the test" (also when the page shows no such button, as a crafted request would)."""
    intro = worker.get(f"/qualifications/{qtype_id}")
    return worker.http.post(
        f"{worker.base}/qualifications/{qtype_id}/test/start", data={"csrf_token": csrf_of(intro)}
    )


def deadline_of(page: requests.Response) -> str:
    notice = soup(page).select_one("#test-deadline")
    assert notice is not None, page.text
    return notice.get_text()


def stored(market_sessions, qtype_id: str) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """(attempt rows, qualification requests, qualifications held) for the type."""
    with session_scope(market_sessions) as session:
        return tuple(
            session.scalar(
                select(func.count()).select_from(model).where(model.qualification_type_id == qtype_id)
            )
            or 0
            for model in (QualificationTestAttempt, QualificationRequest, WorkerQualification)
        )  # type: ignore[return-value]


def move_clock_back(market_sessions, qtype_id: str, seconds: int) -> datetime:  # type: ignore[no-untyped-def]
    """Move the type's (one worker's) test clock ``seconds`` into the past, in the marketplace's table.

    As if the test had been started that much earlier: no sleeping, so no race with a loaded machine.
    Returns the attempt's new deadline.
    """
    with session_scope(market_sessions) as session:
        attempt = session.scalars(
            select(QualificationTestAttempt).where(QualificationTestAttempt.qualification_type_id == qtype_id)
        ).one()
        attempt.started_at -= timedelta(seconds=seconds)
        attempt.deadline -= timedelta(seconds=seconds)
        return attempt.deadline


def test_a_new_session_continues_the_same_clock(live_server, mturk, market_sessions) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY, TestDurationInSeconds=600, RetryDelayInSeconds=3600)
    worker = WorkerClient(live_server.url, "clock")
    first = start(worker, qtype_id)
    assert first.status_code == 200
    time.sleep(1.1)  # a fresh clock would end at least a second later
    new_session(worker)
    # The qualification page says the test is running, and starting again shows the same deadline.
    intro = worker.get(f"/qualifications/{qtype_id}")
    assert soup(intro).select_one("#test-running") is not None
    again = start(worker, qtype_id)
    assert again.status_code == 200 and deadline_of(again) == deadline_of(first)
    assert deadline_of(worker.get(f"/qualifications/{qtype_id}/test")) == deadline_of(first)
    assert stored(market_sessions, qtype_id) == (1, 0, 0)
    # The new session can submit the test it did not start: the clock is the worker's, not the cookie's.
    done = worker.post_form(again, "#question-form", {"q1": "blue", "q2": "green"})
    assert soup(done).select_one("#qualification-score").get_text() == "100"  # type: ignore[union-attr]
    assert stored(market_sessions, qtype_id) == (1, 1, 1)


def test_answers_after_the_duration_are_refused_and_the_start_counts_as_a_try(
    live_server, mturk, market_sessions
) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY, TestDurationInSeconds=600, RetryDelayInSeconds=3600)
    worker = WorkerClient(live_server.url, "late")
    test = start(worker, qtype_id)
    # The time is up (and its grace for the submit's round trip): the clock started 11 minutes ago.
    move_clock_back(market_sessions, qtype_id, 660)
    late = worker.post_form(test, "#question-form", {"q1": "blue", "q2": "green"})
    assert "The time for this test ran out" in late.text
    assert stored(market_sessions, qtype_id) == (1, 0, 0)
    # Neither the old cookie nor a new session gets a fresh clock: the retry delay runs.
    for client in (worker, new_session(worker)):
        page = soup(client.get(f"/qualifications/{qtype_id}"))
        assert "You may try again after" in page.select_one("#qualification-blocked").get_text()  # type: ignore[union-attr]
        refused = start(client, qtype_id)
        assert "You may try again after" in refused.text and "test-deadline" not in refused.text
    assert stored(market_sessions, qtype_id) == (1, 0, 0)


def test_an_abandoned_start_waits_out_the_retry_delay(live_server, mturk, market_sessions) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY, TestDurationInSeconds=600, RetryDelayInSeconds=3600)
    worker = WorkerClient(live_server.url, "abandon")
    start(worker, qtype_id)
    # Abandoned: never submitted, its time (and grace) up 11 minutes ago; the retry delay runs.
    move_clock_back(market_sessions, qtype_id, 1260)
    blocked = start(new_session(worker), qtype_id)
    assert "You may try again after" in blocked.text
    # The retry delay, counted from the abandoned test's deadline, ended two minutes ago.
    abandoned = move_clock_back(market_sessions, qtype_id, 3060)
    second = start(worker, qtype_id)
    assert deadline_of(second) != abandoned.strftime("%H:%M:%S UTC")
    done = worker.post_form(second, "#question-form", {"q1": "blue", "q2": "pink"})
    assert soup(done).select_one("#qualification-score").get_text() == "50"  # type: ignore[union-attr]
    assert stored(market_sessions, qtype_id) == (1, 1, 1)


def test_without_retry_delay_an_abandoned_start_is_the_only_try(live_server, mturk, market_sessions) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY, TestDurationInSeconds=600)
    worker = WorkerClient(live_server.url, "once-abandoned")
    start(worker, qtype_id)
    move_clock_back(market_sessions, qtype_id, 660)
    page = soup(new_session(worker).get(f"/qualifications/{qtype_id}"))
    assert "cannot be requested again" in page.select_one("#qualification-blocked").get_text()  # type: ignore[union-attr]
    assert "cannot be requested again" in start(worker, qtype_id).text
