"""Lists changed while a script pages through them: a page starts after the last row read, none is skipped."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest

from hits.db import session_scope
from hits.market import assignment_ops, qualification_admin
from hits.market.accounts import create_worker
from hits.market.models import Worker
from hits.wire.documents import answers_to_xml
from tests.helpers import hit_params


def _workers(market_sessions, count: int) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        return [
            create_worker(session, f"pg-{uuid.uuid4().hex[:10]}", "a-long-password").id for _ in range(count)
        ]


def _submitted(mturk, market_sessions, count: int) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """A HIT with ``count`` Submitted assignments: (HIT id, assignment ids in the order accepted)."""
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=count))["HIT"]["HITId"]
    done = []
    for worker_id in _workers(market_sessions, count):
        with session_scope(market_sessions) as session:
            worker = session.get(Worker, worker_id)
            assert worker is not None
            assignment = assignment_ops.accept(session, worker, hit_id)
            assignment_ops.submit(session, worker, assignment.id, answers_to_xml([("q", "yes")]))
            done.append(assignment.id)
    return hit_id, done


def _qualification_type(mturk) -> str:  # type: ignore[no-untyped-def]
    qid: str = mturk.create_qualification_type(
        Name=f"Paged {uuid.uuid4().hex[:8]}", Description="Asked for", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    return qid


def _token(data: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


def _code(caught: pytest.ExceptionInfo[Any]) -> str:
    code: str = caught.value.response["TurkErrorCode"]
    return code


def test_approving_assignments_as_they_are_read_skips_none(mturk, market_sessions) -> None:
    hit_id, submitted = _submitted(mturk, market_sessions, 9)
    pages = mturk.get_paginator("list_assignments_for_hit").paginate(
        HITId=hit_id, AssignmentStatuses=["Submitted"], PaginationConfig={"PageSize": 3}
    )
    approved, tokens = [], []
    for page in pages:  # botocore asks for the next page only after this one is handled
        for assignment in page["Assignments"]:
            mturk.approve_assignment(AssignmentId=assignment["AssignmentId"])
            approved.append(assignment["AssignmentId"])
        tokens += [page["NextToken"]] if "NextToken" in page else []
    assert approved == submitted  # all nine, in the order they were accepted
    assert len(tokens) == len(set(tokens)) == 3
    listed = mturk.list_assignments_for_hit(HITId=hit_id, AssignmentStatuses=["Approved"])["Assignments"]
    assert [a["AssignmentId"] for a in listed] == submitted


def test_accepting_qualification_requests_as_they_are_read_skips_none(mturk, market_sessions) -> None:
    qid = _qualification_type(mturk)
    with session_scope(market_sessions) as session:
        requests = [
            qualification_admin.create_request(session, session.get(Worker, w), qid, answer="please").id  # type: ignore[arg-type]
            for w in _workers(market_sessions, 6)
        ]
    pages = mturk.get_paginator("list_qualification_requests").paginate(
        QualificationTypeId=qid, PaginationConfig={"PageSize": 2}
    )
    accepted = []
    for page in pages:
        for request in page["QualificationRequests"]:
            mturk.accept_qualification_request(QualificationRequestId=request["QualificationRequestId"])
            accepted.append(request["QualificationRequestId"])
    assert accepted == requests
    assert mturk.list_qualification_requests(QualificationTypeId=qid)["QualificationRequests"] == []


def test_revoking_qualifications_as_they_are_read_skips_none(mturk, market_sessions) -> None:
    qid = _qualification_type(mturk)
    workers = _workers(market_sessions, 6)
    for worker_id in workers:
        mturk.associate_qualification_with_worker(QualificationTypeId=qid, WorkerId=worker_id, IntegerValue=5)
    pages = mturk.get_paginator("list_workers_with_qualification_type").paginate(
        QualificationTypeId=qid, Status="Granted", PaginationConfig={"PageSize": 2}
    )
    revoked = []
    for page in pages:
        for grant in page["Qualifications"]:
            mturk.disassociate_qualification_from_worker(QualificationTypeId=qid, WorkerId=grant["WorkerId"])
            revoked.append(grant["WorkerId"])
    assert sorted(revoked) == sorted(workers) and len(revoked) == 6
    left = mturk.list_workers_with_qualification_type(QualificationTypeId=qid, Status="Granted")
    assert left["Qualifications"] == []


def test_a_token_is_never_returned_twice(mturk, market_sessions) -> None:
    hit_id, submitted = _submitted(mturk, market_sessions, 3)
    first = mturk.list_assignments_for_hit(HITId=hit_id, MaxResults=2)
    again = mturk.list_assignments_for_hit(HITId=hit_id, MaxResults=2)
    assert first["NextToken"] != again["NextToken"]
    # Both lead to the same next page, as often as they are used.
    for token in (first["NextToken"], again["NextToken"], first["NextToken"]):
        rest = mturk.list_assignments_for_hit(HITId=hit_id, MaxResults=2, NextToken=token)
        assert [a["AssignmentId"] for a in rest["Assignments"]] == submitted[2:]
        end = mturk.list_assignments_for_hit(HITId=hit_id, MaxResults=2, NextToken=rest["NextToken"])
        assert (end["Assignments"], "NextToken" in end) == ([], False)
    qid = _qualification_type(mturk)
    for worker_id in _workers(market_sessions, 2):
        mturk.associate_qualification_with_worker(QualificationTypeId=qid, WorkerId=worker_id)
    tokens = [
        mturk.list_workers_with_qualification_type(QualificationTypeId=qid, MaxResults=1)["NextToken"]
        for _ in range(2)
    ]
    assert tokens[0] != tokens[1]


def test_a_token_not_of_this_list_is_refused(mturk, market_sessions) -> None:
    hit_id, _ = _submitted(mturk, market_sessions, 2)
    other_hit, _ = _submitted(mturk, market_sessions, 2)
    qid = _qualification_type(mturk)
    for worker_id in _workers(market_sessions, 2):
        mturk.associate_qualification_with_worker(QualificationTypeId=qid, WorkerId=worker_id)
    of_other_hit = mturk.list_assignments_for_hit(HITId=other_hit, MaxResults=1)["NextToken"]
    of_hits = mturk.list_hits(MaxResults=1)["NextToken"]
    of_grants = mturk.list_workers_with_qualification_type(QualificationTypeId=qid, MaxResults=1)["NextToken"]
    foreign_or_malformed = [
        "not-a-token",
        _token([1, 2]),
        _token({"o": 1}),  # a position with no list of its own
        _token({"o": -3}),
        _token({"k": ["2024-01-01T00:00:00+00:00", "3X"]}),  # a key with no list of its own
        of_other_hit,
        of_hits,
        of_grants,
    ]
    for token in foreign_or_malformed:
        with pytest.raises(mturk.exceptions.RequestError) as caught:
            mturk.list_assignments_for_hit(HITId=hit_id, NextToken=token)
        assert _code(caught) == "AWS.MechanicalTurk.InvalidParameterValue", token
    of_assignments = mturk.list_assignments_for_hit(HITId=hit_id, MaxResults=1)["NextToken"]
    for token in (of_assignments, of_hits, _token({"o": -3})):
        with pytest.raises(mturk.exceptions.RequestError) as caught:
            mturk.list_workers_with_qualification_type(QualificationTypeId=qid, NextToken=token)
        assert _code(caught) == "AWS.MechanicalTurk.InvalidParameterValue"
        with pytest.raises(mturk.exceptions.RequestError) as caught:
            mturk.list_qualification_requests(NextToken=token)
        assert _code(caught) == "AWS.MechanicalTurk.InvalidParameterValue"
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.list_hits(NextToken=of_assignments)
    assert _code(caught) == "AWS.MechanicalTurk.InvalidParameterValue"
    # The lists paged by position refuse a token that names no list of theirs too (test_token_scopes.py).
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.list_bonus_payments(HITId=hit_id, NextToken=_token({"o": -3}))
    assert _code(caught) == "AWS.MechanicalTurk.InvalidParameterValue"
