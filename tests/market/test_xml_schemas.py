"""Requesters' documents are checked against MTurk's schemas; what the marketplace emits validates too."""

from __future__ import annotations

import pytest

from hits.wire.documents import answers_to_xml
from hits.wire.xml_schemas import SchemaViolation, validate_answers, validate_question
from tests.helpers import EXTERNAL_QUESTION, hit_params

AK_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd"
QF_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionForm.xsd"
EQ_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
TEST = (
    f'<QuestionForm xmlns="{QF_NS}"><Question><QuestionIdentifier>q1</QuestionIdentifier>'
    "<QuestionContent><Text>Pick one.</Text></QuestionContent><AnswerSpecification>"
    "<SelectionAnswer><Selections><Selection><SelectionIdentifier>a</SelectionIdentifier><Text>A</Text>"
    "</Selection><Selection><SelectionIdentifier>b</SelectionIdentifier><Text>B</Text></Selection>"
    "</Selections></SelectionAnswer></AnswerSpecification></Question></QuestionForm>"
)
KEY = (
    f'<AnswerKey xmlns="{AK_NS}"><Question><QuestionIdentifier>q1</QuestionIdentifier>'
    "<AnswerOption><SelectionIdentifier>a</SelectionIdentifier><AnswerScore>1</AnswerScore>"
    "</AnswerOption></Question></AnswerKey>"
)


def test_emitted_answers_validate_even_with_markup_in_them() -> None:
    validate_answers(answers_to_xml([("caption", 'Two <cats> & a "dog"'), ("empty", "")]))


def test_validation_names_the_schema_and_the_place() -> None:
    with pytest.raises(SchemaViolation, match="ExternalQuestion-2006-07-14.xsd"):
        validate_question(
            EQ_NS, f'<ExternalQuestion xmlns="{EQ_NS}"><FrameHeight>1</FrameHeight></ExternalQuestion>'
        )


@pytest.mark.parametrize(
    "question",
    [
        # No ExternalURL; FrameHeight not a number; an element the schema does not know.
        f'<ExternalQuestion xmlns="{EQ_NS}"><FrameHeight>400</FrameHeight></ExternalQuestion>',
        EXTERNAL_QUESTION.format(url="https://example.org/t").replace("600", "tall"),
        EXTERNAL_QUESTION.format(url="https://example.org/t").replace(
            "</ExternalQuestion>", "<X/></ExternalQuestion>"
        ),
        TEST.replace("<QuestionIdentifier>q1</QuestionIdentifier>", ""),
    ],
)
def test_create_hit_refuses_documents_the_schema_refuses(mturk, question: str) -> None:
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(Question=question))
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidParameterValue"


def test_qualification_test_and_answer_key_are_validated(mturk) -> None:
    common = {
        "Description": "Pick the right one.",
        "QualificationTypeStatus": "Active",
        "TestDurationInSeconds": 300,
    }
    made = mturk.create_qualification_type(Name="schema-valid-test", Test=TEST, AnswerKey=KEY, **common)
    assert made["QualificationType"]["QualificationTypeId"]
    bad_key = KEY.replace("<AnswerScore>1</AnswerScore>", "<AnswerScore>lots</AnswerScore>")
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_qualification_type(Name="schema-bad-key", Test=TEST, AnswerKey=bad_key, **common)
    assert "AnswerKey" in caught.value.response["Error"]["Message"]
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_qualification_type(
            Name="schema-bad-test", Test=TEST.replace("QuestionForm", "QuestionFarm"), AnswerKey=KEY, **common
        )
    assert "Test" in caught.value.response["Error"]["Message"]
    with pytest.raises(mturk.exceptions.RequestError):
        mturk.create_qualification_type(Name="schema-huge", Test=TEST + " " * 70_000, **common)
