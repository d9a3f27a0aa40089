"""A worker who gives back HIT after HIT is paused: a script cannot cycle accept and return to read pages."""

from __future__ import annotations

import uuid
from datetime import timedelta

import requests
from sqlalchemy import select, update

from demo.runner import serve_in_thread
from hits.db import session_scope, utcnow
from hits.market.assignment_ops import RETURN_LIMIT, run_clocks
from hits.market.models import Assignment, Worker
from server import create_app
from tests.helpers import EXTERNAL_QUESTION
from tests.server.worker_helpers import WorkerClient, create_hit, soup

QUESTION = EXTERNAL_QUESTION.format(url="https://example.org/task")
REFUSAL = "You have returned or let expire too many HITs in a short time."


def _accept_group(worker: WorkerClient, tag: str, base: str = "") -> requests.Response:
    """Press the group's Accept button on the listing (of the server at ``base``, default the worker's)."""
    base = base or worker.base
    listing = worker.http.get(base + "/", params={"q": tag})
    form = soup(listing).select_one("tr[data-hit-type-id] form")
    assert form is not None, "the group is not offered"
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[union-attr,index]
    return worker.http.post(base + str(form["action"]), data={"csrf_token": token})


def _return(worker: WorkerClient, work_page: requests.Response, base: str = "") -> None:
    form = soup(work_page).select_one('form[action$="/return"]')
    assert form is not None, "not on a work page"
    token = form.find("input", attrs={"name": "csrf_token"})["value"]  # type: ignore[union-attr,index]
    returned = worker.http.post((base or worker.base) + str(form["action"]), data={"csrf_token": token})
    assert returned.status_code == 200 and "The HIT was returned." in returned.text


def _on_work_page(page: requests.Response) -> bool:
    return page.status_code == 200 and soup(page).find("iframe", id="hit-frame") is not None


def test_an_accept_return_loop_is_refused_after_the_limit(
    live_server, settings, mturk, market_sessions
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = [create_hit(mturk, QUESTION, Title=f"Loop {tag}") for _ in range(2)]
    # A second server process on the same database: the count is the database's, not a process's.
    other = serve_in_thread(create_app(settings=settings))
    try:
        looper = WorkerClient(live_server.url, "looper")
        for n in range(RETURN_LIMIT):
            page = _accept_group(looper, tag, other.url if n % 2 else live_server.url)
            assert _on_work_page(page), n
            _return(looper, page, other.url if n % 2 else live_server.url)
        for base in (live_server.url, other.url):
            refused = _accept_group(looper, tag, base)
            assert not _on_work_page(refused)
            assert REFUSAL in refused.text and "You can accept HITs again in 30 minutes." in refused.text
        # Nor one HIT by its own Accept (from its preview).
        preview = looper.get(f"/hits/{hit_ids[0]}")
        assert REFUSAL in looper.post_form(preview, 'form[action$="/accept"]', {}).text
    finally:
        other.stop()
    with session_scope(market_sessions) as session:
        held = session.scalars(
            select(Assignment.status).where(Assignment.worker_id == looper.worker_id)
        ).all()
    assert held == ["Returned"] * RETURN_LIMIT  # the refused accepts wrote nothing

    # Someone else takes the group's HITs as usual.
    bystander = WorkerClient(live_server.url, "bystander")
    assert _on_work_page(_accept_group(bystander, tag))

    # The pause ends when the oldest counted return is half an hour old, and the count slides on.
    with session_scope(market_sessions) as session:
        oldest = session.scalar(
            select(Assignment.id)
            .where(Assignment.worker_id == looper.worker_id)
            .order_by(Assignment.return_time)
            .limit(1)
        )
        session.execute(
            update(Assignment)
            .where(Assignment.id == oldest)
            .values(return_time=utcnow() - timedelta(minutes=31))
        )
        session.execute(
            update(Worker).where(Worker.id == looper.worker_id).values(accepts_paused_until=utcnow())
        )
    page = _accept_group(looper, tag)
    assert _on_work_page(page)
    _return(looper, page)  # the limit-th return in the last 30 minutes again: paused at once
    assert REFUSAL in _accept_group(looper, tag).text


def test_a_worker_who_returns_now_and_then_is_never_stopped(live_server, mturk, market_sessions) -> None:
    tag = uuid.uuid4().hex[:10]
    for _ in range(3):
        create_hit(mturk, QUESTION, Title=f"Now and then {tag}")
    worker = WorkerClient(live_server.url, "careful")
    # Returns from earlier in the day, more than the limit, no longer count.
    for _ in range(RETURN_LIMIT):
        page = _accept_group(worker, tag)
        assert _on_work_page(page)
        _return(worker, page)
        with session_scope(market_sessions) as session:
            session.execute(
                update(Assignment)
                .where(Assignment.worker_id == worker.worker_id, Assignment.status == "Returned")
                .values(return_time=utcnow() - timedelta(minutes=45))
            )
    # Then a few returns within the half hour, one short of the limit, between HITs kept.
    for _ in range(RETURN_LIMIT - 1):
        page = _accept_group(worker, tag)
        assert _on_work_page(page)
        _return(worker, page)
    for _ in range(3):
        assert _on_work_page(_accept_group(worker, tag))
    with session_scope(market_sessions) as session:
        paused = session.scalar(select(Worker.accepts_paused_until).where(Worker.id == worker.worker_id))
    assert paused is None


def test_letting_many_hits_expire_counts_as_returning_them(live_server, mturk, market_sessions) -> None:
    """Holding many HITs and letting them run out is the slow way round the return limit."""
    tag = uuid.uuid4().hex[:10]
    for _ in range(RETURN_LIMIT + 1):
        create_hit(mturk, QUESTION, Title=f"Expire {tag}")
    hoarder = WorkerClient(live_server.url, "hoarder")
    for _ in range(RETURN_LIMIT):
        assert _on_work_page(_accept_group(hoarder, tag))
    with session_scope(market_sessions) as session:
        session.execute(
            update(Assignment)
            .where(Assignment.worker_id == hoarder.worker_id)
            .values(deadline=utcnow() - timedelta(seconds=5))
        )
    with session_scope(market_sessions) as session:
        run_clocks(session)  # the server's own sweep may have got there first: either will do
    refused = _accept_group(hoarder, tag)
    assert not _on_work_page(refused) and REFUSAL in refused.text
    with session_scope(market_sessions) as session:
        statuses = session.scalars(
            select(Assignment.status).where(Assignment.worker_id == hoarder.worker_id)
        ).all()
    assert statuses == ["Abandoned"] * RETURN_LIMIT
