"""QualificationRequirements as MTurk checks them, through the real boto3 client."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.config import Config

from tests.conftest import boto3_client, new_requester
from tests.helpers import hit_params

LOCALE = "00000000000000000071"
PERCENT_APPROVED = "000000000000000000L0"
ADULT = "00000000000000000060"
INVALID = "AWS.MechanicalTurk.InvalidParameterValue"


def requirement(
    qid: str = PERCENT_APPROVED, comparator: str = "GreaterThan", **members: Any
) -> dict[str, Any]:
    if qid != LOCALE and comparator not in ("Exists", "DoesNotExist", "In", "NotIn"):
        members.setdefault("IntegerValues", [90])
    return {"QualificationTypeId": qid, "Comparator": comparator, **members}


REFUSED = {
    "unknown comparator": [requirement(comparator="Roughly")],
    "unknown ActionsGuarded": [requirement(ActionsGuarded="Bogus")],
    "Exists with IntegerValues": [requirement(comparator="Exists", IntegerValues=[1])],
    "DoesNotExist with IntegerValues": [requirement(comparator="DoesNotExist", IntegerValues=[1])],
    "In without values": [requirement(comparator="In")],
    "NotIn with an empty list": [requirement(comparator="NotIn", IntegerValues=[])],
    "In with 16 IntegerValues": [requirement(comparator="In", IntegerValues=list(range(16)))],
    "In with 31 LocaleValues": [
        requirement(LOCALE, "In", LocaleValues=[{"Country": "US", "Subdivision": f"A{i}"} for i in range(31)])
    ],
    "GreaterThan with two values": [requirement(IntegerValues=[1, 2])],
    "EqualTo without a value": [requirement(comparator="EqualTo", IntegerValues=[])],
    "GreaterThan on Locale": [requirement(LOCALE, "GreaterThan", LocaleValues=[{"Country": "US"}])],
    "Exists on Locale": [requirement(LOCALE, "Exists")],
    "IntegerValues on Locale": [requirement(LOCALE, "EqualTo", IntegerValues=[1])],
    "LocaleValues on another qualification": [
        requirement(ADULT, "EqualTo", IntegerValues=[], LocaleValues=[{"Country": "US"}])
    ],
    "lower-case Country": [requirement(LOCALE, "EqualTo", LocaleValues=[{"Country": "us"}])],
    "three-letter Country": [requirement(LOCALE, "EqualTo", LocaleValues=[{"Country": "USA"}])],
    "malformed Subdivision": [
        requirement(LOCALE, "EqualTo", LocaleValues=[{"Country": "US", "Subdivision": "Calif"}])
    ],
    "lower-case Subdivision": [
        requirement(LOCALE, "EqualTo", LocaleValues=[{"Country": "US", "Subdivision": "ca"}])
    ],
    "11 requirements": [requirement() for _ in range(11)],
}


@pytest.mark.parametrize("reqs", list(REFUSED.values()), ids=list(REFUSED))
def test_a_requirement_breaking_a_rule_is_refused(mturk, reqs: list[dict[str, Any]]) -> None:  # type: ignore[no-untyped-def]
    title = f"refused {uuid.uuid4().hex[:8]}"
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(Title=title, QualificationRequirements=reqs))
    assert caught.value.response["TurkErrorCode"] == INVALID
    with pytest.raises(mturk.exceptions.RequestError) as by_type:
        mturk.create_hit_type(
            Title=title,
            Description="d",
            Reward="0.10",
            AssignmentDurationInSeconds=600,
            QualificationRequirements=reqs,
        )
    assert by_type.value.response["TurkErrorCode"] == INVALID
    assert title not in {h["Title"] for h in mturk.list_hits()["HITs"]}


ACCEPTED = {
    "ten requirements": [requirement() for _ in range(10)],
    "Exists": [requirement(comparator="Exists")],
    "In with 15 IntegerValues": [requirement(comparator="In", IntegerValues=list(range(15)))],
    "Locale EqualTo with a Subdivision": [
        requirement(LOCALE, "EqualTo", LocaleValues=[{"Country": "US", "Subdivision": "CA"}])
    ],
    "Locale NotIn": [requirement(LOCALE, "NotIn", LocaleValues=[{"Country": "DE"}, {"Country": "FR"}])],
}


@pytest.mark.parametrize("reqs", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_requirements_within_the_rules_are_taken(mturk, reqs: list[dict[str, Any]]) -> None:  # type: ignore[no-untyped-def]
    hit = mturk.create_hit(**hit_params(QualificationRequirements=reqs))["HIT"]
    assert len(mturk.get_hit(HITId=hit["HITId"])["HIT"]["QualificationRequirements"]) == len(reqs)


def test_required_to_preview_means_preview_and_accept(mturk) -> None:  # type: ignore[no-untyped-def]
    created = mturk.create_hit(**hit_params(QualificationRequirements=[requirement(RequiredToPreview=True)]))
    for hit in (created["HIT"], mturk.get_hit(HITId=created["HIT"]["HITId"])["HIT"]):
        [req] = hit["QualificationRequirements"]
        assert req["ActionsGuarded"] == "PreviewAndAccept"
        assert req["RequiredToPreview"] is True


def test_actions_guarded_wins_over_required_to_preview(mturk) -> None:  # type: ignore[no-untyped-def]
    reqs = [requirement(RequiredToPreview=True, ActionsGuarded="Accept")]
    hit = mturk.create_hit(**hit_params(QualificationRequirements=reqs))["HIT"]
    [req] = mturk.get_hit(HITId=hit["HITId"])["HIT"]["QualificationRequirements"]
    assert req["ActionsGuarded"] == "Accept"
    assert "RequiredToPreview" not in req  # it no longer holds: such a worker may preview


def _qualification_type(mturk, status: str = "Active") -> str:  # type: ignore[no-untyped-def]
    return str(
        mturk.create_qualification_type(
            Name=f"skill {uuid.uuid4().hex[:8]}", Description="A skill.", QualificationTypeStatus=status
        )["QualificationType"]["QualificationTypeId"]
    )


def test_requirement_types_must_exist_and_be_active(mturk, live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    for qid in ("3NOSUCHQUALIFICATION0000000000", _qualification_type(mturk, "Inactive")):
        with pytest.raises(mturk.exceptions.RequestError) as caught:
            mturk.create_hit(**hit_params(QualificationRequirements=[requirement(qid, "Exists")]))
        assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.QualificationTypeDoesNotExist"
    active = _qualification_type(mturk)
    mturk.create_hit(**hit_params(QualificationRequirements=[requirement(active, "Exists")]))
    # Another requester may guard its HITs with this requester's type, as on MTurk.
    other = boto3_client(live_server.url, new_requester(market_sessions))
    other.create_hit(**hit_params(QualificationRequirements=[requirement(active, "Exists")]))
    mturk.update_qualification_type(QualificationTypeId=active, QualificationTypeStatus="Inactive")
    with pytest.raises(mturk.exceptions.RequestError) as deactivated:
        mturk.create_hit(**hit_params(QualificationRequirements=[requirement(active, "Exists")]))
    assert deactivated.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.QualificationTypeDoesNotExist"


QUESTION_FORM_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionForm.xsd"
)
TEST_FORM = (
    f'<QuestionForm xmlns="{QUESTION_FORM_NS}"><Question><QuestionIdentifier>q</QuestionIdentifier>'
    "<QuestionContent><Text>Say yes.</Text></QuestionContent>"
    "<AnswerSpecification><FreeTextAnswer/></AnswerSpecification></Question></QuestionForm>"
)
QTYPE_REFUSED = {
    "negative TestDurationInSeconds": {"Test": TEST_FORM, "TestDurationInSeconds": -1},
    "non-integer TestDurationInSeconds": {"Test": TEST_FORM, "TestDurationInSeconds": "soon"},
    "fractional TestDurationInSeconds": {"Test": TEST_FORM, "TestDurationInSeconds": 60.5},
    "a Test without TestDurationInSeconds": {"Test": TEST_FORM},
    "negative RetryDelayInSeconds": {"RetryDelayInSeconds": -5},
    "non-integer RetryDelayInSeconds": {"RetryDelayInSeconds": "1h"},
    "non-integer AutoGrantedValue": {"AutoGranted": True, "AutoGrantedValue": "90"},
    "boolean AutoGrantedValue": {"AutoGranted": True, "AutoGrantedValue": True},
}


@pytest.fixture
def unchecked(live_server, requester):  # type: ignore[no-untyped-def]
    """The boto3 client without botocore's own type checks, so a wrongly typed member reaches the server."""
    return boto3_client(live_server.url, requester, Config(parameter_validation=False))


@pytest.mark.parametrize("members", list(QTYPE_REFUSED.values()), ids=list(QTYPE_REFUSED))
def test_qualification_type_settings_are_checked_when_created(unchecked, members: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    name = f"checked {uuid.uuid4().hex[:8]}"
    with pytest.raises(unchecked.exceptions.RequestError) as caught:
        unchecked.create_qualification_type(
            Name=name, Description="d", QualificationTypeStatus="Active", **members
        )
    assert caught.value.response["TurkErrorCode"] == INVALID
    listed = unchecked.list_qualification_types(MustBeRequestable=False, MustBeOwnedByCaller=True)
    assert name not in {q["Name"] for q in listed["QualificationTypes"]}
    # UpdateQualificationType refuses the same values.
    qid = _qualification_type(unchecked)
    with pytest.raises(unchecked.exceptions.RequestError) as on_update:
        unchecked.update_qualification_type(QualificationTypeId=qid, **members)
    assert on_update.value.response["TurkErrorCode"] == INVALID


def test_qualification_type_settings_within_the_rules_are_stored(mturk) -> None:  # type: ignore[no-untyped-def]
    made = mturk.create_qualification_type(
        Name=f"timed {uuid.uuid4().hex[:8]}",
        Description="d",
        QualificationTypeStatus="Active",
        Test=TEST_FORM,
        TestDurationInSeconds=300,
        RetryDelayInSeconds=0,
    )["QualificationType"]
    assert (made["TestDurationInSeconds"], made["RetryDelayInSeconds"]) == (300, 0)
    auto = mturk.create_qualification_type(
        Name=f"auto {uuid.uuid4().hex[:8]}",
        Description="d",
        QualificationTypeStatus="Active",
        AutoGranted=True,
        AutoGrantedValue=-3,  # any integer is a score
    )["QualificationType"]
    assert auto["AutoGrantedValue"] == -3


ANSWER_KEY_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd"
SELECTION_FORM = (
    f'<QuestionForm xmlns="{QUESTION_FORM_NS}"><Question><QuestionIdentifier>q</QuestionIdentifier>'
    "<QuestionContent><Text>Pick yes.</Text></QuestionContent><AnswerSpecification><SelectionAnswer>"
    "<Selections><Selection><SelectionIdentifier>yes</SelectionIdentifier><Text>Yes</Text></Selection>"
    "<Selection><SelectionIdentifier>no</SelectionIdentifier><Text>No</Text></Selection></Selections>"
    "</SelectionAnswer></AnswerSpecification></Question></QuestionForm>"
)
ANSWER_KEY = (
    f'<AnswerKey xmlns="{ANSWER_KEY_NS}"><Question><QuestionIdentifier>q</QuestionIdentifier>'
    "<AnswerOption><SelectionIdentifier>yes</SelectionIdentifier><AnswerScore>1</AnswerScore>"
    "</AnswerOption></Question></AnswerKey>"
)


def _keyed_type(mturk) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    name = f"keyed {uuid.uuid4().hex[:8]}"
    made = mturk.create_qualification_type(
        Name=name,
        Description="A test with a key.",
        QualificationTypeStatus="Active",
        Test=SELECTION_FORM,
        AnswerKey=ANSWER_KEY,
        TestDurationInSeconds=300,
    )["QualificationType"]
    assert made["AnswerKey"] == ANSWER_KEY
    return made["QualificationTypeId"], name


def test_only_the_owner_gets_the_answer_key(mturk, live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    qid, _ = _keyed_type(mturk)
    other = boto3_client(live_server.url, new_requester(market_sessions))
    seen = other.get_qualification_type(QualificationTypeId=qid)["QualificationType"]
    assert "AnswerKey" not in seen
    assert seen["Test"] == SELECTION_FORM  # the test itself is public: workers take it
    assert (
        mturk.get_qualification_type(QualificationTypeId=qid)["QualificationType"]["AnswerKey"] == ANSWER_KEY
    )


def test_listing_shows_the_answer_key_only_to_the_owner(mturk, live_server, market_sessions) -> None:  # type: ignore[no-untyped-def]
    qid, name = _keyed_type(mturk)
    other = boto3_client(live_server.url, new_requester(market_sessions))
    [listed] = other.list_qualification_types(MustBeRequestable=True, Query=name)["QualificationTypes"]
    assert listed["QualificationTypeId"] == qid
    assert "AnswerKey" not in listed


NOT_CURRENCY = [
    "1e-2",
    " 0.25",
    "0.25 ",
    "0.251",
    "-0.05",
    "$0.05",
    "0,05",
    "",
    ".5",
    "NaN",
    "\uff10.\uff10\uff15",
]


@pytest.mark.parametrize("reward", NOT_CURRENCY)
def test_a_reward_that_is_not_a_currency_string_is_refused(mturk, reward: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(Reward=reward))
    assert caught.value.response["TurkErrorCode"] == INVALID
    assert "Reward" in caught.value.response["Error"]["Message"]


@pytest.mark.parametrize(("reward", "stored"), [("0.05", "0.05"), ("1", "1.00"), ("12.5", "12.50")])
def test_currency_strings_are_taken_and_answered_with_two_decimals(mturk, reward: str, stored: str) -> None:  # type: ignore[no-untyped-def]
    assert mturk.create_hit(**hit_params(Reward=reward))["HIT"]["Reward"] == stored
