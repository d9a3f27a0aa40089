"""Workers who submit the last assignments of one HIT at the same moment: the HIT turns Reviewable.

Marketplace side. Found by the batch crowd test on PostgreSQL (1 run in 3 to
6): two of a HIT's eight workers posted their answers 6 ms apart. Each
submission counted the HIT's assignments without seeing the other's (not
committed yet), each found one still in progress, and the HIT stayed
Unassignable with all eight submitted. ListReviewableHITs never listed it, so
the review pipeline never read it and the batch never finished. Submitting,
returning and the clock's sweep now take the HIT's row lock before they count.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlparse

import requests
from sqlalchemy import select

from hits.db import session_scope
from hits.market.models import HIT
from tests.server.worker_helpers import MTURK_HTML, WorkerClient, create_hit, html_question, soup

QUESTION = html_question(MTURK_HTML)
WORKERS = 6
TRIALS = 4


def _accepted_frame(worker: WorkerClient, hit_id: str) -> dict[str, str]:
    """Accept the HIT from its preview and open its frame; the fields the frame's form posts."""
    work_page = worker.post_form(worker.get(f"/hits/{hit_id}"), "form:has(#accept-button)", {})
    assert urlparse(work_page.url).path.startswith("/work/"), work_page.text[:300]
    src = str(soup(work_page).find("iframe", id="hit-frame")["src"])  # type: ignore[index]
    assert worker.get(src).status_code == 200
    params = {k: v[0] for k, v in parse_qs(urlparse(src).query).items()}
    return {"assignmentId": params["assignmentId"], "hitforgeToken": params["hitforgeToken"]}


def _submit_at_once(base: str, frames: list[dict[str, str]]) -> list[requests.Response]:
    """Every worker presses Submit at the same moment (released together)."""
    start = threading.Barrier(len(frames))

    def submit(index: int) -> requests.Response:
        start.wait()
        return requests.post(
            base + "/mturk/externalSubmit", data={**frames[index], "caption": f"answer {index}"}, timeout=60
        )

    with ThreadPoolExecutor(max_workers=len(frames)) as pool:
        return list(pool.map(submit, range(len(frames))))


def test_the_last_assignments_of_a_hit_submitted_at_once_leave_it_reviewable(
    live_server, mturk, market_sessions
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = [
        create_hit(mturk, QUESTION, Title=f"Race {tag}", MaxAssignments=WORKERS) for _ in range(TRIALS)
    ]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        workers = list(pool.map(lambda n: WorkerClient(live_server.url, f"racer{n}"), range(WORKERS)))
    for hit_id in hit_ids:
        responses = _submit_at_once(live_server.url, [_accepted_frame(w, hit_id) for w in workers])
        assert [r.status_code for r in responses] == [200] * WORKERS
    with session_scope(market_sessions) as session:
        stored = dict(session.execute(select(HIT.id, HIT.status).where(HIT.id.in_(hit_ids))).all())
    assert stored == dict.fromkeys(hit_ids, "Reviewable")
    # What the review pipeline reads: the listing, which goes by the stored status (GetHIT
    # recomputes a HIT's status, and would have hidden the stuck one).
    hit_type_id = mturk.get_hit(HITId=hit_ids[0])["HIT"]["HITTypeId"]
    listed = mturk.list_reviewable_hits(HITTypeId=hit_type_id, MaxResults=100)["HITs"]
    assert {h["HITId"] for h in listed} == set(hit_ids)
