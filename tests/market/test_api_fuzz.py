"""Fuzzing every operation of the MTurk API over HTTP: malformed input gets a JSON 400, never a 5xx.

Requests are built from botocore's service model (valid-ish values, ids of
real rows, wrong JSON types, numbers past every range, odd and non-Unicode
strings), signed with SigV4 and sent to the running server as another
SDK or a client with ``parameter_validation=False`` would send them. Every
answer must be one botocore parses: 200, or 400 with a JSON error it reads
into ``Error.Code``, and always an ``x-amzn-RequestId``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from botocore.model import ListShape, Shape, StructureShape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hits.market.accounts import IssuedKey
from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params
from tests.market.shapes import service_model
from tests.market.signed import call, parsed, signed_post
from tests.market.test_conformance import new_worker, work_on

OPERATIONS = sorted(service_model().operation_names)
#: Examples an operation: 39 x 20 requests, about 20 seconds; HITFORGE_FUZZ_EXAMPLES asks for a longer run.
EXAMPLES = int(os.environ.get("HITFORGE_FUZZ_EXAMPLES", "20"))


@dataclass
class World:
    """A requester with one row of each kind, so fuzzed ids sometimes name something real."""

    url: str
    key: IssuedKey
    entity_ids: list[str]
    worker_ids: list[str]


@pytest.fixture(scope="module")
def world(live_server, market_sessions) -> World:  # type: ignore[no-untyped-def]
    key = new_requester(market_sessions, "1000.00")
    mturk = boto3_client(live_server.url, key)
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=3))["HIT"]["HITId"]
    worker_id, assignment_id = work_on(market_sessions, hit_id)
    qtype = mturk.create_qualification_type(
        Name="Fuzzed", Description="fuzzed", QualificationTypeStatus="Active"
    )["QualificationType"]["QualificationTypeId"]
    hit_type = mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"]
    return World(
        live_server.url,
        key,
        [hit_id, assignment_id, qtype, hit_type, "00000000000000000071"],
        [worker_id, new_worker(market_sessions)],
    )


#: A value of any JSON type, for a member that expects another.
JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)
#: Strings that are not what anyone expects: empty, blank, long, lone surrogates, control characters.
ODD_TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", " ", "\ud800", "A\udfff", "nonsense", "x" * 300, "0" * 65, "\x00", "A" + "B" * 64]),
)
TIMESTAMPS = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(),
    st.sampled_from([0, 1e12, 253_402_300_800, -62_135_596_801, 2**63]),
    st.sampled_from(
        ["2030-01-01T00:00:00Z", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00", "soon"]
    ),
)


def _numbers(low: int, high: int) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(-5, 200),
        st.integers(low - 2, high + 2),
        st.sampled_from([2**31, 2**63, 2**64, -(2**63) - 1, 10**30, 1.5, 1e308]),
    )


def _strings(shape: Shape, name: str, world: World) -> st.SearchStrategy[Any]:
    meta = shape.metadata
    if "enum" in meta:
        return st.one_of(st.sampled_from(meta["enum"]), ODD_TEXT)
    if shape.name == "CustomerId":
        return st.one_of(
            st.sampled_from(world.worker_ids), st.from_regex(r"A[A-Z0-9]{1,14}", fullmatch=True), ODD_TEXT
        )
    if shape.name == "EntityId" or name.endswith("Id"):
        return st.one_of(
            st.sampled_from(world.entity_ids), st.from_regex(r"[A-Z0-9]{1,30}", fullmatch=True), ODD_TEXT
        )
    if shape.name == "CurrencyAmount":
        return st.one_of(
            st.sampled_from(["0.05", "1", "1.", "99999999999999.99", "-1", "1e2", "0.001"]), ODD_TEXT
        )
    if name == "Question":
        return st.one_of(st.just(hit_params()["Question"]), ODD_TEXT)
    return ODD_TEXT


def value_of(shape: Shape, name: str, world: World) -> st.SearchStrategy[Any]:
    """Values for a member of ``shape``: mostly of its type (valid or not), sometimes of another type."""
    kind = shape.type_name
    right: st.SearchStrategy[Any]
    if isinstance(shape, StructureShape):
        right = structure_of(shape, world)
    elif isinstance(shape, ListShape):
        right = st.lists(value_of(shape.member, name, world), max_size=3)
    elif kind == "string":
        right = _strings(shape, name, world)
    elif kind == "integer":
        right = _numbers(-(2**31), 2**31 - 1)
    elif kind == "long":
        right = _numbers(-(2**63), 2**63 - 1)
    elif kind == "boolean":
        right = st.booleans()
    elif kind == "timestamp":
        right = TIMESTAMPS
    else:
        raise AssertionError(f"the MTurk model has no {kind} members")
    return st.one_of(right, right, right, JUNK)  # one in four is of the wrong type


def structure_of(shape: StructureShape, world: World) -> st.SearchStrategy[dict[str, Any]]:
    required = {n: value_of(s, n, world) for n, s in shape.members.items() if n in shape.required_members}
    optional = {n: value_of(s, n, world) for n, s in shape.members.items() if n not in shape.required_members}
    return st.fixed_dictionaries(required, optional=optional)


def assert_botocore_reads(response: requests.Response, operation: str) -> None:
    """A 200, or a 400 whose JSON body botocore turns into an error code; a request id either way."""
    assert response.status_code in (200, 400), (response.status_code, response.text[:500])
    assert response.headers["Content-Type"] == "application/x-amz-json-1.1"
    assert response.headers.get("x-amzn-RequestId")
    json.loads(response.content)
    result = parsed(response, operation)
    assert result["ResponseMetadata"]["RequestId"] == response.headers["x-amzn-RequestId"]
    if response.status_code == 400:
        assert result["Error"]["Code"] and result["Error"]["Message"], result


@pytest.mark.parametrize("operation", OPERATIONS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_input_gets_a_5xx(world: World, operation: str, data: st.DataObject) -> None:
    shape = service_model().operation_model(operation).input_shape
    params = data.draw(
        st.one_of(structure_of(shape, world), structure_of(shape, world), JUNK), label="params"
    )
    assert_botocore_reads(call(world.url, world.key, operation, params), operation)


def _deep(depth: int) -> bytes:
    return b'{"HITId": ' + b"[" * depth + b"]" * depth + b"}"


#: Any operation refuses these: they are not a JSON object botocore could have sent.
MALFORMED = {
    "nested 100,000 deep": _deep(100_000),
    "nested object": b'{"HITId": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}",
    "not UTF-8": b'{"HITId": "\xff\xfe"}',
    "not JSON": b"{HITId: 1",
    "an array": b"[1, 2]",
    "a string": b'"GetHIT"',
    "4,301 digits": b'{"MaxResults": ' + b"9" * 4301 + b"}",
}
#: JSON the operation named refuses: a value its member cannot take.
BAD_VALUES = {
    "lone surrogate in an id": ("GetHIT", b'{"HITId": "\\ud800"}'),
    "lone surrogate in text": (
        "CreateWorkerBlock",
        b'{"WorkerId": "AXXXXXXXXXXXXX", "Reason": "\\udfff"}',
    ),
    "NaN": ("UpdateExpirationForHIT", b'{"ExpireAt": NaN, "HITId": "3X"}'),
    "Infinity": ("UpdateExpirationForHIT", b'{"ExpireAt": -Infinity, "HITId": "3X"}'),
    "huge exponent": ("UpdateExpirationForHIT", b'{"ExpireAt": 1e999, "HITId": "3X"}'),
    "ExpireAt 1e12": ("UpdateExpirationForHIT", b'{"ExpireAt": 1e12, "HITId": "3X"}'),
    "AutoGrantedValue 2**64": (
        "CreateQualificationType",
        json.dumps(
            {"Name": "big", "Description": "d", "QualificationTypeStatus": "Active", "AutoGranted": True}
            | {"AutoGrantedValue": 2**64}
        ).encode(),
    ),
}


@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
@pytest.mark.parametrize(
    "operation", ["GetHIT", "UpdateExpirationForHIT", "ListHITs", "CreateQualificationType"]
)
def test_malformed_bodies_get_a_json_400(world: World, operation: str, body: bytes) -> None:
    response = signed_post(world.url, world.key, operation, body)
    assert response.status_code == 400, (response.status_code, response.text[:300])
    assert_botocore_reads(response, operation)
    assert parsed(response, operation)["Error"]["Code"] == "SerializationException"


@pytest.mark.parametrize("case", list(BAD_VALUES.values()), ids=list(BAD_VALUES))
def test_values_no_member_takes_get_a_json_400(world: World, case: tuple[str, bytes]) -> None:
    operation, body = case
    response = signed_post(world.url, world.key, operation, body)
    assert response.status_code == 400, (response.status_code, response.text[:300])
    assert_botocore_reads(response, operation)


def test_the_issue_inputs_on_real_rows(world: World, market_sessions) -> None:  # type: ignore[no-untyped-def]
    """The inputs of the fuzzer's report, aimed at rows that exist, so the checks past the id run."""
    hit_id, qtype = world.entity_ids[0], world.entity_ids[2]
    cases = [
        ("UpdateExpirationForHIT", {"HITId": hit_id, "ExpireAt": 1e12}),
        ("UpdateExpirationForHIT", {"HITId": hit_id, "ExpireAt": "9999-12-31T23:59:59-05:00"}),
        (
            "UpdateQualificationType",
            {"QualificationTypeId": qtype, "AutoGranted": True, "AutoGrantedValue": 2**64},
        ),
        (
            "AssociateQualificationWithWorker",
            {"QualificationTypeId": qtype, "WorkerId": world.worker_ids[0], "IntegerValue": 2**31},
        ),
        ("GetHIT", {"HITId": ["3X"]}),
        ("GetHIT", {"HITId": {"a": 1}}),
        ("ListHITs", {"MaxResults": 10**30}),
        ("CreateHIT", hit_params(MaxAssignments=2**64)),
        ("CreateHIT", hit_params(LifetimeInSeconds=2**64)),
        ("CreateHIT", hit_params(Title=["a list"])),
        ("NotifyWorkers", {"Subject": "s", "MessageText": "m", "WorkerIds": [["nested"]]}),
        # NUL is valid JSON; PostgreSQL text refused it with a 500 (found by the fuzzer on PostgreSQL).
        ("GetFileUploadURL", {"AssignmentId": world.entity_ids[1], "QuestionIdentifier": "\x00"}),
        ("CreateHIT", hit_params(Title="a\x00b")),
        ("UpdateQualificationType", {"QualificationTypeId": qtype, "Description": "\x00"}),
    ]
    for operation, params in cases:
        response = call(world.url, world.key, operation, params)
        assert response.status_code == 400, (operation, params, response.text[:300])
        assert_botocore_reads(response, operation)
    # The last second of year 9999 is a time the HIT can take, and be read back with.
    last = call(
        world.url, world.key, "UpdateExpirationForHIT", {"HITId": hit_id, "ExpireAt": 253_402_300_799}
    )
    assert last.status_code == 200, last.text
    for operation, params in [("GetHIT", {"HITId": hit_id}), ("ListHITs", {})]:
        assert call(world.url, world.key, operation, params).status_code == 200


def test_a_body_over_the_size_limit_is_a_json_error(world: World) -> None:
    body = b'{"HITId": "3X", "Question": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    response = signed_post(world.url, world.key, "GetHIT", body)
    assert response.status_code == 413
    assert response.headers["Content-Type"] == "application/x-amz-json-1.1"
    assert parsed(response, "GetHIT")["Error"]["Code"] == "SerializationException"
    assert response.headers["x-amzn-RequestId"]
