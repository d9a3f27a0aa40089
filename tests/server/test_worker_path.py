"""A crowd on one HIT group: accepting by group, accepting the next HIT, and reads that never queue."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

import requests
from sqlalchemy import insert, select, text

from hits.db import session_scope
from hits.market.models import HIT, Assignment
from hits.market.models.work import ACCEPTED
from hits.market.worker_groups import COUNT_CAP
from tests.conftest import BACKEND
from tests.server.worker_helpers import MTURK_HTML, WorkerClient, create_hit, csrf_of, html_question, soup

QUESTION = html_question(MTURK_HTML)
CROWD = 50


def _group_row_selector(hit_type_id: str) -> str:
    return f'tr[data-hit-type-id="{hit_type_id}"] form'


def _hit_type_of(mturk, hit_id: str) -> str:  # type: ignore[no-untyped-def]
    return str(mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"])


def test_fifty_workers_accepting_one_group_at_once_each_get_a_different_hit(
    live_server, mturk, market_sessions
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = {create_hit(mturk, QUESTION, Title=f"Crowd {tag}") for _ in range(CROWD)}
    hit_type_id = _hit_type_of(mturk, next(iter(hit_ids)))
    with ThreadPoolExecutor(max_workers=10) as pool:
        workers = list(pool.map(lambda n: WorkerClient(live_server.url, f"crowd{n}"), range(CROWD)))
    # Everyone looks at the list at the same moment, so everyone sees the same row...
    listings = [w.get("/", params={"q": tag}) for w in workers]
    start = threading.Barrier(CROWD)

    def accept(index: int) -> requests.Response:
        worker, listing = workers[index], listings[index]
        start.wait()
        # ...and presses its Accept button, as a browser posts the row's form.
        return worker.post_form(listing, _group_row_selector(hit_type_id), {})

    with ThreadPoolExecutor(max_workers=CROWD) as pool:
        responses = list(pool.map(accept, range(CROWD)))

    for response in responses:
        assert response.status_code == 200
        assert urlparse(response.url).path.startswith("/work/"), soup(response).get_text()[:300]
        assert soup(response).find("iframe", id="hit-frame") is not None
    with session_scope(market_sessions) as session:
        taken = session.execute(
            select(Assignment.worker_id, Assignment.hit_id).where(
                Assignment.hit_id.in_(hit_ids), Assignment.status == ACCEPTED
            )
        ).all()
    assert len(taken) == CROWD
    assert {worker for worker, _ in taken} == {w.worker_id for w in workers}
    assert {hit for _, hit in taken} == hit_ids  # fifty different HITs: nobody collided


def _frame_submit(worker: WorkerClient, work_page: requests.Response, answer: str) -> requests.Response:
    """Post the answer the way the HIT's frame does (its URL carries the signed token)."""
    frame = soup(work_page).find("iframe", id="hit-frame")
    params = {k: v[0] for k, v in parse_qs(urlparse(str(frame["src"])).query).items()}  # type: ignore[index]
    assert worker.get(str(frame["src"])).status_code == 200  # type: ignore[index]
    return requests.post(
        worker.base + "/mturk/externalSubmit",
        data={
            "assignmentId": params["assignmentId"],
            "hitforgeToken": params["hitforgeToken"],
            "caption": answer,
        },
    )


def test_accept_next_hit_takes_the_groups_next_hit_after_each_submission(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = [create_hit(mturk, QUESTION, Title=f"Chain {tag}") for _ in range(3)]
    hit_type_id = _hit_type_of(mturk, hit_ids[0])
    worker = WorkerClient(live_server.url, "chain")
    work_page = worker.post_form(worker.get("/", params={"q": tag}), _group_row_selector(hit_type_id), {})
    box = soup(work_page).find("input", id="accept-next-box")
    assert box is not None and not box.has_attr("checked")  # off until the worker ticks it
    done: list[str] = []
    for n in range(3):
        frame_hit = parse_qs(urlparse(str(soup(work_page).find("iframe", id="hit-frame")["src"])).query)  # type: ignore[index]
        done.append(frame_hit["hitId"][0])
        assert _frame_submit(worker, work_page, f"answer {n}").status_code == 200
        # What the work page's script posts when the frame reports the submission and the box is ticked.
        work_page = worker.post_form(work_page, "form#accept-next", {"accept_next": "1"})
        if n < 2:
            assert urlparse(work_page.url).path.startswith("/work/")
            assert soup(work_page).find("input", id="accept-next-box").has_attr("checked")  # type: ignore[union-attr]
    assert sorted(done) == sorted(hit_ids)  # each HIT of the group once, none twice
    # The group is used up: the worker lands on the list with a clear message, not an error page.
    assert urlparse(work_page.url).path == "/"
    assert "no more HITs in this group" in work_page.text
    # Back on the list after a submission, the box is off again for the next group.
    worker.get("/", params={"submitted": "1"})
    create_hit(mturk, QUESTION, Title=f"Chain {tag}")
    again = worker.post_form(worker.get("/", params={"q": tag}), _group_row_selector(hit_type_id), {})
    assert not soup(again).find("input", id="accept-next-box").has_attr("checked")  # type: ignore[union-attr]


def test_a_specific_hit_can_still_be_accepted_from_its_preview(live_server, mturk, market_sessions) -> None:
    tag = uuid.uuid4().hex[:10]
    older = create_hit(mturk, QUESTION, Title=f"Pick {tag}")
    newer = create_hit(mturk, QUESTION, Title=f"Pick {tag}")
    worker = WorkerClient(live_server.url, "picker")
    preview = worker.get(f"/hits/{newer}")
    accepted = worker.post_form(preview, "form:has(#accept-button)", {})
    assert urlparse(accepted.url).path.startswith("/work/")
    with session_scope(market_sessions) as session:
        mine = session.scalars(
            select(Assignment.hit_id).where(Assignment.worker_id == worker.worker_id)
        ).all()
    assert mine == [newer] and older != newer


def test_the_pages_of_the_work_loop_do_not_wait_for_a_writer(live_server, mturk, market_sessions) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_id = create_hit(mturk, QUESTION, Title=f"Reads {tag}")
    worker = WorkerClient(live_server.url, "reader")
    work_page = worker.post_form(worker.get("/", params={"q": tag}), "tr[data-hit-type-id] form", {})
    frame_src = str(soup(work_page).find("iframe", id="hit-frame")["src"])  # type: ignore[index]
    # The clocks run at most every 5 s, in their own write: mark them just run.
    live_server.server.app.extensions.setdefault("hitforge_clock", {})["last"] = time.monotonic()
    with session_scope(market_sessions) as writer:
        writer.execute(text("SELECT 1"))  # a write unit of work is open: on SQLite it holds the lock
        for path in ("/", work_page.url, f"/hits/{hit_id}", frame_src, "/me"):
            started = time.monotonic()
            # A page that queued for the write lock would wait for this writer (60 s on SQLite);
            # 15 s leaves room for a loaded machine.
            response = worker.get(path, timeout=30)
            assert response.status_code == 200, path
            assert time.monotonic() - started < 15, path
    # And the writes still work once the writer is gone.
    assert _frame_submit(worker, work_page, "a caption").status_code == 200
    with session_scope(market_sessions) as session:
        assert session.scalar(select(HIT.status).where(HIT.id == hit_id)) in ("Reviewable", "Assignable")
    assert BACKEND in ("embedded", "postgres")


def test_a_used_up_group_gives_a_clear_message_and_stores_nothing(
    live_server, mturk, market_sessions
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_id = create_hit(mturk, QUESTION, Title=f"Once {tag}")
    hit_type_id = _hit_type_of(mturk, hit_id)
    first, second = WorkerClient(live_server.url, "first"), WorkerClient(live_server.url, "second")
    late_listing = second.get("/", params={"q": tag})
    assert first.post_form(first.get("/", params={"q": tag}), _group_row_selector(hit_type_id), {}).ok
    refused = second.post_form(late_listing, _group_row_selector(hit_type_id), {})
    assert refused.status_code == 200 and urlparse(refused.url).path == "/"
    assert "no more HITs in this group" in refused.text
    unknown = second.http.post(
        f"{live_server.url}/groups/NOSUCHTYPE/accept", data={"csrf_token": csrf_of(refused)}
    )
    assert unknown.status_code == 200 and "does not exist" in unknown.text.lower()
    with session_scope(market_sessions) as session:
        assert session.scalars(select(Assignment).where(Assignment.worker_id == second.worker_id)).all() == []


def test_a_large_group_is_listed_with_its_count_capped_and_its_oldest_hit_first(
    live_server, mturk, market_sessions
) -> None:
    # The list reads at most COUNT_CAP + 1 of a group's open HITs, so its cost does not grow with the group.
    tag = uuid.uuid4().hex[:10]
    first = create_hit(mturk, QUESTION, Title=f"Big {tag}")
    with session_scope(market_sessions) as session:
        template = session.get(HIT, first)
        assert template is not None
        session.execute(
            insert(HIT),
            [
                {
                    "id": f"3BIG{tag}{n:05d}".upper()[:30],
                    "hit_type_id": template.hit_type_id,
                    "requester_id": template.requester_id,
                    "question": template.question,
                    "max_assignments": 1,
                    "status": "Assignable",
                    "created_at": template.created_at + timedelta(seconds=1 + n),
                    "expires_at": template.expires_at,
                }
                for n in range(COUNT_CAP + 50)
            ],
        )
    worker = WorkerClient(live_server.url, "big")
    listing = worker.get("/", params={"q": tag})
    (row,) = soup(listing).select("tbody tr[data-hit-type-id]")
    assert row.find_all("td")[4].get_text(strip=True) == f"{COUNT_CAP}+"
    assert row["data-hit-id"] == first  # the preview link shows the oldest
    accepted = worker.post_form(listing, "tr[data-hit-type-id] form", {})
    assert soup(accepted).find("iframe", id="hit-frame")["src"].count(f"hitId={first}") == 1  # type: ignore[index]
