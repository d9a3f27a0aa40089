"""A NextToken belongs to the list it was issued for: other lists, filters and requesters refuse it."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from hits.db import session_scope
from hits.market import assignment_ops, qualification_admin
from hits.market.accounts import create_worker
from hits.market.models import Worker
from hits.wire.documents import answers_to_xml
from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params

REFUSED = "AWS.MechanicalTurk.InvalidParameterValue"


@dataclass(frozen=True)
class World:
    """Two or more rows in every list of requester ``a``; ``b`` is another requester."""

    a: Any
    b: Any
    marker: str
    qual: str  # required by two HITs, granted to two workers
    asked: str  # asked for by two workers
    reviewable_type: str  # two Reviewable HITs
    other_type: str
    hit: str  # two approved assignments, a bonus on each, a known-answer review
    other_hit: str
    assignment: str


@pytest.fixture(scope="module")
def world(live_server, market_sessions) -> World:  # type: ignore[no-untyped-def]
    a = boto3_client(live_server.url, new_requester(market_sessions))
    b = boto3_client(live_server.url, new_requester(market_sessions))
    marker = uuid.uuid4().hex[:10]

    def qualification_type(name: str) -> str:
        qid: str = a.create_qualification_type(
            Name=f"Scopes {marker} {name}", Description="Scoped", QualificationTypeStatus="Active"
        )["QualificationType"]["QualificationTypeId"]
        return qid

    qual, asked = qualification_type("granted"), qualification_type("asked")
    with session_scope(market_sessions) as session:
        workers = [
            create_worker(session, f"scope-{uuid.uuid4().hex[:10]}", "a-long-password") for _ in range(2)
        ]
        for worker in workers:
            qualification_admin.create_request(session, worker, asked, answer="please")
        worker_ids = [w.id for w in workers]
    requirement = {"QualificationTypeId": qual, "Comparator": "Exists", "ActionsGuarded": "Accept"}
    for n in range(2):
        a.create_hit(**hit_params(Title=f"Qualified {n}", QualificationRequirements=[requirement]))
    reviewable = [a.create_hit(**hit_params(Title=f"Expired {marker}"))["HIT"] for _ in range(2)]
    for expired in reviewable:
        a.update_expiration_for_hit(HITId=expired["HITId"], ExpireAt=datetime(2015, 1, 1, tzinfo=UTC))
    policy = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": "q", "Values": ["yes"]}]},
            {"Key": "ApproveIfKnownAnswerScoreIsAtLeast", "Values": ["0"]},
        ],
    }
    hit = a.create_hit(**hit_params(Title=f"Reviewed {marker}", AssignmentReviewPolicy=policy))["HIT"]
    assignments = []
    for worker_id in worker_ids:
        with session_scope(market_sessions) as session:
            worker = session.get(Worker, worker_id)
            assert worker is not None
            taken = assignment_ops.accept(session, worker, hit["HITId"])
            assignment_ops.submit(session, worker, taken.id, answers_to_xml([("q", "yes")]))
            assignments.append(taken.id)
        a.associate_qualification_with_worker(QualificationTypeId=qual, WorkerId=worker_id)
        a.create_worker_block(WorkerId=worker_id, Reason="Scoped")
    for worker_id, assignment_id in zip(worker_ids, assignments, strict=True):
        a.send_bonus(WorkerId=worker_id, AssignmentId=assignment_id, BonusAmount="0.10", Reason="Thanks")
    return World(
        a=a,
        b=b,
        marker=marker,
        qual=qual,
        asked=asked,
        reviewable_type=reviewable[0]["HITTypeId"],
        other_type=hit["HITTypeId"],
        hit=hit["HITId"],
        other_hit=reviewable[0]["HITId"],
        assignment=assignments[0],
    )


#: A call of a list: the client and its filters.
Call = tuple[Any, dict[str, Any]]


@dataclass(frozen=True)
class Listing:
    operation: str
    key: str  # where the page's items are
    filters: Callable[[World], dict[str, Any]]  # the list requester ``a`` pages through
    others: tuple[Callable[[World], Call], ...]  # the same operation for another filter or requester


def _types(w: World, **more: Any) -> dict[str, Any]:
    return {"Query": w.marker, "MustBeRequestable": False, **more}


LISTINGS = [
    Listing("list_hits", "HITs", lambda w: {}, (lambda w: (w.b, {}),)),
    Listing(
        "list_reviewable_hits",
        "HITs",
        lambda w: {"HITTypeId": w.reviewable_type},
        (
            lambda w: (w.a, {"HITTypeId": w.other_type}),
            lambda w: (w.a, {"HITTypeId": w.reviewable_type, "Status": "Reviewing"}),
            lambda w: (w.a, {}),
            lambda w: (w.b, {"HITTypeId": w.reviewable_type}),
        ),
    ),
    Listing(
        "list_assignments_for_hit",
        "Assignments",
        lambda w: {"HITId": w.hit},
        (
            lambda w: (w.a, {"HITId": w.other_hit}),
            lambda w: (w.a, {"HITId": w.hit, "AssignmentStatuses": ["Approved"]}),
        ),
    ),
    Listing(
        "list_qualification_requests",
        "QualificationRequests",
        lambda w: {"QualificationTypeId": w.asked},
        (lambda w: (w.a, {}), lambda w: (w.a, {"QualificationTypeId": w.qual})),
    ),
    Listing(
        "list_workers_with_qualification_type",
        "Qualifications",
        lambda w: {"QualificationTypeId": w.qual},
        (
            lambda w: (w.a, {"QualificationTypeId": w.qual, "Status": "Granted"}),
            lambda w: (w.a, {"QualificationTypeId": w.asked}),
        ),
    ),
    Listing(
        "list_qualification_types",
        "QualificationTypes",
        _types,
        (
            lambda w: (w.a, _types(w, MustBeOwnedByCaller=True)),
            lambda w: (w.a, _types(w, Query=f"Scopes {w.marker}")),
            lambda w: (w.b, _types(w)),
        ),
    ),
    Listing(
        "list_bonus_payments",
        "BonusPayments",
        lambda w: {"HITId": w.hit},
        (lambda w: (w.a, {"AssignmentId": w.assignment}), lambda w: (w.a, {"HITId": w.other_hit})),
    ),
    Listing("list_worker_blocks", "WorkerBlocks", lambda w: {}, (lambda w: (w.b, {}),)),
    Listing(
        "list_hits_for_qualification_type",
        "HITs",
        lambda w: {"QualificationTypeId": w.qual},
        (lambda w: (w.a, {"QualificationTypeId": w.asked}), lambda w: (w.b, {"QualificationTypeId": w.qual})),
    ),
    Listing(
        "list_review_policy_results_for_hit",
        "AssignmentReviewReport",
        lambda w: {"HITId": w.hit},
        (
            lambda w: (w.a, {"HITId": w.hit, "PolicyLevels": ["HIT"]}),
            lambda w: (w.a, {"HITId": w.hit, "RetrieveActions": False}),
            lambda w: (w.a, {"HITId": w.other_hit}),
        ),
    ),
]
BY_NAME = {listing.operation: listing for listing in LISTINGS}


def _first_token(w: World, listing: Listing) -> str:
    token: str = getattr(w.a, listing.operation)(**listing.filters(w), MaxResults=1)["NextToken"]
    return token


@pytest.fixture(scope="module")
def tokens(world: World) -> dict[str, str]:
    """A token of each list, for its second page."""
    return {listing.operation: _first_token(world, listing) for listing in LISTINGS}


def _offers() -> list[Any]:
    """(token's list, list offered to, which other filter): every other list, its own filtered otherwise."""
    cases = []
    for source in LISTINGS:
        for target in LISTINGS:
            if target is not source:
                cases.append(
                    pytest.param(
                        source.operation, target.operation, None, id=f"{source.operation}>{target.operation}"
                    )
                )
        for n in range(len(source.others)):
            cases.append(
                pytest.param(source.operation, source.operation, n, id=f"{source.operation}>other-filter-{n}")
            )
    return cases


def _refused(client: Any, operation: str, params: dict[str, Any]) -> str:
    with pytest.raises(client.exceptions.RequestError) as caught:
        getattr(client, operation)(**params)
    code: str = caught.value.response["TurkErrorCode"]
    return code


@pytest.mark.parametrize(("source", "target", "other"), _offers())
def test_a_token_is_refused_by_every_other_list(
    world: World, tokens: dict[str, str], source: str, target: str, other: int | None
) -> None:
    listing = BY_NAME[target]
    client, params = (world.a, listing.filters(world)) if other is None else listing.others[other](world)
    assert _refused(client, target, {**params, "NextToken": tokens[source]}) == REFUSED


def _encode(data: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode()


@pytest.mark.parametrize("operation", [listing.operation for listing in LISTINGS])
def test_a_token_not_of_ours_is_refused(world: World, tokens: dict[str, str], operation: str) -> None:
    listing = BY_NAME[operation]
    ours = json.loads(base64.urlsafe_b64decode(tokens[operation]))
    place = "o" if "o" in ours else "k"  # a position, or the key of the last row read
    unscoped = {k: v for k, v in ours.items() if k != "s"}
    malformed = [
        "not-a-token",
        _encode([1, 2]),
        _encode(unscoped),  # the place without its list
        _encode({**ours, "s": "0" * 12}),
        *(_encode({**ours, place: bad}) for bad in (-3, "1", True, None, [1, 2], 2**40, ["2024-01-01", 7])),
    ]
    for token in malformed:
        assert _refused(world.a, operation, {**listing.filters(world), "NextToken": token}) == REFUSED, token
    assert getattr(world.a, operation)(
        **listing.filters(world), NextToken=tokens[operation]
    )  # ours still works


@pytest.mark.parametrize(
    "operation",
    [listing.operation for listing in LISTINGS if listing.operation != "list_review_policy_results_for_hit"],
)
def test_each_list_pages_to_the_end_with_botocore(world: World, operation: str) -> None:
    listing = BY_NAME[operation]
    assert world.a.can_paginate(operation)
    whole = getattr(world.a, operation)(**listing.filters(world))
    assert len(whole[listing.key]) >= 2
    # As on MTurk, the short last page carries a token too; the page after it is empty and ends the list.
    end = getattr(world.a, operation)(**listing.filters(world), NextToken=whole["NextToken"])
    assert (end["NumResults"], end[listing.key], "NextToken" in end) == (0, [], False)
    pages = list(
        world.a.get_paginator(operation).paginate(**listing.filters(world), PaginationConfig={"PageSize": 1})
    )
    assert [item for page in pages for item in page[listing.key]] == whole[
        listing.key
    ]  # same rows, same order
    issued = [page["NextToken"] for page in pages if "NextToken" in page]
    assert len(issued) >= len(whole[listing.key]) - 1 and len(set(issued)) == len(issued)
    assert _first_token(world, listing) != _first_token(world, listing)  # never the same token twice


def test_review_results_page_to_the_end(world: World) -> None:
    """ListReviewPolicyResultsForHIT has no botocore paginator: its NextToken followed by hand."""
    whole = world.a.list_review_policy_results_for_hit(HITId=world.hit)["AssignmentReviewReport"]
    records = whole["ReviewResults"] + whole["ReviewActions"]
    seen, issued, token = [], [], None
    while True:
        page = world.a.list_review_policy_results_for_hit(
            HITId=world.hit, MaxResults=1, **({"NextToken": token} if token else {})
        )
        report = page["AssignmentReviewReport"]
        seen += report["ReviewResults"] + report["ReviewActions"]
        token = page.get("NextToken")
        if token is None:
            break
        issued.append(token)
        assert len(issued) <= len(records)
    assert sorted(map(repr, seen)) == sorted(map(repr, records)) and len(records) >= 2
    assert len(set(issued)) == len(issued)
