"""Answers that MTurk gave and clients written against it rely on (issue 15, items 7 and 17 to 23)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.conftest import boto3_client
from tests.helpers import hit_params
from tests.market.signed import parsed, signed_post
from tests.market.test_conformance import new_worker, work_on


@pytest.fixture
def raw(live_server, requester):  # type: ignore[no-untyped-def]
    """A boto3 client that sends whatever it is given (as other SDKs and hand-made clients do)."""
    return boto3_client(live_server.url, requester, Config(parameter_validation=False))


def error_of(caught: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    error = caught.value.response["Error"]
    return error["Code"], error["Message"]


# Item 17: every response names its request, as AWS's do.


def test_every_response_carries_a_request_id(mturk, live_server, requester) -> None:  # type: ignore[no-untyped-def]
    first = mturk.get_account_balance()["ResponseMetadata"]["RequestId"]
    second = mturk.get_account_balance()["ResponseMetadata"]["RequestId"]
    assert first and second and first != second
    with pytest.raises(mturk.exceptions.RequestError) as missing:
        mturk.get_hit(HITId="3NOSUCHHIT0000000000000000000X")
    assert missing.value.response["ResponseMetadata"]["RequestId"]
    for body in (b"{not json", b"[]"):  # refused before any operation runs
        response = signed_post(live_server.url, requester, "GetHIT", body)
        assert response.status_code == 400
        assert parsed(response, "GetHIT")["ResponseMetadata"]["RequestId"]
    unsigned = signed_post(live_server.url, requester, "GetAccountBalance", b"{}", sign_target=False)
    assert unsigned.headers["x-amzn-RequestId"]


# Item 7: the signature covers the operation and names this endpoint's region.


def test_a_signature_that_leaves_out_the_target_is_refused(live_server, requester) -> None:  # type: ignore[no-untyped-def]
    signed = signed_post(live_server.url, requester, "GetAccountBalance", b"{}")
    assert signed.status_code == 200
    unsigned = signed_post(live_server.url, requester, "GetAccountBalance", b"{}", sign_target=False)
    assert unsigned.status_code == 400
    assert parsed(unsigned, "GetAccountBalance")["Error"]["Code"] == "IncompleteSignatureException"


def test_a_signature_for_another_region_is_refused(live_server, requester) -> None:  # type: ignore[no-untyped-def]
    elsewhere = signed_post(live_server.url, requester, "GetAccountBalance", b"{}", region="eu-west-1")
    error = parsed(elsewhere, "GetAccountBalance")["Error"]
    code, message = error["Code"], error["Message"]
    assert (elsewhere.status_code, code) == (400, "InvalidSignatureException")
    assert "eu-west-1" in message and "us-east-1" in message


# Item 18: a revoked qualification is not shown.


def test_the_score_of_a_revoked_qualification_is_refused(mturk, market_sessions) -> None:  # type: ignore[no-untyped-def]
    qid = mturk.create_qualification_type(
        Name="Revocable", Description="d", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    worker = new_worker(market_sessions)
    mturk.associate_qualification_with_worker(QualificationTypeId=qid, WorkerId=worker, IntegerValue=5)
    assert mturk.get_qualification_score(QualificationTypeId=qid, WorkerId=worker)["Qualification"][
        "Status"
    ] == ("Granted")
    mturk.disassociate_qualification_from_worker(QualificationTypeId=qid, WorkerId=worker, Reason="stale")
    with pytest.raises(mturk.exceptions.RequestError) as revoked:
        mturk.get_qualification_score(QualificationTypeId=qid, WorkerId=worker)
    assert "This operation can be called with a status of: Granted" in error_of(revoked)[1]
    # Granting again shows it again.
    mturk.associate_qualification_with_worker(QualificationTypeId=qid, WorkerId=worker, IntegerValue=6)
    assert (
        mturk.get_qualification_score(QualificationTypeId=qid, WorkerId=worker)["Qualification"][
            "IntegerValue"
        ]
        == 6
    )


# Item 19: a malformed id, or a worker MTurk does not know, is a parameter validation error.


@pytest.mark.parametrize(
    ("operation", "params", "parameter", "value"),
    [
        (
            "get_qualification_score",
            {"QualificationTypeId": "3ABC", "WorkerId": "nonsense"},
            "WorkerId",
            "nonsense",
        ),
        ("get_hit", {"HITId": "not-an-id"}, "HITId", "not-an-id"),
        ("get_assignment", {"AssignmentId": "3" * 65}, "AssignmentId", "3" * 64 + "..."),
        ("create_worker_block", {"WorkerId": "A-B", "Reason": "r"}, "WorkerId", "A-B"),
        ("delete_worker_block", {"WorkerId": "BWORKER"}, "WorkerId", "BWORKER"),
        ("notify_workers", {"Subject": "s", "MessageText": "m", "WorkerIds": ["lower"]}, "WorkerId", "lower"),
    ],
)
def test_a_malformed_id_is_a_parameter_validation_error(raw, operation, params, parameter, value) -> None:  # type: ignore[no-untyped-def]
    parameter = "WorkerIds" if operation == "notify_workers" else parameter
    with pytest.raises(ClientError) as caught:
        getattr(raw, operation)(**params)
    assert error_of(caught) == (
        "ParameterValidationError",
        f'The value "{value}" is not valid for the parameter {parameter}.',
    )
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_bonus_and_block_for_an_unknown_worker_are_parameter_validation_errors(
    mturk, market_sessions
) -> None:  # type: ignore[no-untyped-def]
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    _, assignment_id = work_on(market_sessions, hit_id)
    unknown = "ANOBODY0000000"
    expected = ("ParameterValidationError", f'The value "{unknown}" is not valid for the parameter WorkerId.')
    with pytest.raises(ClientError) as bonus:
        mturk.send_bonus(WorkerId=unknown, BonusAmount="0.10", AssignmentId=assignment_id, Reason="thanks")
    assert error_of(bonus) == expected
    with pytest.raises(ClientError) as block:
        mturk.create_worker_block(WorkerId=unknown, Reason="spam")
    assert error_of(block) == expected
    assert mturk.list_bonus_payments(AssignmentId=assignment_id)["BonusPayments"] == []
    assert mturk.list_worker_blocks()["WorkerBlocks"] == []


def test_granting_a_qualification_to_an_unknown_worker_is_a_parameter_validation_error(mturk) -> None:  # type: ignore[no-untyped-def]
    # MTurk answered AssociateQualificationWithWorker for a worker id it did not know with a
    # validation error (aws/aws-sdk-ruby#2051), as it does SendBonus and CreateWorkerBlock.
    qtype_id = mturk.create_qualification_type(
        Name=f"unknown-worker-{uuid.uuid4().hex[:8]}", Description="d", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    unknown = "ANOBODY0000001"
    with pytest.raises(ClientError) as caught:
        mturk.associate_qualification_with_worker(
            QualificationTypeId=qtype_id, WorkerId=unknown, IntegerValue=5
        )
    assert error_of(caught) == (
        "ParameterValidationError",
        f'The value "{unknown}" is not valid for the parameter WorkerId.',
    )
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    listed = mturk.list_workers_with_qualification_type(QualificationTypeId=qtype_id)["Qualifications"]
    assert listed == []


# Item 20: expiring a deleted HIT is not an error; deleting it twice is.


def test_expire_and_delete_twice(mturk) -> None:  # type: ignore[no-untyped-def]
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    for _ in range(2):
        mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime.fromtimestamp(0, UTC))
    mturk.delete_hit(HITId=hit_id)
    mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime.fromtimestamp(0, UTC))
    mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2099, 1, 1, tzinfo=UTC))  # stays deleted
    assert mturk.get_hit(HITId=hit_id)["HIT"]["HITStatus"] == "Disposed"
    with pytest.raises(mturk.exceptions.RequestError) as again:
        mturk.delete_hit(HITId=hit_id)
    assert again.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidHITState"
    assert error_of(again)[1] == (
        "This HIT is currently in the state 'Disposed'. "
        "This operation can be called with a status of: Reviewable"
    )


# Item 21: MTurk's model sets no minimum on a rejection's feedback.


def test_a_rejection_with_empty_feedback_is_taken(mturk, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    _, assignment_id = work_on(market_sessions, hit_id)
    mturk.reject_assignment(AssignmentId=assignment_id, RequesterFeedback="")
    assert mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]["AssignmentStatus"] == "Rejected"


# Item 22: every page with rows carries a NextToken; an empty page ends the list.


def test_list_hits_pages_as_mturk_did(mturk) -> None:  # type: ignore[no-untyped-def]
    hit_ids = [mturk.create_hit(**hit_params(Title=f"Paged {n}"))["HIT"]["HITId"] for n in range(3)]
    first = mturk.list_hits(MaxResults=100)  # one short page holds them all
    assert [h["HITId"] for h in first["HITs"]] == hit_ids
    # The loop MTurk scripts run: follow NextToken while the page had results.
    seen, page = [], first
    while page["NumResults"] > 0:
        seen += [h["HITId"] for h in page["HITs"]]
        page = mturk.list_hits(MaxResults=2, NextToken=page["NextToken"])
    assert seen == hit_ids and "NextToken" not in page and page["HITs"] == []
    pages = list(mturk.get_paginator("list_hits").paginate(PaginationConfig={"PageSize": 2}))
    assert [h["HITId"] for p in pages for h in p["HITs"]] == hit_ids


# Item 23: MTurk's error code and message.


def test_extending_past_ten_assignments_has_its_own_error(mturk) -> None:  # type: ignore[no-untyped-def]
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=9))["HIT"]["HITId"]
    with pytest.raises(mturk.exceptions.RequestError) as ten:
        mturk.create_additional_assignments_for_hit(HITId=hit_id, NumberOfAdditionalAssignments=1)
    assert ten.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidMaximumAssignmentsIncrease"
    assert mturk.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 9


def test_a_duplicate_qualification_name_reads_as_mturk(mturk) -> None:  # type: ignore[no-untyped-def]
    mturk.create_qualification_type(Name="Twice", Description="d", QualificationTypeStatus="Active")
    with pytest.raises(mturk.exceptions.RequestError) as twice:
        mturk.create_qualification_type(Name="Twice", Description="d", QualificationTypeStatus="Active")
    assert error_of(twice) == ("RequestError", "You have already created a QualificationType with this name.")
