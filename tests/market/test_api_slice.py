"""The first slice of the requester API through the real boto3 client."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError

from hits.db import session_scope
from hits.market import assignment_ops, decisions
from hits.market.accounts import create_worker
from hits.wire.documents import answers_to_xml
from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params


def test_create_and_get_hit_round_trips(mturk) -> None:
    created = mturk.create_hit(**hit_params(Keywords="images, rating"))["HIT"]
    assert len(created["HITId"]) == 30
    assert created["HITStatus"] == "Assignable"
    assert created["Reward"] == "0.25"
    fetched = mturk.get_hit(HITId=created["HITId"])["HIT"]
    assert fetched["Title"] == "Rate some pictures"
    assert fetched["Keywords"] == "images, rating"
    assert fetched["MaxAssignments"] == 2
    assert fetched["NumberOfAssignmentsAvailable"] == 2
    assert fetched["Expiration"] > fetched["CreationTime"]
    assert fetched["HITTypeId"] == created["HITTypeId"]


def test_missing_hit_is_a_request_error_with_turk_code(mturk) -> None:
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.get_hit(HITId="3NOSUCHHIT00000000000000000000")
    assert caught.value.response["Error"]["Code"] == "RequestError"
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.HITDoesNotExist"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_invalid_parameters_are_refused(mturk) -> None:
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.create_hit(**hit_params(LifetimeInSeconds=10))
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.create_hit(**hit_params(Title="x" * 129))
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.create_hit(**hit_params(Reward="0.123"))
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.create_hit(**hit_params(Question="<not-a-question/>"))


def test_unique_request_token_is_idempotent(mturk) -> None:
    first = mturk.create_hit(**hit_params(), UniqueRequestToken="tok-1")["HIT"]
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(), UniqueRequestToken="tok-1")
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.HitAlreadyExists"
    hits = mturk.list_hits()["HITs"]
    assert [h["HITId"] for h in hits].count(first["HITId"]) == 1


def test_list_hits_paginates_with_botocore_paginator(mturk) -> None:
    created = {mturk.create_hit(**hit_params(Title=f"HIT {i}"))["HIT"]["HITId"] for i in range(7)}
    pages = list(mturk.get_paginator("list_hits").paginate(PaginationConfig={"PageSize": 3}))
    seen = [h["HITId"] for page in pages for h in page["HITs"]]
    assert len(pages) >= 3
    assert set(seen) == created
    assert len(seen) == len(set(seen))
    tokens = [p["NextToken"] for p in pages if "NextToken" in p]
    assert len(tokens) == len(set(tokens))


def test_requesters_see_only_their_own_hits(mturk, live_server, market_sessions) -> None:
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    other = boto3_client(live_server.url, new_requester(market_sessions))
    with pytest.raises(other.exceptions.RequestError):
        other.get_hit(HITId=hit_id)
    assert hit_id not in {h["HITId"] for h in other.list_hits()["HITs"]}
    with pytest.raises(other.exceptions.RequestError) as listing:
        other.list_assignments_for_hit(HITId=hit_id)
    assert listing.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.HITDoesNotExist"
    assert mturk.list_assignments_for_hit(HITId=hit_id)["NumResults"] == 0


def test_account_balance_is_the_prepaid_amount(mturk) -> None:
    assert Decimal(mturk.get_account_balance()["AvailableBalance"]) == Decimal("100.00")


def test_qualification_types_and_grants(mturk) -> None:
    qtype = mturk.create_qualification_type(
        Name="Spelling test", Description="Passed the spelling test", QualificationTypeStatus="Active"
    )["QualificationType"]
    assert qtype["QualificationTypeStatus"] == "Active"
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_qualification_type(
            Name="Spelling test", Description="again", QualificationTypeStatus="Active"
        )
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.QualificationTypeAlreadyExists"
    # A well-formed worker id nobody has: MTurk's validation error, as for SendBonus and CreateWorkerBlock.
    with pytest.raises(ClientError) as missing:
        mturk.associate_qualification_with_worker(
            QualificationTypeId=qtype["QualificationTypeId"], WorkerId="ANOBODY000000", IntegerValue=80
        )
    assert missing.value.response["Error"]["Code"] == "ParameterValidationError"
    assert missing.value.response["Error"]["Message"] == (
        'The value "ANOBODY000000" is not valid for the parameter WorkerId.'
    )


def test_bad_secret_is_refused_like_aws(live_server, requester) -> None:
    client = boto3.client(
        "mturk",
        endpoint_url=live_server.url,
        region_name="us-east-1",
        aws_access_key_id=requester.access_key_id,
        aws_secret_access_key="wrong-secret-wrong-secret-wrong-secret00",
    )
    with pytest.raises(ClientError) as caught:
        client.get_account_balance()
    assert caught.value.response["Error"]["Code"] == "InvalidSignatureException"


def test_unknown_access_key_is_refused(live_server) -> None:
    client = boto3.client(
        "mturk",
        endpoint_url=live_server.url,
        region_name="us-east-1",
        aws_access_key_id="AKIANOTAREALKEY00000",
        aws_secret_access_key="x" * 40,
    )
    with pytest.raises(ClientError) as caught:
        client.list_hits()
    assert caught.value.response["Error"]["Code"] == "UnrecognizedClientException"


def test_listed_hits_carry_their_own_assignment_counts(mturk, requester, market_sessions) -> None:
    """A page of HITs is counted in one query for all of them: each HIT must still get its own counts."""
    busy = mturk.create_hit(**hit_params(MaxAssignments=3))["HIT"]["HITId"]
    idle = mturk.create_hit(**hit_params(MaxAssignments=2))["HIT"]["HITId"]
    with session_scope(market_sessions) as session:
        working = create_worker(session, f"w-{uuid.uuid4().hex[:8]}", "a-long-password")
        done = create_worker(session, f"w-{uuid.uuid4().hex[:8]}", "a-long-password")
        assignment_ops.accept(session, working, busy)
        finished = assignment_ops.accept(session, done, busy)
        assignment_ops.submit(session, done, finished.id, answers_to_xml([("q", "yes")]))
        decisions.approve(session, requester.requester_id, finished.id)
    listed = {h["HITId"]: h for h in mturk.list_hits()["HITs"]}
    counts = ("NumberOfAssignmentsPending", "NumberOfAssignmentsAvailable", "NumberOfAssignmentsCompleted")
    assert [listed[busy][c] for c in counts] == [1, 1, 1]
    assert [listed[idle][c] for c in counts] == [0, 2, 0]
    # The same figures as GetHIT gives for one HIT.
    assert [mturk.get_hit(HITId=busy)["HIT"][c] for c in counts] == [1, 1, 1]


def _token(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


def test_reviewable_pages_skip_nothing_when_hits_leave_the_list(mturk) -> None:
    """Pages start after the last HIT seen, not at an offset that shifts when HITs turn Reviewing."""
    ids = [mturk.create_hit(**hit_params(Title=f"Keyset {i}"))["HIT"]["HITId"] for i in range(5)]
    for hit_id in ids:
        mturk.update_expiration_for_hit(HITId=hit_id, ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    first = mturk.list_reviewable_hits(MaxResults=2)
    assert [h["HITId"] for h in first["HITs"]] == ids[:2]
    for hit_id in ids[:2]:  # reviewed meanwhile: they leave the Reviewable list
        mturk.update_hit_review_status(HITId=hit_id, Revert=False)
    second = mturk.list_reviewable_hits(MaxResults=2, NextToken=first["NextToken"])
    assert [h["HITId"] for h in second["HITs"]] == ids[2:4]
    third = mturk.list_reviewable_hits(MaxResults=2, NextToken=second["NextToken"])
    assert [h["HITId"] for h in third["HITs"]] == ids[4:]
    # As on MTurk, a short last page still carries a token; the page it leads to is empty and has none.
    end = mturk.list_reviewable_hits(MaxResults=2, NextToken=third["NextToken"])
    assert (end["NumResults"], end["HITs"], "NextToken" in end) == (0, [], False)
    # ListHITs pages the same way, over every status but Disposed.
    listed = [
        h["HITId"]
        for p in mturk.get_paginator("list_hits").paginate(PaginationConfig={"PageSize": 2})
        for h in p["HITs"]
    ]
    assert listed == ids
    for token in ("not-a-token", _token({"k": ["2024-01-01T00:00:00", ids[0]]}), _token({"k": [1, 2]})):
        with pytest.raises(mturk.exceptions.RequestError):  # not a token of ours: refused, never a 500
            mturk.list_reviewable_hits(NextToken=token)
