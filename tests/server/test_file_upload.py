"""FileUploadAnswer end to end: a worker uploads on the site, the requester downloads via GetFileUploadURL."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
import requests
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from sqlalchemy import func, select, text

from hits.db import session_scope
from hits.market.models import Assignment
from hits.market.models.requests import UploadedFile
from hits.wire.xml_schemas import validate_answers
from server.market.worker_site.uploads import SALT
from tests.conftest import BACKEND, boto3_client, new_requester
from tests.helpers import altered_token
from tests.server.worker_helpers import WorkerClient, create_hit, csrf_of, free_text, question_form, soup


def file_upload(qid: str, text: str, low: int, high: int, required: bool = True) -> str:
    return (
        f"<Question><QuestionIdentifier>{qid}</QuestionIdentifier>"
        f"<IsRequired>{'true' if required else 'false'}</IsRequired>"
        f"<QuestionContent><Text>{text}</Text></QuestionContent><AnswerSpecification><FileUploadAnswer>"
        f"<MaxFileSizeInBytes>{high}</MaxFileSizeInBytes><MinFileSizeInBytes>{low}</MinFileSizeInBytes>"
        "</FileUploadAnswer></AnswerSpecification></Question>"
    )


FORM = question_form(
    free_text("caption", "Describe your photo."),
    file_upload("photo", "Upload a photo of a tree.", 10, 2000),
    file_upload("extra", "Another photo, if you like.", 1, 50_000_000, required=False),
)
PHOTO = bytes(range(256)) * 2 + b"<script>alert(1)</script>"  # 537 bytes, not text


def files_of(market_sessions, assignment_id: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return (
            session.scalar(
                select(func.count())
                .select_from(UploadedFile)
                .where(UploadedFile.assignment_id == assignment_id)
            )
            or 0
        )


def accept(worker: WorkerClient, hit_id: str) -> tuple[str, requests.Response]:
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    match = re.search(r"/work/(\w+)/answers", work.text)
    assert match is not None, work.text
    return match.group(1), work


def post_answers(
    worker: WorkerClient, page: requests.Response, assignment_id: str, files: dict[str, Any], **fields: str
) -> requests.Response:
    return worker.http.post(
        f"{worker.base}/work/{assignment_id}/answers",
        data={"csrf_token": csrf_of(page), **fields},
        files=files,
    )


def test_a_worker_uploads_a_file_and_the_requester_downloads_it(live_server, mturk, market_sessions) -> None:
    hit_id = create_hit(mturk, FORM)
    worker = WorkerClient(live_server.url, "uploader")
    assignment_id, work = accept(worker, hit_id)
    page = soup(work)
    form = page.select_one("#question-form")
    assert form is not None and form.get("enctype") == "multipart/form-data"
    photo_input = page.select_one('input[type="file"][name="q2"]')
    assert photo_input is not None
    assert (photo_input["data-min-bytes"], photo_input["data-max-bytes"]) == ("10", "2000")
    assert "A file of 10 bytes to 2 kB." in page.select_one("#q2-bounds").get_text()  # type: ignore[union-attr]
    # The site stores at most 10 MB a file, whatever MaxFileSizeInBytes allows.
    assert page.select_one('input[name="q3"]')["data-max-bytes"] == "10000000"  # type: ignore[index]

    # Too big, too small, or missing: refused with the typed answer kept, and no file stored.
    for files, problem in (
        ({"q2": ("big.jpg", b"x" * 2001, "image/jpeg")}, "Please choose a file of at most 2 kB."),
        ({"q2": ("small.jpg", b"x" * 9, "image/jpeg")}, "Please choose a file of at least 10 bytes."),
        ({}, "This question needs an answer."),
    ):
        refused = post_answers(worker, work, assignment_id, files, q1="An oak")
        assert refused.status_code == 422 and problem in refused.text
        assert soup(refused).select_one('input[name="q1"]')["value"] == "An oak"  # type: ignore[index]
        assert "Please choose it again" in refused.text
    assert files_of(market_sessions, assignment_id) == 0

    done = post_answers(
        worker, work, assignment_id, {"q2": ("photos/tree 1.png", PHOTO, "image/png")}, q1="An oak"
    )
    assert done.status_code == 200 and "your work was submitted" in done.text
    (assignment,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    answer = assignment["Answer"]
    validate_answers(answer)
    assert (
        "<Answer><QuestionIdentifier>caption</QuestionIdentifier><FreeText>An oak</FreeText></Answer>"
        in answer
    )
    match = re.search(
        r"<QuestionIdentifier>photo</QuestionIdentifier><UploadedFileSizeInBytes>(\d+)</UploadedFileSizeInBytes>"
        r"<UploadedFileKey>(\w+)</UploadedFileKey>",
        answer,
    )
    assert match is not None and int(match.group(1)) == len(PHOTO)
    assert "<Answer><QuestionIdentifier>extra</QuestionIdentifier></Answer>" in answer  # optional, left out

    url = mturk.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier="photo")["FileUploadURL"]
    assert url.startswith(live_server.url + "/uploads/")
    download = requests.get(url)  # no cookies: the URL is the credential
    assert download.status_code == 200 and download.content == PHOTO
    assert download.headers["Content-Type"] == "image/png"
    assert download.headers["Content-Disposition"].startswith("attachment;")
    assert 'filename="tree 1.png"' in download.headers["Content-Disposition"]
    assert "sandbox" in download.headers["Content-Security-Policy"]

    # Submitting again changes nothing: the first answers and the one file stand.
    again = post_answers(worker, work, assignment_id, {"q2": ("other.png", b"y" * 100, "image/png")}, q1="A")
    assert again.status_code == 200
    assert files_of(market_sessions, assignment_id) == 1
    (assignment,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert assignment["Answer"] == answer


def test_file_upload_urls_are_for_the_owner_and_short_lived(
    live_server, mturk, market_sessions, settings
) -> None:
    hit_id = create_hit(mturk, FORM)
    worker = WorkerClient(live_server.url, "uploader2")
    assignment_id, work = accept(worker, hit_id)
    done = post_answers(worker, work, assignment_id, {"q2": ("t.bin", b"z" * 20, "")}, q1="A pine")
    assert done.status_code == 200
    other = boto3_client(live_server.url, new_requester(market_sessions))
    with pytest.raises(other.exceptions.RequestError) as foreign:
        other.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier="photo")
    assert foreign.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.AssignmentDoesNotExist"
    for question in ("extra", "caption", "nope"):  # no file was given for these
        with pytest.raises(mturk.exceptions.RequestError) as missing:
            mturk.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier=question)
        assert missing.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidParameterValue"

    url = mturk.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier="photo")["FileUploadURL"]
    download = requests.get(url)
    assert download.content == b"z" * 20 and download.headers["Content-Type"] == "application/octet-stream"
    token = url.rsplit("/", 1)[-1]
    assert requests.get(url[: -len(token)] + altered_token(token)).status_code == 403  # forged

    class Minute(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 61

    with session_scope(market_sessions) as session:
        key = session.scalar(select(UploadedFile.key).where(UploadedFile.assignment_id == assignment_id))
    stale = URLSafeTimedSerializer(settings.secret_key, salt=SALT, signer=Minute).dumps(key)
    assert requests.get(f"{live_server.url}/uploads/{stale}").status_code == 403  # 61 seconds old
    fresh = URLSafeTimedSerializer(settings.secret_key, salt=SALT).dumps(key)
    assert requests.get(f"{live_server.url}/uploads/{fresh}").status_code == 200


def test_files_larger_than_the_apps_body_limit_are_taken_up_to_the_sites_cap(
    live_server, mturk, market_sessions
) -> None:
    hit_id = create_hit(mturk, FORM)
    worker = WorkerClient(live_server.url, "big-uploader")
    assignment_id, work = accept(worker, hit_id)
    photo = {"q2": ("tree.png", b"p" * 50, "image/png")}
    too_big = post_answers(
        worker, work, assignment_id, {**photo, "q3": ("huge.bin", b"h" * 10_000_001, "")}, q1="Big"
    )
    assert too_big.status_code == 422 and "Please choose a file of at most 10 MB." in too_big.text
    big = bytes(range(256)) * 12_000  # 3,072,000 bytes: more than the 2 MiB any other form may post
    done = post_answers(worker, work, assignment_id, {**photo, "q3": ("big.bin", big, "")}, q1="Big")
    assert done.status_code == 200
    url = mturk.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier="extra")["FileUploadURL"]
    assert requests.get(url).content == big
    assert files_of(market_sessions, assignment_id) == 2


def lock_waiters(market_sessions) -> int:  # type: ignore[no-untyped-def]
    """Sessions of the test database waiting on a lock (PostgreSQL)."""
    with session_scope(market_sessions) as session:
        return (
            session.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )
            )
            or 0
        )


def test_two_posts_of_the_same_answers_at_once_store_one_submission_and_one_file(
    live_server, mturk, market_sessions
) -> None:
    hit_id = create_hit(mturk, FORM)
    worker = WorkerClient(live_server.url, "double-submit")
    assignment_id, work = accept(worker, hit_id)
    go = threading.Barrier(3)
    responses: list[requests.Response] = []
    errors: list[BaseException] = []

    def post() -> None:
        # A second tab (or a double click): the same cookies, the same form, the same file.
        try:
            tab = requests.Session()
            tab.cookies.update(worker.http.cookies)
            go.wait(timeout=30)
            responses.append(
                tab.post(
                    f"{worker.base}/work/{assignment_id}/answers",
                    data={"csrf_token": csrf_of(work), "q1": "An oak"},
                    files={"q2": ("tree.png", PHOTO, "image/png")},
                )
            )
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=post) for _ in range(2)]
    holder = None
    if BACKEND == "postgres":
        # Hold the assignment row until both posts wait on a lock: both have read it still in
        # progress, so they race for it (without the site's own lock, on the files' unique key).
        holder = market_sessions()
        holder.execute(select(Assignment.id).where(Assignment.id == assignment_id).with_for_update())
    try:
        for thread in threads:
            thread.start()
        go.wait(timeout=30)
        if holder is not None:
            deadline = time.monotonic() + 60
            while lock_waiters(market_sessions) < 2 and time.monotonic() < deadline and not errors:
                time.sleep(0.02)
            assert lock_waiters(market_sessions) >= 2, "the two posts never both waited on a lock"
    finally:
        if holder is not None:
            holder.rollback()
            holder.close()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors
    # Both are answered as a submitted assignment (the second like any repeated submit): no 500.
    assert [r.status_code for r in responses] == [200, 200], [r.text[:500] for r in responses]
    assert all("your work was submitted" in r.text for r in responses)
    assert files_of(market_sessions, assignment_id) == 1
    (assignment,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert assignment["AssignmentStatus"] == "Submitted"
    with session_scope(market_sessions) as session:
        key = session.scalar(select(UploadedFile.key).where(UploadedFile.assignment_id == assignment_id))
    assert f"<UploadedFileKey>{key}</UploadedFileKey>" in assignment["Answer"]
