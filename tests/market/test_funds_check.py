"""CreateHIT is refused when the balance does not cover the HIT's full cost, as on MTurk."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params

INSUFFICIENT = "AWS.MechanicalTurk.InsufficientFunds"


def _client(live_server, market_sessions, deposit: str):  # type: ignore[no-untyped-def]
    return boto3_client(live_server.url, new_requester(market_sessions, deposit))


@pytest.mark.parametrize(
    ("reward", "assignments", "cost"),
    [
        ("0.25", 2, "0.60"),  # 2 x (0.25 + 20%)
        ("0.10", 10, "1.40"),  # 10 or more assignments: 40%
        ("0.01", 3, "0.06"),  # the fee is at least $0.01 an assignment
    ],
)
def test_create_hit_needs_the_full_cost(
    live_server, market_sessions, reward: str, assignments: int, cost: str
) -> None:  # type: ignore[no-untyped-def]
    short = f"{float(cost) - 0.01:.2f}"
    poor = _client(live_server, market_sessions, short)
    title = f"costly {uuid.uuid4().hex[:8]}"
    params = hit_params(Title=title, Reward=reward, MaxAssignments=assignments)
    with pytest.raises(poor.exceptions.RequestError) as caught:
        poor.create_hit(**params)
    assert caught.value.response["TurkErrorCode"] == INSUFFICIENT
    assert poor.list_hits()["HITs"] == []
    assert poor.get_account_balance()["AvailableBalance"] == short
    exact = _client(live_server, market_sessions, cost)
    hit = exact.create_hit(**params)["HIT"]
    assert exact.get_hit(HITId=hit["HITId"])["HIT"]["Title"] == title
    assert exact.get_account_balance()["AvailableBalance"] == cost  # checked, not charged


def test_create_hit_with_hit_type_is_checked_too(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    broke = _client(live_server, market_sessions, "0.00")
    type_id = broke.create_hit_type(
        Title="t", Description="d", Reward="0.50", AssignmentDurationInSeconds=600
    )["HITTypeId"]  # a type costs nothing
    params = hit_params()
    for key in ("Title", "Description", "Reward", "AssignmentDurationInSeconds"):
        params.pop(key)
    with pytest.raises(broke.exceptions.RequestError) as caught:
        broke.create_hit_with_hit_type(HITTypeId=type_id, **params)
    assert caught.value.response["TurkErrorCode"] == INSUFFICIENT
    assert broke.list_hits()["HITs"] == []


def test_a_hit_without_reward_needs_no_money(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    broke = _client(live_server, market_sessions, "0.00")
    broke.create_hit(**hit_params(Reward="0.00"))
    assert len(broke.list_hits()["HITs"]) == 1


def test_a_hit_of_an_existing_type_is_checked_against_the_balance_read_with_the_type(
    live_server, market_sessions
) -> None:  # type: ignore[no-untyped-def]
    """The second HIT finds its type already there; the balance comes with it, and is checked all the same."""
    client = _client(live_server, market_sessions, "0.60")
    params = hit_params(Title=f"same type {uuid.uuid4().hex[:8]}", Reward="0.25")
    first = client.create_hit(**{**params, "MaxAssignments": 1})["HIT"]  # 0.30: a new type
    with pytest.raises(client.exceptions.RequestError) as caught:
        client.create_hit(**{**params, "MaxAssignments": 3})  # 0.90: the same type, too dear
    assert caught.value.response["TurkErrorCode"] == INSUFFICIENT
    second = client.create_hit(**{**params, "MaxAssignments": 2})["HIT"]  # 0.60: exactly covered
    assert second["HITTypeId"] == first["HITTypeId"]
    assert len(client.list_hits()["HITs"]) == 2


def test_additional_assignments_need_the_funds_for_them(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    """CreateAdditionalAssignmentsForHIT is held to the balance as CreateHIT is.

    Otherwise a requester with $0.30 makes a one-assignment HIT and extends
    it to a thousand: workers would do work whose approval then fails for
    lack of funds.
    """
    client = _client(live_server, market_sessions, "0.30")
    hit_id = client.create_hit(**hit_params(Reward="0.10", MaxAssignments=1))["HIT"]["HITId"]  # 0.12
    with pytest.raises(client.exceptions.RequestError) as caught:
        client.create_additional_assignments_for_hit(
            HITId=hit_id, NumberOfAdditionalAssignments=3, UniqueRequestToken="more-1"
        )  # 3 x 0.12 = 0.36
    assert caught.value.response["TurkErrorCode"] == INSUFFICIENT
    assert client.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 1
    # The refused call did not use up its token; two more (0.24) are covered.
    client.create_additional_assignments_for_hit(
        HITId=hit_id, NumberOfAdditionalAssignments=2, UniqueRequestToken="more-1"
    )
    assert client.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 3


def test_additional_assignments_of_a_large_hit_carry_its_fee(live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    client = _client(live_server, market_sessions, "1.40")  # 10 x (0.10 + 40%)
    hit_id = client.create_hit(**hit_params(Reward="0.10", MaxAssignments=10))["HIT"]["HITId"]
    with pytest.raises(client.exceptions.RequestError) as caught:
        client.create_additional_assignments_for_hit(HITId=hit_id, NumberOfAdditionalAssignments=11)
    assert caught.value.response["TurkErrorCode"] == INSUFFICIENT  # 11 x 0.14 = 1.54
    client.create_additional_assignments_for_hit(HITId=hit_id, NumberOfAdditionalAssignments=10)  # 1.40
    assert client.get_hit(HITId=hit_id)["HIT"]["MaxAssignments"] == 20
