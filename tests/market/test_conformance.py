"""Every requester operation through the real boto3 client, responses checked against the service model."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from sqlalchemy import select

from hits.db import session_scope
from hits.market import assignment_ops, qualification_admin, worker_relations
from hits.market.accounts import create_worker
from hits.market.models import Worker, WorkerMessage
from hits.market.requester_options import set_options
from server.market.mturk_api.registry import OPERATIONS
from tests.conftest import boto3_client
from tests.helpers import hit_params
from tests.market.shapes import Checked, service_model
from tests.server.test_file_upload import FORM as UPLOAD_FORM
from tests.server.test_file_upload import PHOTO, accept, post_answers
from tests.server.worker_helpers import WorkerClient

ANSWER = (
    '<QuestionFormAnswers xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2005-10-01/QuestionFormAnswers.xsd"><Answer><QuestionIdentifier>q</QuestionIdentifier>'
    "<FreeText>yes</FreeText></Answer></QuestionFormAnswers>"
)
CALLED: set[str] = set()


@pytest.fixture
def api(mturk) -> Iterator[Checked]:  # type: ignore[no-untyped-def]
    checked = Checked(mturk)
    yield checked
    CALLED.update(checked.called)


def turk_code(caught: pytest.ExceptionInfo[Any]) -> str:
    code: str = caught.value.response["TurkErrorCode"]
    return code


def new_worker(market_sessions) -> str:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return create_worker(session, f"w-{uuid.uuid4().hex[:10]}", "password123").id


def work_on(
    market_sessions, hit_id: str, worker_id: str | None = None, submit: bool = True, answer: str = ANSWER
) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A worker accepts (and submits) an assignment of the HIT: (worker id, assignment id)."""
    worker_id = worker_id or new_worker(market_sessions)
    with session_scope(market_sessions) as session:
        worker = session.get(Worker, worker_id)
        assert worker is not None
        assignment = assignment_ops.accept(session, worker, hit_id)
        if submit:
            assignment_ops.submit(session, worker, assignment.id, answer)
        return worker_id, assignment.id


def new_hit(api: Checked, **overrides: Any) -> str:
    hit_id: str = api.create_hit(**hit_params(**overrides))["HIT"]["HITId"]
    return hit_id


def test_every_operation_of_the_service_model_is_registered() -> None:
    assert set(OPERATIONS) == set(service_model().operation_names)
    assert len(OPERATIONS) == 39


def test_hits_assignments_and_paginators(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    first = new_hit(api, Title="Paged 0")
    hit_ids = {first} | {new_hit(api, Title=f"Paged {i}") for i in range(1, 3)}
    type_params = {
        k: hit_params()[k] for k in ("AssignmentDurationInSeconds", "Reward", "Title", "Description")
    }
    hit_type_id = api.create_hit_type(**type_params)["HITTypeId"]
    with_type = api.create_hit_with_hit_type(
        HITTypeId=hit_type_id, LifetimeInSeconds=600, Question=hit_params()["Question"]
    )
    hit_ids.add(with_type["HIT"]["HITId"])
    seen = [h["HITId"] for p in api.pages("list_hits") for h in p["HITs"]]
    assert set(seen) == hit_ids and len(seen) == len(hit_ids)
    api.get_hit(HITId=first)
    done = [work_on(market_sessions, first)[1] for _ in range(2)]
    pages = api.pages("list_assignments_for_hit", page_size=1, HITId=first)
    assert [a["AssignmentId"] for p in pages for a in p["Assignments"]] == done
    got = api.get_assignment(AssignmentId=done[0])
    assert got["Assignment"]["AssignmentStatus"] == "Submitted"
    api.approve_assignment(AssignmentId=done[0], RequesterFeedback="Thanks")
    with pytest.raises(api.exceptions.RequestError) as twice:
        api.approve_assignment(AssignmentId=done[0])
    assert turk_code(twice) == "AWS.MechanicalTurk.InvalidAssignmentState"
    api.reject_assignment(AssignmentId=done[1], RequesterFeedback="Off topic")
    reviewable = [h["HITId"] for p in api.pages("list_reviewable_hits") for h in p["HITs"]]
    assert first in reviewable
    balance = api.get_account_balance()
    assert Decimal(balance["AvailableBalance"]) == Decimal("100.00") - Decimal("0.30")


def test_send_bonus_and_list_bonus_payments(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    worker_id, assignment_id = work_on(market_sessions, hit_id)
    params = {"WorkerId": worker_id, "AssignmentId": assignment_id, "Reason": "Great work"}
    api.send_bonus(BonusAmount="1.00", UniqueRequestToken="bonus-1", **params)
    with pytest.raises(api.exceptions.RequestError) as again:
        api.send_bonus(BonusAmount="1.00", UniqueRequestToken="bonus-1", **params)
    assert turk_code(again) == "AWS.MechanicalTurk.DuplicateRequest"
    api.send_bonus(BonusAmount="0.50", **params)
    # Bonus plus the 20% fee, charged once per request.
    assert Decimal(api.get_account_balance()["AvailableBalance"]) == Decimal("100.00") - Decimal("1.80")
    by_hit = [
        b for p in api.pages("list_bonus_payments", page_size=1, HITId=hit_id) for b in p["BonusPayments"]
    ]
    by_assignment = api.list_bonus_payments(AssignmentId=assignment_id)["BonusPayments"]
    assert sorted(b["BonusAmount"] for b in by_hit) == ["0.50", "1.00"]
    assert by_assignment == by_hit
    with session_scope(market_sessions) as session:
        subjects = sorted(m.subject for m in worker_relations.inbox(session, worker_id))
    assert subjects == ["You received a bonus of $0.50", "You received a bonus of $1.00"]
    stranger = new_worker(market_sessions)
    with pytest.raises(api.exceptions.RequestError) as never_worked:
        api.send_bonus(BonusAmount="1.00", **{**params, "WorkerId": stranger})
    assert turk_code(never_worked) == "AWS.MechanicalTurk.WorkerDoesNotExist"
    with pytest.raises(api.exceptions.RequestError) as broke:
        api.send_bonus(BonusAmount="500.00", **params)
    assert turk_code(broke) == "AWS.MechanicalTurk.InsufficientFunds"
    with pytest.raises(api.exceptions.RequestError):
        api.send_bonus(BonusAmount="0.001", **params)


def test_worker_blocks_keep_workers_off_the_requesters_hits(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    workers = [new_worker(market_sessions) for _ in range(3)]
    for worker_id in workers:
        api.create_worker_block(WorkerId=worker_id, Reason="Spam")
    blocked = [b["WorkerId"] for p in api.pages("list_worker_blocks") for b in p["WorkerBlocks"]]
    assert blocked == workers
    with pytest.raises(Exception) as refused:  # noqa: B017 - a domain RequestError
        work_on(market_sessions, hit_id, workers[0])
    assert getattr(refused.value, "turk_error_code", "") == "AWS.MechanicalTurk.WorkerBlocked"
    api.delete_worker_block(WorkerId=workers[0], Reason="Appeal accepted")
    api.delete_worker_block(WorkerId=workers[0])  # lifting a missing block is fine
    work_on(market_sessions, hit_id, workers[0])
    with pytest.raises(ClientError) as unknown:  # MTurk's answer for a worker it does not know
        api.create_worker_block(WorkerId="ANOBODY0000000", Reason="x")
    assert unknown.value.response["Error"] == {
        "Code": "ParameterValidationError",
        "Message": 'The value "ANOBODY0000000" is not valid for the parameter WorkerId.',
    }


def test_notify_workers_fills_inboxes_and_reports_failures(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    worker_id, _ = work_on(market_sessions, hit_id)
    stranger = new_worker(market_sessions)
    out = api.notify_workers(
        Subject="Hello", MessageText="New HITs", WorkerIds=[worker_id, stranger, "ANOBODY0000000"]
    )
    failures = {f["WorkerId"]: f["NotifyWorkersFailureCode"] for f in out["NotifyWorkersFailureStatuses"]}
    assert failures == {stranger: "HardFailure", "ANOBODY0000000": "HardFailure"}
    with session_scope(market_sessions) as session:
        inbox = session.scalars(select(WorkerMessage).where(WorkerMessage.worker_id == worker_id)).all()
        assert [(m.subject, m.message) for m in inbox] == [("Hello", "New HITs")]
    for bad in (
        {"Subject": "x" * 201, "MessageText": "m", "WorkerIds": [worker_id]},
        {"Subject": "s", "MessageText": "m" * 4097, "WorkerIds": [worker_id]},
        {"Subject": "s", "MessageText": "m", "WorkerIds": [worker_id] * 101},
    ):
        with pytest.raises(api.exceptions.RequestError) as caught:
            api.notify_workers(**bad)
        assert turk_code(caught) == "AWS.MechanicalTurk.InvalidParameterValue"


def test_additional_assignments_expiration_review_status_and_type(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    api.create_additional_assignments_for_hit(
        HITId=hit_id, NumberOfAdditionalAssignments=3, UniqueRequestToken="more-1"
    )
    with pytest.raises(api.exceptions.RequestError) as again:
        api.create_additional_assignments_for_hit(
            HITId=hit_id, NumberOfAdditionalAssignments=3, UniqueRequestToken="more-1"
        )
    assert turk_code(again) == "AWS.MechanicalTurk.DuplicateRequest"
    with pytest.raises(api.exceptions.RequestError) as ten:
        api.create_additional_assignments_for_hit(HITId=hit_id, NumberOfAdditionalAssignments=5)
    assert turk_code(ten) == "AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease"
    assert api.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 5
    with pytest.raises(api.exceptions.RequestError) as too_early:
        api.update_hit_review_status(HITId=hit_id)
    assert turk_code(too_early) == "AWS.MechanicalTurk.InvalidHITState"
    api.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    hit = api.get_hit(HITId=hit_id)["HIT"]
    assert hit["HITStatus"] == "Reviewable" and hit["NumberOfAssignmentsAvailable"] == 0
    api.update_hit_review_status(HITId=hit_id, Revert=False)
    assert api.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Reviewing"
    reviewing = [h["HITId"] for p in api.pages("list_reviewable_hits", Status="Reviewing") for h in p["HITs"]]
    assert reviewing == [hit_id]
    api.update_hit_review_status(HITId=hit_id, Revert=True)
    assert api.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Reviewable"
    api.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime.now(UTC) + timedelta(hours=1))
    assert api.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Assignable"
    other_type = api.create_hit_type(
        Title="Other", Description="d", Reward="0.10", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    api.update_hit_type_of_hit(HITId=hit_id, HITTypeId=other_type)
    moved = api.get_hit(HITId=hit_id)["HIT"]
    assert (moved["HITTypeId"], moved["Title"], moved["Reward"]) == (other_type, "Other", "0.10")
    with pytest.raises(api.exceptions.RequestError):
        api.update_hit_type_of_hit(HITId=hit_id, HITTypeId="3NOSUCHTYPE0000000000000000000")


def test_delete_hit_only_when_all_work_is_decided(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    with pytest.raises(api.exceptions.RequestError) as live:
        api.delete_hit(HITId=hit_id)
    assert turk_code(live) == "AWS.MechanicalTurk.InvalidHITState"
    _, assignment_id = work_on(market_sessions, hit_id)
    api.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    with pytest.raises(api.exceptions.RequestError) as undecided:
        api.delete_hit(HITId=hit_id)
    assert turk_code(undecided) == "AWS.MechanicalTurk.InvalidHITState"
    api.approve_assignment(AssignmentId=assignment_id)
    api.delete_hit(HITId=hit_id)
    assert api.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Disposed"
    assert hit_id not in {h["HITId"] for h in api.list_hits()["HITs"]}


def test_qualification_lifecycle(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    qtype = api.create_qualification_type(
        Name=f"Skill {uuid.uuid4().hex[:6]}",
        Description="A skill",
        Keywords="skill",
        QualificationTypeStatus="Active",
    )["QualificationType"]
    qid = qtype["QualificationTypeId"]
    api.get_qualification_type(QualificationTypeId=qid)
    workers = [new_worker(market_sessions) for _ in range(3)]
    for i, worker_id in enumerate(workers):
        api.associate_qualification_with_worker(
            QualificationTypeId=qid, WorkerId=worker_id, IntegerValue=70 + i
        )
    score = api.get_qualification_score(QualificationTypeId=qid, WorkerId=workers[1])["Qualification"]
    assert (score["IntegerValue"], score["Status"]) == (71, "Granted")
    holders = [
        q["WorkerId"]
        for p in api.pages("list_workers_with_qualification_type", QualificationTypeId=qid)
        for q in p["Qualifications"]
    ]
    assert holders == workers
    api.disassociate_qualification_from_worker(QualificationTypeId=qid, WorkerId=workers[0], Reason="Expired")
    with pytest.raises(api.exceptions.RequestError) as revoked_score:  # MTurk shows only a Granted one
        api.get_qualification_score(QualificationTypeId=qid, WorkerId=workers[0])
    assert "This operation can be called with a status of: Granted" in str(revoked_score.value)
    revoked = api.list_workers_with_qualification_type(QualificationTypeId=qid, Status="Revoked")[
        "Qualifications"
    ]
    assert [q["WorkerId"] for q in revoked] == [workers[0]]
    with pytest.raises(api.exceptions.RequestError) as not_held:
        api.get_qualification_score(QualificationTypeId=qid, WorkerId=new_worker(market_sessions))
    assert turk_code(not_held) == "AWS.MechanicalTurk.QualificationDoesNotExist"
    requirement = {"QualificationTypeId": qid, "Comparator": "GreaterThan", "IntegerValues": [50]}
    guarded = {new_hit(api, QualificationRequirements=[requirement]) for _ in range(3)}
    new_hit(api)
    listed = [
        h["HITId"]
        for p in api.pages("list_hits_for_qualification_type", QualificationTypeId=qid)
        for h in p["HITs"]
    ]
    assert set(listed) == guarded and len(listed) == 3
    updated = api.update_qualification_type(
        QualificationTypeId=qid, Description="A better skill", RetryDelayInSeconds=60
    )
    assert updated["QualificationType"]["Description"] == "A better skill"
    found = [
        q["QualificationTypeId"]
        for p in api.pages(
            "list_qualification_types", MustBeRequestable=False, MustBeOwnedByCaller=True, Query="better"
        )
        for q in p["QualificationTypes"]
    ]
    assert found == [qid]
    api.update_qualification_type(QualificationTypeId=qid, QualificationTypeStatus="Inactive")
    assert (
        api.list_qualification_types(MustBeRequestable=False, MustBeOwnedByCaller=True)["QualificationTypes"]
        == []
    )
    api.delete_qualification_type(QualificationTypeId=qid)
    with pytest.raises(api.exceptions.RequestError) as gone:
        api.get_qualification_type(QualificationTypeId=qid)
    assert turk_code(gone) == "AWS.MechanicalTurk.QualificationTypeDoesNotExist"


def test_qualification_requests(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    qid = api.create_qualification_type(
        Name=f"Ask {uuid.uuid4().hex[:6]}", Description="Ask for it", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    workers = [new_worker(market_sessions) for _ in range(3)]
    with session_scope(market_sessions) as session:
        request_ids = [
            qualification_admin.create_request(session, session.get(Worker, w), qid, answer="please").id  # type: ignore[arg-type]
            for w in workers
        ]
    listed = [
        r["QualificationRequestId"]
        for p in api.pages("list_qualification_requests", QualificationTypeId=qid)
        for r in p["QualificationRequests"]
    ]
    assert listed == request_ids
    api.accept_qualification_request(QualificationRequestId=request_ids[0], IntegerValue=90)
    assert (
        api.get_qualification_score(QualificationTypeId=qid, WorkerId=workers[0])["Qualification"][
            "IntegerValue"
        ]
        == 90
    )
    api.reject_qualification_request(QualificationRequestId=request_ids[1], Reason="Not yet")
    with pytest.raises(api.exceptions.RequestError) as decided:
        api.accept_qualification_request(QualificationRequestId=request_ids[1])
    assert turk_code(decided) == "AWS.MechanicalTurk.InvalidQualificationRequestState"
    assert [
        r["QualificationRequestId"] for r in api.list_qualification_requests()["QualificationRequests"]
    ] == request_ids[2:]
    with pytest.raises(api.exceptions.RequestError) as missing:
        api.reject_qualification_request(QualificationRequestId="3NOSUCHREQUEST0000000000000000")
    assert turk_code(missing) == "AWS.MechanicalTurk.QualificationRequestDoesNotExist"


class _Receiver(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers["Content-Length"])
        self.received.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hook_api(hook_mturk) -> Iterator[Checked]:  # type: ignore[no-untyped-def]
    """``api`` on a server that may send to the loopback receiver (tests/market/conftest.py)."""
    checked = Checked(hook_mturk)
    yield checked
    CALLED.update(checked.called)


def test_notification_settings_and_test_events(hook_api) -> None:  # type: ignore[no-untyped-def]
    api = hook_api
    hit_type_id = api.create_hit_type(
        Title="Notified", Description="d", Reward="0.05", AssignmentDurationInSeconds=300
    )["HITTypeId"]
    sqs = {
        "Destination": "https://sqs.us-east-1.amazonaws.com/123456789012/q",
        "Transport": "SQS",
        "Version": "2006-05-05",
        "EventTypes": ["AssignmentSubmitted"],
    }
    api.update_notification_settings(HITTypeId=hit_type_id, Notification=sqs, Active=True)
    api.update_notification_settings(HITTypeId=hit_type_id, Active=False)
    with pytest.raises(api.exceptions.RequestError):
        api.update_notification_settings(HITTypeId=hit_type_id, Notification={**sqs, "EventTypes": ["Nope"]})
    api.send_test_event_notification(Notification=sqs, TestEventType="Ping")  # stored-only transport
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        http = {**sqs, "Transport": "Email", "Destination": f"http://127.0.0.1:{server.server_port}/events"}
        api.send_test_event_notification(Notification=http, TestEventType="AssignmentSubmitted")
    finally:
        server.shutdown()
        server.server_close()
    assert [doc["Events"][0]["EventType"] for doc in _Receiver.received] == ["AssignmentSubmitted"]
    with pytest.raises(api.exceptions.RequestError) as unreachable:
        api.send_test_event_notification(Notification=http, TestEventType="Ping")
    assert turk_code(unreachable) == "AWS.MechanicalTurk.NotificationDeliveryFailed"


def test_review_policy_results_and_file_upload_url(api, live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = new_hit(api)
    out = api.list_review_policy_results_for_hit(
        HITId=hit_id, PolicyLevels=["Assignment", "HIT"], RetrieveResults=True
    )
    assert out["HITId"] == hit_id and out["AssignmentReviewReport"]["ReviewResults"] == []
    _, assignment_id = work_on(market_sessions, hit_id)
    with pytest.raises(api.exceptions.RequestError) as no_file:
        api.get_file_upload_url(AssignmentId=assignment_id, QuestionIdentifier="q")
    assert turk_code(no_file) == "AWS.MechanicalTurk.InvalidParameterValue"
    # A file a worker uploaded on the site: the URL's response is shape-checked like every other.
    upload_hit = api.create_hit(**hit_params(Question=UPLOAD_FORM))["HIT"]["HITId"]
    worker = WorkerClient(live_server.url, f"up-{uuid.uuid4().hex[:6]}")
    upload_assignment, work = accept(worker, upload_hit)
    done = post_answers(
        worker, work, upload_assignment, {"q2": ("leaf.png", PHOTO, "image/png")}, q1="A leaf"
    )
    assert done.status_code == 200
    url = api.get_file_upload_url(AssignmentId=upload_assignment, QuestionIdentifier="photo")["FileUploadURL"]
    assert url.startswith(live_server.url + "/uploads/")


def test_a_populated_review_policy_report_fits_the_service_model(api, market_sessions) -> None:  # type: ignore[no-untyped-def]
    """Results and actions of both levels, succeeded and failed, each checked member by member (enums too)."""

    def param(key: str, *values: str) -> dict[str, Any]:
        return {"Key": key, "Values": list(values)}

    known = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": "q", "Values": ["yes"]}]},
            param("ApproveIfKnownAnswerScoreIsAtLeast", "100"),
            param("RejectIfKnownAnswerScoreIsLessThan", "100"),
            param("RejectReason", "The known answer was wrong."),
            param("ExtendIfKnownAnswerScoreIsLessThan", "100"),
            param("ExtendMaximumAssignments", "2"),  # the HIT has 2 already: extending fails
        ],
    }
    plurality = {
        "PolicyName": "SimplePlurality/2011-09-01",
        "Parameters": [param("QuestionIds", "q"), param("QuestionAgreementThreshold", "40")],
    }
    hit_id = new_hit(api, MaxAssignments=2, AssignmentReviewPolicy=known, HITReviewPolicy=plurality)
    work_on(market_sessions, hit_id)
    work_on(market_sessions, hit_id, answer=ANSWER.replace(">yes<", ">no<"))
    out = api.list_review_policy_results_for_hit(
        HITId=hit_id, PolicyLevels=["Assignment", "HIT"], RetrieveActions=True, RetrieveResults=True
    )
    assignment_report, hit_report = out["AssignmentReviewReport"], out["HITReviewReport"]
    assert {a["Status"] for a in assignment_report["ReviewActions"]} == {"Succeeded", "Failed"}
    assert assignment_report["ReviewResults"] and hit_report["ReviewResults"]
    assert out["AssignmentReviewPolicy"]["Parameters"] and out["HITReviewPolicy"]["Parameters"]
    token, pages = None, 0
    while pages == 0 or token:  # every page checked as well
        paging: dict[str, Any] = {"NextToken": token} if token else {}
        page = api.list_review_policy_results_for_hit(
            HITId=hit_id, PolicyLevels=["Assignment", "HIT"], RetrieveActions=True, MaxResults=2, **paging
        )
        token, pages = page.get("NextToken"), pages + 1
    assert pages >= 2


def test_throttling_and_fault_injection(live_server, requester, market_sessions) -> None:  # type: ignore[no-untyped-def]
    client = boto3_client(live_server.url, requester)
    no_retries = boto3.client(
        "mturk",
        endpoint_url=live_server.url,
        region_name="us-east-1",
        aws_access_key_id=requester.access_key_id,
        aws_secret_access_key=requester.secret_access_key,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    client.get_account_balance()  # off by default
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id, throttle_rate=0.5)
    no_retries.get_account_balance()
    with pytest.raises(ClientError) as throttled:
        no_retries.get_account_balance()
    assert throttled.value.response["Error"] == {"Code": "ThrottlingException", "Message": "Rate exceeded"}
    assert throttled.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id, fault_rate=1.0)
    with pytest.raises(ClientError) as fault:
        no_retries.get_account_balance()
    assert fault.value.response["Error"]["Code"] == "ServiceFault"
    assert fault.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id)
    client.get_account_balance()


def test_every_operation_was_exercised() -> None:
    if len(CALLED) < 10:
        pytest.skip("runs after the rest of this module")
    assert set(service_model().operation_names) - CALLED == set()


def test_auto_granted_types_are_requestable(mturk) -> None:
    auto = mturk.create_qualification_type(
        Name="auto-granted-requestable",
        Description="Granted on request.",
        QualificationTypeStatus="Active",
        AutoGranted=True,
        AutoGrantedValue=5,
    )["QualificationType"]
    assert auto["IsRequestable"] is True and auto["AutoGranted"] is True
    listed = mturk.list_qualification_types(
        MustBeRequestable=True, MustBeOwnedByCaller=True, Query="auto-granted-requestable"
    )["QualificationTypes"]
    assert [q["QualificationTypeId"] for q in listed] == [auto["QualificationTypeId"]]


def test_system_qualification_types_are_described_but_not_requestable_or_grantable(mturk) -> None:
    locale = mturk.get_qualification_type(QualificationTypeId="00000000000000000071")["QualificationType"]
    assert locale["Name"] == "Worker_Locale" and locale["IsRequestable"] is False
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.associate_qualification_with_worker(
            QualificationTypeId="00000000000000000071", WorkerId="ANYWORKER0001", IntegerValue=1
        )
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.QualificationTypeDoesNotExist"
