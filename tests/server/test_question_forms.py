"""QuestionForm HITs and qualification tests on the worker site, through real HTTP and boto3."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.models import QualificationRequest
from hits.market.question_forms import parse_question_form
from hits.market.worker_quals import grade
from hits.wire.documents import xml_to_answers
from hits.wire.xml_schemas import validate_answers
from qualification.mturk import grade_answers, selection_answers_xml
from tests.server.worker_helpers import (
    QF_NS,
    WorkerClient,
    answer_key,
    create_hit,
    csrf_of,
    free_text,
    question_form,
    selection,
    soup,
)

QUESTIONS = (
    selection("colour", "What colour is the sky on a clear day?", [("blue", "Blue"), ("green", "Green")]),
    selection(
        "animals",
        "Which of these are animals?",
        [("cat", "Cat"), ("rock", "Rock"), ("dog", "Dog")],
        style="checkbox",
        MinSelectionCount=2,
        MaxSelectionCount=3,
    ),
    selection("size", "How big is a mouse?", [("s", "Small"), ("l", "Large")], style="dropdown"),
    free_text("age", "How many legs does a spider have?", '<IsNumeric minValue="0" maxValue="100"/>'),
    free_text(
        "code",
        "Type the code shown: AB12",
        '<AnswerFormatRegex regex="^[A-Z]{2}[0-9]{2}$" errorText="Two capitals, then two digits."/>',
        required=False,
    ),
)
TITLE = "<Overview><Title>A short survey &lt;b&gt;now&lt;/b&gt;</Title>"
#: Markup MTurk's XHTML subset refuses: CreateHIT rejects it, and the renderer would strip it.
HOSTILE = question_form(
    *QUESTIONS,
    overview=TITLE
    + '<FormattedContent><![CDATA[<p onclick="steal()">Read <b>carefully</b>.'
    + "<script>steal()</script>"
    + '<a href="javascript:steal()">x</a><img src="https://example.org/a.png" alt="A"/></p>]]>'
    + "</FormattedContent></Overview>",
)
SURVEY = question_form(
    *QUESTIONS,
    overview=TITLE + "<FormattedContent><![CDATA[<p>Read <b>carefully</b>."
    '<img src="https://example.org/a.png" alt="A"/></p>]]></FormattedContent></Overview>',
)


def accept(worker: WorkerClient, hit_id: str) -> tuple[str, object]:
    listing = worker.get("/")
    page = worker.post_form(listing, f'tr[data-hit-id="{hit_id}"] form', {})
    assert page.status_code == 200
    return page.url.rsplit("/", 1)[-1], page


def test_formatted_content_is_rebuilt_without_anything_active() -> None:
    doc = parse_question_form(HOSTILE)
    html = str(doc.parts[0].content[1].html)  # type: ignore[union-attr]
    assert "<b>carefully</b>" in html and '<img src="https://example.org/a.png" alt="A">' in html
    assert "onclick" not in html and "script" not in html and "javascript:" not in html
    assert doc.parts[0].content[0].text == "A short survey <b>now</b>"  # type: ignore[union-attr]
    with pytest.raises(Exception, match="Not a QuestionForm"):
        parse_question_form(f'<QuestionForm xmlns="{QF_NS}x"/>')


def test_a_question_form_hit_is_an_accessible_form_and_stores_mturk_answers(live_server, mturk) -> None:
    hit_id = create_hit(mturk, SURVEY)
    worker = WorkerClient(live_server.url, "survey")
    assignment_id, page = accept(worker, hit_id)
    html = soup(page)  # type: ignore[arg-type]
    assert html.find("iframe") is None
    assert html.select_one("legend#q1-label").get_text(" ", strip=True).startswith("What colour is the sky")  # type: ignore[union-attr]
    assert html.select_one('label[for="q1-1"]').get_text() == "Blue"  # type: ignore[union-attr]
    assert [i["type"] for i in html.select('input[name="q2"]')] == ["checkbox"] * 3
    assert html.select_one("select#q3")["aria-labelledby"] == "q3-label"  # type: ignore[index]
    assert html.select_one('label[for="q4"]').get_text(" ", strip=True).startswith("How many legs")  # type: ignore[union-attr]
    # The requester's markup is escaped, or rebuilt without scripts and handlers.
    assert "A short survey &lt;b&gt;now&lt;/b&gt;" in page.text  # type: ignore[attr-defined]
    assert "<b>carefully</b>" in page.text  # type: ignore[attr-defined]
    # Mistakes come back with every answer kept and an explanation per question.
    bad = worker.post_form(
        page,  # type: ignore[arg-type]
        "#question-form",
        {"q1": "blue", "q2": ["cat"], "q3": "s", "q4": "eight", "q5": "ab12"},
    )
    assert bad.status_code == 422
    again = soup(bad)
    summary = again.select_one("#error-summary").get_text(" ", strip=True)  # type: ignore[union-attr]
    assert "Please fix 3 problems" in summary
    assert "Please choose at least 2 options." in summary and "Please enter a number." in summary
    assert "Two capitals, then two digits." in summary
    assert again.select_one('input[name="q1"][value="blue"]').has_attr("checked")  # type: ignore[union-attr]
    assert again.select_one('input[name="q2"][value="cat"]').has_attr("checked")  # type: ignore[union-attr]
    assert again.select_one('select#q3 option[value="s"]').has_attr("selected")  # type: ignore[union-attr]
    assert again.select_one("input#q4")["value"] == "eight"  # type: ignore[index]
    assert mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"] == []
    good = worker.post_form(
        bad, "#question-form", {"q1": "blue", "q2": ["cat", "dog"], "q3": "s", "q4": "8", "q5": "AB12"}
    )
    assert good.status_code == 200 and soup(good).find(id="submitted") is not None
    (stored,) = mturk.list_assignments_for_hit(HITId=hit_id)["Assignments"]
    assert stored["AssignmentId"] == assignment_id and stored["WorkerId"] == worker.worker_id
    answer = stored["Answer"]
    validate_answers(answer)  # exactly the QuestionFormAnswers schema MTurk emits
    assert (
        "<SelectionIdentifier>cat</SelectionIdentifier><SelectionIdentifier>dog</SelectionIdentifier>"
        in answer
    )
    assert "<FreeText>8</FreeText>" in answer
    assert xml_to_answers(answer) == {
        "colour": "blue",
        "animals": "cat|dog",
        "size": "s",
        "age": "8",
        "code": "AB12",
    }


def test_choices_that_were_not_offered_are_refused(live_server, mturk) -> None:
    hit_id = create_hit(mturk, question_form(selection("c", "Pick one", [("a", "A"), ("b", "B")])))
    worker = WorkerClient(live_server.url, "forger")
    _, page = accept(worker, hit_id)
    forged = worker.post_form(page, "#question-form", {"q1": "z"})  # type: ignore[arg-type]
    assert forged.status_code == 422 and "Please choose from the options shown." in forged.text
    two = worker.post_form(page, "#question-form", {"q1": ["a", "b"]})  # type: ignore[arg-type]
    assert two.status_code == 422 and "Please choose at most 1 option." in two.text


TEST_FORM = question_form(
    selection("q-sky", "Colour of the sky?", [("blue", "Blue"), ("red", "Red")]),
    selection("q-grass", "Colour of grass?", [("green", "Green"), ("pink", "Pink")]),
)
KEY = answer_key(("q-sky", "blue"), ("q-grass", "green"), percentage_of=2)


def new_test_type(mturk, **extra):  # type: ignore[no-untyped-def]
    return mturk.create_qualification_type(
        Name=f"Colours {uuid.uuid4().hex[:8]}",
        Description="Know your colours.",
        QualificationTypeStatus="Active",
        Test=TEST_FORM,
        TestDurationInSeconds=extra.pop("TestDurationInSeconds", 600),
        **extra,
    )["QualificationType"]["QualificationTypeId"]


def take_test(worker: WorkerClient, qtype_id: str, answers: dict[str, str]):  # type: ignore[no-untyped-def]
    intro = worker.get(f"/qualifications/{qtype_id}")
    test = worker.post_form(intro, f'form[action$="/qualifications/{qtype_id}/test/start"]', {})
    assert test.status_code == 200, test.text
    return worker.post_form(test, "#question-form", answers)


def score(mturk, qtype_id: str, worker: WorkerClient) -> int:  # type: ignore[no-untyped-def]
    grant = mturk.get_qualification_score(QualificationTypeId=qtype_id, WorkerId=worker.worker_id)
    return int(grant["Qualification"]["IntegerValue"])


def test_a_test_with_an_answer_key_is_scored_at_once_and_retakes_wait(live_server, mturk) -> None:
    # The checks below that a retake waits must all run within the delay, on a loaded machine too.
    qtype_id = new_test_type(mturk, AnswerKey=KEY, RetryDelayInSeconds=10)
    worker = WorkerClient(live_server.url, "tested")
    listing = soup(worker.get("/qualifications"))
    assert listing.select_one(f'tr[data-qualification-type-id="{qtype_id}"]') is not None
    done = take_test(worker, qtype_id, {"q1": "blue", "q2": "pink"})
    assert done.status_code == 200
    assert soup(done).select_one("#qualification-score").get_text() == "50"  # type: ignore[union-attr]
    assert score(mturk, qtype_id, worker) == 50
    blocked = soup(worker.get(f"/qualifications/{qtype_id}"))
    assert "You may try again after" in blocked.select_one("#qualification-blocked").get_text()  # type: ignore[union-attr]
    early = worker.http.post(
        f"{live_server.url}/qualifications/{qtype_id}/test/start",
        data={"csrf_token": csrf_of(worker.get("/"))},
    )
    assert "You may try again after" in early.text
    deadline = time.monotonic() + 60
    while "You may try again after" in worker.get(f"/qualifications/{qtype_id}").text:
        assert time.monotonic() < deadline, "the retake never opened"
        time.sleep(0.5)
    assert take_test(worker, qtype_id, {"q1": "blue", "q2": "green"}).status_code == 200
    assert score(mturk, qtype_id, worker) == 100


def test_without_retry_delay_a_test_is_taken_once(live_server, mturk) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY)
    worker = WorkerClient(live_server.url, "once")
    take_test(worker, qtype_id, {"q1": "red", "q2": "pink"})
    assert score(mturk, qtype_id, worker) == 0
    page = soup(worker.get(f"/qualifications/{qtype_id}"))
    assert "cannot be requested again" in page.select_one("#qualification-blocked").get_text()  # type: ignore[union-attr]


def test_answers_after_the_test_duration_are_refused(live_server, mturk, market_sessions) -> None:
    qtype_id = new_test_type(mturk, AnswerKey=KEY, TestDurationInSeconds=1, RetryDelayInSeconds=0)
    worker = WorkerClient(live_server.url, "slow")
    intro = worker.get(f"/qualifications/{qtype_id}")
    test = worker.post_form(intro, 'form[action$="/test/start"]', {})
    time.sleep(1.2)
    late = worker.post_form(test, "#question-form", {"q1": "blue", "q2": "green"})
    assert "The time for this test ran out" in late.text
    with session_scope(market_sessions) as session:
        count = session.scalar(
            select(func.count())
            .select_from(QualificationRequest)
            .where(QualificationRequest.qualification_type_id == qtype_id)
        )
    assert count == 0


def test_a_test_without_answer_key_waits_for_the_requester(live_server, mturk) -> None:
    qtype_id = new_test_type(mturk)
    worker = WorkerClient(live_server.url, "pending")
    done = take_test(worker, qtype_id, {"q1": "blue", "q2": "green"})
    assert "sent to the requester" in done.text
    (request,) = mturk.list_qualification_requests(QualificationTypeId=qtype_id)["QualificationRequests"]
    assert request["WorkerId"] == worker.worker_id
    assert "<SelectionIdentifier>blue</SelectionIdentifier>" in request["Answer"]
    validate_answers(request["Answer"])
    assert "waiting for the requester" in worker.get(f"/qualifications/{qtype_id}").text
    mturk.accept_qualification_request(
        QualificationRequestId=request["QualificationRequestId"], IntegerValue=7
    )
    held = soup(worker.get(f"/qualifications/{qtype_id}")).select_one("#qualification-score")
    assert held is not None and held.get_text() == "7"


def test_auto_granted_and_plain_requests(live_server, mturk) -> None:
    auto = mturk.create_qualification_type(
        Name=f"Auto {uuid.uuid4().hex[:8]}",
        Description="Granted to whoever asks.",
        QualificationTypeStatus="Active",
        AutoGranted=True,
        AutoGrantedValue=3,
    )["QualificationType"]["QualificationTypeId"]
    manual = mturk.create_qualification_type(
        Name=f"Manual {uuid.uuid4().hex[:8]}", Description="Ask us.", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    worker = WorkerClient(live_server.url, "asker")
    granted = worker.post_form(worker.get(f"/qualifications/{auto}"), 'form[action$="/request"]', {})
    assert "You now hold the qualification" in granted.text
    assert score(mturk, auto, worker) == 3
    asked = worker.post_form(worker.get(f"/qualifications/{manual}"), 'form[action$="/request"]', {})
    assert "Your request was sent to the requester." in asked.text
    (request,) = mturk.list_qualification_requests(QualificationTypeId=manual)["QualificationRequests"]
    assert request["WorkerId"] == worker.worker_id


@pytest.mark.parametrize(
    "answers",
    [{"q-sky": "blue", "q-grass": "green"}, {"q-sky": "red", "q-grass": "green"}, {"q-sky": "red"}],
)
def test_grading_agrees_with_the_requester_side_grader(answers: dict[str, str]) -> None:
    xml = selection_answers_xml(answers)
    assert grade(KEY, xml) == grade_answers(KEY, xml)


def test_create_hit_refuses_formatted_content_outside_mturks_xhtml_subset(mturk) -> None:
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        create_hit(mturk, HOSTILE)
    message = caught.value.response["Error"]["Message"]
    assert "FormattedContentXHTMLSubset" in message and "onclick" in message
