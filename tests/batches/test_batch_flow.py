"""A layout + CSV batch end to end: published through boto3, worked on the worker site
over HTTP, its results CSV read in pandas, and an edited copy applied exactly once."""

from __future__ import annotations

import io
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import requests
from bs4 import BeautifulSoup, Tag
from sqlalchemy import func, select

from hits.db import session_scope
from hits.requester.batches.columns import LEADING_COLUMNS
from hits.requester.batches.plan import BatchSettings, create_batch
from hits.requester.batches.publish import publish_batch
from hits.requester.batches.results import marked_work, queue_review, read_review, result_rows, write_results
from hits.requester.fileerrors import InputFileErrors
from hits.requester.quality.outbox import apply_entries
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import OutboxEntry
from tests.server.worker_helpers import WorkerClient, soup

LAYOUT = """<h2>Describe the picture</h2>
<img src="${image_url}" alt="${ alt text }">
<p>Shown to you as: ${caption_hint}</p>
<p><input name="caption" id="caption"></p>
<p><label><input type="checkbox" name="tags" value="cat"> cat</label>
<label><input type="checkbox" name="tags" value="dog"> dog</label></p>
<script>var n = 2; document.title = `Item ${n} of ${image_url}`;</script>
<p data-total="${ price * 2 }">${}</p>
"""
CSV = (
    "image_url,alt text,caption_hint\n"
    'https://example.org/a.jpg,A cat,"<b>bold</b> & ""quoted"""\n'
    "https://example.org/b.jpg,A dog,plain\n"
    "https://example.org/c.jpg,A bird,plain\n"
)


def settings(**overrides: object) -> BatchSettings:
    return BatchSettings.model_validate(
        {"title": "Describe a picture", "description": "One caption.", "reward": "0.25", **overrides}
    )


def make_batch(requester_sessions, tmp_path: Path, layout: str = LAYOUT, csv: str = CSV) -> int:  # type: ignore[no-untyped-def]
    (tmp_path / "layout.html").write_text(layout, encoding="utf-8")
    (tmp_path / "input.csv").write_text(csv, encoding="utf-8")
    with session_scope(requester_sessions) as session:
        batch = create_batch(
            session,
            f"pictures-{uuid.uuid4().hex[:6]}",
            tmp_path / "layout.html",
            tmp_path / "input.csv",
            settings(assignments=2),
        )
        return batch.id


def hit_ids(requester_sessions, batch_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return [
            str(h)
            for h in session.scalars(
                select(BatchRow.mturk_hit_id).where(BatchRow.batch_id == batch_id).order_by(BatchRow.position)
            )
        ]


def accepted_frame(worker: WorkerClient, hit_id: str, expected: set[str]) -> tuple[str, str]:
    """Accept the HIT and open its frame without cookies, as the sandboxed frame does.

    Checks that the page's MTurk form carries the ``expected`` fields; returns
    the assignment id and the signed token the frame's script adds to the form.
    """
    page = worker.post_form(worker.get("/"), f'tr[data-hit-id="{hit_id}"] form', {})
    assert page.status_code == 200
    assignment_id = page.url.rsplit("/", 1)[-1]
    frame = soup(page).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag)
    src = str(frame["src"])
    html = requests.get(worker.base + src)
    assert html.status_code == 200
    form = BeautifulSoup(html.text, "html.parser").find("form", id="mturk_form")
    assert isinstance(form, Tag)
    names = {str(i["name"]) for i in form.find_all("input") if i.get("name")}
    assert expected <= names
    return assignment_id, parse_qs(urlsplit(src).query)["hitforgeToken"][0]


def work(worker: WorkerClient, hit_id: str, caption: str, tags: list[str]) -> str:
    """Post the layout's form as a browser would: its fields, plus what externalHIT_v1.js fills in."""
    assignment_id, token = accepted_frame(worker, hit_id, {"assignmentId", "caption", "tags"})
    data = [("assignmentId", assignment_id), ("hitforgeToken", token), ("caption", caption)]
    data += [("tags", t) for t in tags]
    posted = requests.post(f"{worker.base}/mturk/externalSubmit", data=data)
    assert posted.status_code == 200
    return assignment_id


def test_batch_publishes_is_worked_and_reviewed_through_its_results_csv(
    live_server, market, mturk, requester_sessions, tmp_path
) -> None:
    batch_id = make_batch(requester_sessions, tmp_path)
    report = publish_batch(requester_sessions, market, batch_id)
    assert (report.published, report.already_there) == (3, 0)
    hits = hit_ids(requester_sessions, batch_id)
    described = [mturk.get_hit(HITId=h)["HIT"] for h in hits]
    assert len({d["HITTypeId"] for d in described}) == 1  # one HITType for the batch
    assert all(d["MaxAssignments"] == 2 and d["Reward"] == "0.25" for d in described)
    first = described[0]["Question"]
    # Columns substituted and escaped; spaces inside the braces allowed.
    assert 'src="https://example.org/a.jpg" alt="A cat"' in first
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;" in first and "<b>bold</b>" not in first
    # A template literal's own ${n} and an unknown ${...} stay as written (a column inside one is filled).
    assert "`Item ${n} of https://example.org/a.jpg`" in first and 'data-total="${ price * 2 }">${}<' in first

    alice, bob = WorkerClient(live_server.url, "alice"), WorkerClient(live_server.url, "bob")
    done = {
        (hits[0], "alice"): work(alice, hits[0], "A cat, asleep", ["cat"]),
        (hits[0], "bob"): work(bob, hits[0], "x", []),
        (hits[1], "alice"): work(alice, hits[1], "A dog with a ball", ["dog", "cat"]),
    }

    header, rows = result_rows(requester_sessions, market, batch_id)
    out = io.StringIO()
    assert write_results(header, rows, out) == 3
    frame = pd.read_csv(io.StringIO(out.getvalue()), keep_default_na=False, dtype=str)
    assert list(frame.columns) == [
        *LEADING_COLUMNS,
        "Input.image_url",
        "Input.alt text",
        "Input.caption_hint",
        "Answer.caption",
        "Answer.tags",
        "Approve",
        "Reject",
    ]
    by_assignment = frame.set_index("AssignmentId")
    mine = by_assignment.loc[done[(hits[1], "alice")]]
    assert mine["Answer.caption"] == "A dog with a ball" and mine["Answer.tags"] == "dog|cat"
    assert mine["Input.alt text"] == "A dog" and mine["WorkerId"] == alice.worker_id
    assert mine["AssignmentStatus"] == "Submitted" and mine["Reward"] == "$0.25"
    assert int(mine["WorkTimeInSeconds"]) >= 0 and mine["HITId"] == hits[1]
    assert by_assignment.loc[done[(hits[0], "alice")]]["Input.caption_hint"] == '<b>bold</b> & "quoted"'

    # The requester marks the file as on MTurk and hands it back.
    frame.loc[frame["AssignmentId"] == done[(hits[0], "alice")], "Approve"] = "x"
    frame.loc[frame["AssignmentId"] == done[(hits[1], "alice")], "Approve"] = "X"
    frame.loc[frame["AssignmentId"] == done[(hits[0], "bob")], "Reject"] = "A one-letter caption."
    edited = tmp_path / "reviewed.csv"
    frame.to_csv(edited, index=False)
    for _ in range(2):  # handed in twice: still one decision per assignment
        marks = read_review(edited)
        handed_in = marked_work(requester_sessions, market, batch_id, marks)
        with session_scope(requester_sessions) as session:
            entry_ids = queue_review(session, batch_id, edited, marks, handed_in)
        applied = apply_entries(requester_sessions, market, entry_ids)
        assert not applied.failures
    with session_scope(requester_sessions) as session:
        campaign_id = session.get(Batch, batch_id).campaign_id  # type: ignore[union-attr]
        entries = session.scalar(select(func.count()).where(OutboxEntry.campaign_id == campaign_id))
    assert entries == 3
    status = {k: mturk.get_assignment(AssignmentId=a)["Assignment"] for k, a in done.items()}
    assert status[(hits[0], "alice")]["AssignmentStatus"] == "Approved"
    assert status[(hits[1], "alice")]["AssignmentStatus"] == "Approved"
    assert status[(hits[0], "bob")]["AssignmentStatus"] == "Rejected"
    assert status[(hits[0], "bob")]["RequesterFeedback"] == "A one-letter caption."
    header, rows = result_rows(requester_sessions, market, batch_id)
    statuses = {r["AssignmentId"]: r["AssignmentStatus"] for r in rows}
    assert statuses[done[(hits[0], "bob")]] == "Rejected"


def test_marks_on_both_columns_or_another_batch_name_file_and_line(
    live_server, market, requester_sessions, tmp_path
) -> None:
    batch_id = make_batch(requester_sessions, tmp_path)
    publish_batch(requester_sessions, market, batch_id)
    hits = hit_ids(requester_sessions, batch_id)
    path = tmp_path / "marks.csv"
    lines = [
        "HITId,AssignmentId,Approve,Reject",
        f"{hits[0]},A1,x,",
        f"{hits[0]},A2,x,Bad work",
        "SOMEONEELSESHIT,A3,x,",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputFileErrors) as both:
        read_review(path)
    assert (
        str(both.value) == f"{path}, line 3, field 'Approve': both Approve and Reject are filled in: keep one"
    )
    path.write_text("\n".join([lines[0], lines[1], lines[3]]) + "\n", encoding="utf-8")
    marks = read_review(path)
    handed_in = marked_work(requester_sessions, market, batch_id, marks)
    with session_scope(requester_sessions) as session, pytest.raises(InputFileErrors) as foreign:
        queue_review(session, batch_id, path, marks, handed_in)
    assert f"{path}, line 3, field 'HITId'" in str(foreign.value)
    # A1 is no work handed in for the batch's HIT: no outbox key is spent on it.
    assert f"{path}, line 2, field 'AssignmentId': assignment A1 is not work handed in" in str(foreign.value)
    with session_scope(requester_sessions) as session:
        assert session.scalar(select(func.count()).where(OutboxEntry.target.in_(["A1", "A3"]))) == 0
