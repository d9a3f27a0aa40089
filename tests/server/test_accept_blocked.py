"""A requester's block stops the worker's accepts, asked in the accept's own queries (no extra statement)."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from hits.db import session_scope
from hits.market.models import Assignment
from tests.conftest import boto3_client, new_requester
from tests.helpers import EXTERNAL_QUESTION
from tests.server.test_work_page_statements import _rows_read_by
from tests.server.worker_helpers import WorkerClient, create_hit, soup

QUESTION = EXTERNAL_QUESTION.format(url="https://example.org/task")
BLOCKED = "The requester of this HIT has blocked you from working on their HITs."


def test_a_blocked_worker_cannot_accept_from_pages_loaded_before_the_block(
    live_server, mturk, market_sessions
) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_id = create_hit(mturk, QUESTION, Title=f"Blocked {tag}")
    worker = WorkerClient(live_server.url, "blockee")
    listing = worker.get("/", params={"q": tag})
    preview = worker.get(f"/hits/{hit_id}")
    mturk.create_worker_block(WorkerId=worker.worker_id, Reason="Answers were copied.")

    by_group = worker.post_form(listing, "tr[data-hit-type-id] form", {})
    by_hit = worker.post_form(preview, f'form[action="/hits/{hit_id}/accept"]', {})
    for refused in (by_group, by_hit):
        assert refused.status_code == 200 and BLOCKED in refused.text
        assert soup(refused).find("iframe", id="hit-frame") is None
    with session_scope(market_sessions) as session:
        assert session.scalars(select(Assignment).where(Assignment.worker_id == worker.worker_id)).all() == []

    # Once unblocked, the same pages work.
    mturk.delete_worker_block(WorkerId=worker.worker_id)
    taken = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    assert soup(taken).find("iframe", id="hit-frame") is not None


def test_another_requesters_block_does_not_stop_the_worker(live_server, mturk, market_sessions) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"Other block {tag}")
    single = create_hit(mturk, QUESTION, Title=f"Single {uuid.uuid4().hex[:10]}")
    worker = WorkerClient(live_server.url, "elsewhere")
    other = boto3_client(live_server.url, new_requester(market_sessions))
    other.create_worker_block(WorkerId=worker.worker_id, Reason="Not for this requester's HITs.")
    by_group = worker.post_form(worker.get("/", params={"q": tag}), "tr[data-hit-type-id] form", {})
    assert soup(by_group).find("iframe", id="hit-frame") is not None
    by_hit = worker.post_form(worker.get(f"/hits/{single}"), f'form[action="/hits/{single}/accept"]', {})
    assert soup(by_hit).find("iframe", id="hit-frame") is not None


def test_an_accept_asks_about_blocks_in_the_query_it_reads_the_hit_or_its_type_with(
    live_server, mturk
) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"Folded {tag}")
    single = create_hit(mturk, QUESTION, Title=f"Single {uuid.uuid4().hex[:10]}")
    worker = WorkerClient(live_server.url, "folded")

    listing = worker.get("/", params={"q": tag})
    group_reads = _rows_read_by(
        live_server, lambda: worker.post_form(listing, "tr[data-hit-type-id] form", {})
    )
    blocks = [s for s in group_reads if "market_worker_blocks" in s]
    assert len(blocks) == 1 and blocks[0].startswith("SELECT market_hit_types.id"), group_reads

    preview = worker.get(f"/hits/{single}")
    hit_reads = _rows_read_by(
        live_server, lambda: worker.post_form(preview, f'form[action="/hits/{single}/accept"]', {})
    )
    blocks = [s for s in hit_reads if "market_worker_blocks" in s]
    assert len(blocks) == 1 and blocks[0].startswith("SELECT market_hits.id"), hit_reads
