"""The worker dashboard, and that a worker never sees or submits another worker's assignment."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import requests
from sqlalchemy import select

from hits.db import session_scope
from hits.market.models import Assignment
from tests.helpers import EXTERNAL_QUESTION, altered_token
from tests.server.worker_helpers import (
    MTURK_HTML,
    WorkerClient,
    create_hit,
    csrf_of,
    free_text,
    html_question,
    question_form,
    soup,
)

QUESTION = EXTERNAL_QUESTION.format(url="https://example.org/task")


def accept(worker: WorkerClient, hit_id: str) -> requests.Response:
    page = worker.post_form(worker.get("/"), f'tr[data-hit-id="{hit_id}"] form', {})
    assert page.status_code == 200
    return page


def do_external_hit(worker: WorkerClient, hit_id: str) -> str:
    assignment_id = accept(worker, hit_id).url.rsplit("/", 1)[-1]
    done = worker.http.post(
        f"{worker.base}/mturk/externalSubmit", data={"assignmentId": assignment_id, "answer": "yes"}
    )
    assert done.status_code == 200
    return assignment_id


def figure(page: requests.Response, element_id: str) -> str:
    found = soup(page).find(id=element_id)
    assert found is not None, element_id
    return found.get_text(strip=True)


def test_dashboard_shows_earnings_record_qualifications_and_messages(live_server, mturk) -> None:
    worker = WorkerClient(live_server.url, "earner")
    hits = [create_hit(mturk, QUESTION, Reward="0.40") for _ in range(3)]
    approved, rejected, waiting = (do_external_hit(worker, h) for h in hits)
    mturk.approve_assignment(AssignmentId=approved)
    mturk.reject_assignment(AssignmentId=rejected, RequesterFeedback="Off topic.")
    mturk.send_bonus(
        WorkerId=worker.worker_id, BonusAmount="1.05", AssignmentId=approved, Reason="Great <b>work</b>"
    )
    mturk.notify_workers(
        Subject="New batch tomorrow",
        MessageText="Look out for <script>x</script>",
        WorkerIds=[worker.worker_id],
    )
    qual = mturk.create_qualification_type(
        Name=f"Trusted {uuid.uuid4().hex[:8]}", Description="Trusted.", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    mturk.associate_qualification_with_worker(
        QualificationTypeId=qual, WorkerId=worker.worker_id, IntegerValue=87
    )
    page = worker.get("/me")
    assert page.status_code == 200
    assert figure(page, "earnings-rewards") == "$0.40"
    assert figure(page, "earnings-bonuses") == "$1.05"
    assert figure(page, "earnings") == "$1.45"
    assert figure(page, "earnings-pending") == "$0.40"
    assert (
        figure(page, "count-submitted"),
        figure(page, "count-approved"),
        figure(page, "count-rejected"),
    ) == (
        "1",
        "1",
        "1",
    )
    assert figure(page, "approval-rate") == "50%"
    row = soup(page).select_one(f'#qualifications tr[data-qualification-type-id="{qual}"]')
    assert row is not None and [td.get_text() for td in row.find_all("td")][1:] == ["87", "Granted"]
    inbox = soup(page).select_one("#inbox")
    assert inbox is not None
    assert "New batch tomorrow" in inbox.get_text() and "You received a bonus of $1.05" in inbox.get_text()
    assert (
        "Look out for &lt;script&gt;x&lt;/script&gt;" in page.text and "<script>x</script>" not in page.text
    )
    assert waiting in page.text
    assert Decimal(figure(page, "earnings").lstrip("$")) == Decimal("1.45")


def test_a_new_worker_has_an_empty_record(live_server) -> None:
    page = WorkerClient(live_server.url, "newcomer").get("/me")
    assert figure(page, "earnings") == "$0.00" and figure(page, "approval-rate") == "no decisions yet"
    assert "No messages." in page.text


def stored(market_sessions, assignment_id: str) -> Assignment:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        assignment = session.scalar(select(Assignment).where(Assignment.id == assignment_id))
        assert assignment is not None
        session.expunge(assignment)
        return assignment


def test_another_worker_can_neither_open_nor_submit_an_assignment(
    live_server, mturk, market_sessions
) -> None:
    alice, mallory = WorkerClient(live_server.url, "alice"), WorkerClient(live_server.url, "mallory")
    form_hit = create_hit(mturk, question_form(free_text("why", "Why?")))
    html_hit = create_hit(mturk, html_question(MTURK_HTML))
    form_assignment = accept(alice, form_hit).url.rsplit("/", 1)[-1]
    html_page = accept(alice, html_hit)
    html_assignment = html_page.url.rsplit("/", 1)[-1]
    frame = soup(html_page).find("iframe", id="hit-frame")
    assert frame is not None
    alice_src = str(frame["src"])
    alice_token = parse_qs(urlsplit(alice_src).query)["hitforgeToken"][0]
    # Mallory's own assignment, so she holds a genuine token of her own.
    own_hit = create_hit(mturk, html_question(MTURK_HTML))
    own_src = str(soup(accept(mallory, own_hit)).find("iframe", id="hit-frame")["src"])  # type: ignore[index]
    own_token = parse_qs(urlsplit(own_src).query)["hitforgeToken"][0]
    for assignment_id in (form_assignment, html_assignment):
        assert mallory.get(f"/work/{assignment_id}").status_code == 404
    token = csrf_of(mallory.get("/"))
    answer = mallory.http.post(
        f"{live_server.url}/work/{form_assignment}/answers", data={"csrf_token": token, "q1": "x"}
    )
    assert answer.status_code == 404
    assert (
        mallory.http.post(
            f"{live_server.url}/mturk/externalSubmit", data={"assignmentId": form_assignment, "why": "x"}
        ).status_code
        == 404
    )
    # Her own token names her own assignment, not Alice's; a forged one is no token at all.
    for forged in (own_token, altered_token(alice_token), "nonsense"):
        refused = requests.post(
            f"{live_server.url}/mturk/externalSubmit",
            data={"assignmentId": html_assignment, "hitforgeToken": forged, "caption": "stolen"},
        )
        assert refused.status_code == 403
    swapped = own_src.replace(f"hitId={own_hit}", f"hitId={html_hit}")
    assert mallory.get(swapped.replace(f"/hits/{own_hit}/", f"/hits/{html_hit}/")).status_code == 403
    assert (
        mallory.get(re.sub(r"assignmentId=\w+", f"assignmentId={html_assignment}", own_src)).status_code
        == 403
    )
    for assignment_id in (form_assignment, html_assignment):
        untouched = stored(market_sessions, assignment_id)
        assert untouched.status == "Accepted" and untouched.answer is None
    assert form_assignment not in mallory.get("/me").text
    # Alice, of course, can.
    assert alice.get(f"/work/{form_assignment}").status_code == 200


def test_htmlquestion_frame_is_sandboxed_and_submits_by_token(live_server, mturk, market_sessions) -> None:
    worker = WorkerClient(live_server.url, "framed")
    hit_id = create_hit(mturk, html_question(MTURK_HTML, height=640))
    page = accept(worker, hit_id)
    assignment_id = page.url.rsplit("/", 1)[-1]
    frame = soup(page).find("iframe", id="hit-frame")
    assert frame is not None and frame["height"] == "640"
    assert 'sandbox="allow-scripts allow-forms"' in page.text  # no allow-same-origin
    src = str(frame["src"])
    params = parse_qs(urlsplit(src).query)
    assert params["assignmentId"] == [assignment_id] and params["workerId"] == [worker.worker_id]
    # The frame sends no cookies: a cookie-less client gets the page by the token alone.
    html = requests.get(live_server.url + src)
    assert html.status_code == 200
    policy = html.headers["Content-Security-Policy"]
    assert policy.startswith("sandbox allow-scripts allow-forms;") and "form-action 'self'" in policy
    assert "s3.amazonaws.com" not in html.text and "/static/mturk/externalHIT_v1.js" in html.text
    script = requests.get(f"{live_server.url}/static/mturk/externalHIT_v1.js")
    assert script.status_code == 200 and "turkSetAssignmentID" in script.text
    posted = requests.post(
        f"{live_server.url}/mturk/externalSubmit",
        data=[
            ("assignmentId", assignment_id),
            ("hitforgeToken", params["hitforgeToken"][0]),
            ("caption", "A cat on a mat"),
            ("tags", "cat"),
            ("tags", "dog"),
        ],
    )
    assert posted.status_code == 200
    saved = stored(market_sessions, assignment_id)
    assert saved.status == "Submitted" and saved.answer is not None
    assert "<FreeText>A cat on a mat</FreeText>" in saved.answer and "hitforgeToken" not in saved.answer
    # A preview token lets the worker look, never submit.
    preview = soup(worker.get(f"/hits/{create_hit(mturk, html_question(MTURK_HTML))}")).find("iframe")
    preview_params = parse_qs(urlsplit(str(preview["src"])).query)  # type: ignore[index]
    assert preview_params["assignmentId"] == ["ASSIGNMENT_ID_NOT_AVAILABLE"]
    assert requests.get(live_server.url + str(preview["src"])).status_code == 200  # type: ignore[index]
    refused = requests.post(
        f"{live_server.url}/mturk/externalSubmit",
        data={
            "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE",
            "hitforgeToken": preview_params["hitforgeToken"][0],
        },
    )
    assert refused.status_code == 403


def test_a_large_crowd_form_answer_is_stored_not_refused(live_server, mturk, market_sessions) -> None:
    # A crowd-semantic-segmentation answer of a photo is a base64 PNG of megabytes in one
    # taskAnswers field; refusing it (413) would throw away the worker's painting.
    worker = WorkerClient(live_server.url, "painter")
    hit_id = create_hit(mturk, html_question(MTURK_HTML))
    page = accept(worker, hit_id)
    assignment_id = page.url.rsplit("/", 1)[-1]
    frame = soup(page).find("iframe", id="hit-frame")
    assert frame is not None
    token = parse_qs(urlsplit(str(frame["src"])).query)["hitforgeToken"][0]
    mask = "iVBORw0KGgo" + "A" * (6 * 1024 * 1024)  # about what a 6000x4000 mask with detail takes
    answer = '[{"crowd-semantic-segmentation":{"labeledImage":{"pngImageData":"' + mask + '"}}}]'
    posted = requests.post(
        f"{live_server.url}/mturk/externalSubmit",
        data={"assignmentId": assignment_id, "hitforgeToken": token, "taskAnswers": answer},
        timeout=60,
    )
    assert posted.status_code == 200
    saved = stored(market_sessions, assignment_id)
    assert saved.status == "Submitted" and saved.answer is not None and mask in saved.answer


def test_a_rejected_worker_reads_the_requesters_reason_on_their_page(live_server, mturk) -> None:
    worker = WorkerClient(live_server.url, "rejected-reader")
    kept, rejected = (do_external_hit(worker, create_hit(mturk, QUESTION)) for _ in range(2))
    mturk.approve_assignment(AssignmentId=kept)
    mturk.reject_assignment(
        AssignmentId=rejected, RequesterFeedback="The <b>ratings</b> ignore the pictures."
    )
    page = worker.get("/me")
    assert (
        figure(page, f"feedback-{rejected}") == "Why it was rejected:The <b>ratings</b> ignore the pictures."
    )
    assert soup(page).find(id=f"feedback-{kept}") is None
