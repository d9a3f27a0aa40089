"""The HIT list: one row per HIT group, search, sort, pages, and MTurk's ActionsGuarded."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from hits.db import session_scope
from hits.market.models import Assignment
from tests.helpers import EXTERNAL_QUESTION
from tests.server.worker_helpers import WorkerClient, create_hit, csrf_of, soup

QUESTION = EXTERNAL_QUESTION.format(url="https://example.org/task")


def rows(worker: WorkerClient, **params: Any) -> list[Any]:
    page = worker.get("/", params=params)
    assert page.status_code == 200
    return soup(page).select("tbody tr[data-hit-id]")


def titles(worker: WorkerClient, **params: Any) -> list[str]:
    return [row.find("td").contents[0].strip() for row in rows(worker, **params)]


def test_hits_of_one_type_are_one_group_whose_button_accepts_one_of_them(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    hit_ids = {create_hit(mturk, QUESTION, Title=f"Group {tag}") for _ in range(3)}
    worker = WorkerClient(live_server.url, "grouper")
    (row,) = rows(worker, q=tag)
    assert "hit-group" in row["class"] and row["data-hit-id"] in hit_ids
    assert row.find_all("td")[4].get_text(strip=True) == "3"
    page = worker.get("/", params={"q": tag})
    accepted = worker.post_form(page, f'tr[data-hit-id="{row["data-hit-id"]}"] form', {})
    assert accepted.status_code == 200 and soup(accepted).find("iframe", id="hit-frame") is not None
    (after,) = rows(worker, q=tag)
    assert after.find_all("td")[4].get_text(strip=True) == "2"
    assert after["data-hit-id"] != row["data-hit-id"]  # the accepted HIT is no longer offered
    listing = soup(worker.get("/"))
    in_progress = listing.select(".in-progress a")
    assert [a.get_text() for a in in_progress] == [f"Group {tag}"]


def test_search_looks_at_title_description_and_keywords(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"Title {tag}")
    create_hit(mturk, QUESTION, Title="Plain", Description=f"About {tag} things")
    create_hit(mturk, QUESTION, Title="Other", Keywords=f"images, {tag}")
    create_hit(mturk, QUESTION, Title=f"Unrelated {uuid.uuid4().hex[:10]}")
    worker = WorkerClient(live_server.url, "searcher")
    assert sorted(titles(worker, q=tag)) == ["Other", "Plain", f"Title {tag}"]
    assert titles(worker, q=f"{tag} plain") == ["Plain"]  # every word must match
    empty = soup(worker.get("/", params={"q": "no-such-" + tag}))
    assert "No HIT groups match your search." in empty.get_text()


def test_sorting_by_reward_time_requester_and_age(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"A {tag}", Reward="0.50", AssignmentDurationInSeconds=900)
    create_hit(mturk, QUESTION, Title=f"B {tag}", Reward="0.05", AssignmentDurationInSeconds=60)
    create_hit(mturk, QUESTION, Title=f"C {tag}", Reward="1.25", AssignmentDurationInSeconds=300)
    worker = WorkerClient(live_server.url, "sorter")
    assert titles(worker, q=tag) == [f"C {tag}", f"B {tag}", f"A {tag}"]  # newest first
    assert titles(worker, q=tag, sort="reward") == [f"C {tag}", f"A {tag}", f"B {tag}"]
    assert titles(worker, q=tag, sort="reward", order="asc") == [f"B {tag}", f"A {tag}", f"C {tag}"]
    assert titles(worker, q=tag, sort="time") == [f"B {tag}", f"C {tag}", f"A {tag}"]
    assert titles(worker, q=tag, sort="time", order="desc") == [f"A {tag}", f"C {tag}", f"B {tag}"]
    assert rows(worker, q=tag, sort="time")[0].find_all("td")[3].get_text() == "1 min"


def test_groups_are_paginated(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    for n in range(23):
        create_hit(mturk, QUESTION, Title=f"Page {tag} {n:02d}")
    worker = WorkerClient(live_server.url, "pager")
    first = titles(worker, q=tag, sort="requester")
    second = titles(worker, q=tag, sort="requester", page=2)
    assert len(first) == 20 and len(second) == 3
    assert sorted(first + second) == [f"Page {tag} {n:02d}" for n in range(23)]
    page = soup(worker.get("/", params={"q": tag}))
    assert "Page 1 of 2" in page.select_one("nav.pager").get_text()  # type: ignore[union-attr]
    assert titles(worker, q=tag, page=99) == titles(worker, q=tag, page=2)  # past the end: the last page


def test_actions_guarded_decides_what_an_unqualified_worker_sees(live_server, mturk, market_sessions) -> None:
    tag = uuid.uuid4().hex[:10]
    qual = mturk.create_qualification_type(
        Name=f"Skilled {tag}", Description="Passed the skills check.", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]

    def guarded(action: str) -> str:
        requirement = {"QualificationTypeId": qual, "Comparator": "Exists", "ActionsGuarded": action}
        return create_hit(mturk, QUESTION, Title=f"{action} {tag}", QualificationRequirements=[requirement])

    accept_only, preview_too, hidden = (
        guarded("Accept"),
        guarded("PreviewAndAccept"),
        guarded("DiscoverPreviewAndAccept"),
    )
    worker = WorkerClient(live_server.url, "unqualified")
    found = {row.find("td").contents[0].strip(): row for row in rows(worker, q=tag)}
    assert set(found) == {f"Accept {tag}", f"PreviewAndAccept {tag}"}
    for row in found.values():
        assert row["class"] == ["hit-group-locked"] and row.find("form") is None
        assert f"Skilled {tag}" in row.get_text()
    assert found[f"Accept {tag}"].find("a", string="Preview") is not None
    assert found[f"PreviewAndAccept {tag}"].find("a", string="Preview") is None
    assert worker.get(f"/hits/{accept_only}").status_code == 200
    assert worker.get(f"/hits/{preview_too}").status_code == 403
    assert worker.get(f"/hits/{hidden}").status_code == 403
    # Posting the accept form anyway is refused and stores nothing.
    listing = worker.get("/")
    refused = worker.http.post(
        f"{live_server.url}/hits/{accept_only}/accept", data={"csrf_token": csrf_of(listing)}
    )
    assert "do not meet the qualification requirements" in refused.text
    with session_scope(market_sessions) as session:
        assert session.scalars(select(Assignment).where(Assignment.worker_id == worker.worker_id)).all() == []
    mturk.associate_qualification_with_worker(
        QualificationTypeId=qual, WorkerId=worker.worker_id, IntegerValue=1
    )
    qualified = rows(worker, q=tag)
    assert len(qualified) == 3 and all(row["class"] == ["hit-group"] for row in qualified)


def test_a_requesters_block_hides_their_hits(live_server, mturk) -> None:
    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"Blocked {tag}")
    worker = WorkerClient(live_server.url, "blocked")
    assert len(rows(worker, q=tag)) == 1
    mturk.create_worker_block(WorkerId=worker.worker_id, Reason="Answers were copied.")
    assert rows(worker, q=tag) == []


def test_each_worker_sees_only_their_own_work_in_progress_and_only_while_in_time(
    live_server, mturk, market_sessions
) -> None:
    """The in-progress list is one statement built once: who and when are bound on every view."""
    from datetime import timedelta

    from hits.db import utcnow

    tag = uuid.uuid4().hex[:10]
    create_hit(mturk, QUESTION, Title=f"First {tag}")
    create_hit(mturk, QUESTION, Title=f"Second {tag}")
    first, second = WorkerClient(live_server.url, "first"), WorkerClient(live_server.url, "second")
    first.post_form(first.get("/", params={"q": f"First {tag}"}), "tr[data-hit-id] form", {})
    second.post_form(second.get("/", params={"q": f"Second {tag}"}), "tr[data-hit-id] form", {})

    def mine(worker: WorkerClient) -> list[str]:
        return [a.get_text() for a in soup(worker.get("/")).select(".in-progress a")]

    assert mine(first) == [f"First {tag}"]
    assert mine(second) == [f"Second {tag}"]
    with session_scope(market_sessions) as session:  # the first worker's time runs out
        for assignment in session.scalars(select(Assignment).where(Assignment.status == "Accepted")):
            if assignment.hit.hit_type.title == f"First {tag}":
                assignment.deadline = utcnow() - timedelta(seconds=1)
    assert mine(first) == []
    assert mine(second) == [f"Second {tag}"]
