"""MTurk export: QuestionForm and AnswerKey validate offline; AnswerKey grading matches ours."""

from __future__ import annotations

import random
import socket
from itertools import product

import pytest
import xmlschema

from qualification import mturk
from qualification.assembly import assemble
from qualification.bank import Bank
from qualification.grading import grade
from qualification.mturk import (
    answer_key,
    grade_answers,
    question_form,
    selection_answers_xml,
    validate_answer_key,
    validate_question_form,
)

MEDIA = "https://hitforge.example/qualification/media"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Schemas load from scratch with every socket connection refused."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("schema validation tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    mturk.schema.cache_clear()


def test_exported_test_and_key_validate_offline(bank: Bank, no_network: None) -> None:
    paper = assemble(bank, 0)
    test = question_form(bank, paper, MEDIA)
    validate_question_form(test)
    validate_answer_key(answer_key(bank, paper))
    assert test.count("<Question>") == len(paper.items)
    assert f"{MEDIA}/" in test
    for entry in paper.items:
        assert f"<QuestionIdentifier>{entry.item_id}</QuestionIdentifier>" in test


def test_the_test_xml_holds_no_answers(bank: Bank) -> None:
    paper = assemble(bank, 4)
    test = question_form(bank, paper, MEDIA)
    assert "AnswerKey" not in test and "AnswerScore" not in test
    for entry in paper.items:
        explanation = bank.items[entry.item_id].explanation
        assert explanation is None or explanation not in test


def test_invalid_documents_are_rejected(bank: Bank) -> None:
    paper = assemble(bank, 0)
    test = question_form(bank, paper, MEDIA)
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        validate_question_form(
            test.replace("<IsRequired>true</IsRequired>", "<IsRequired>maybe</IsRequired>", 1)
        )
    with pytest.raises(xmlschema.XMLSchemaValidationError):  # FormattedContent outside the XHTML subset
        validate_question_form(test.replace("<p>", "<script>alert(1)</script><p>", 1))
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        validate_answer_key(answer_key(bank, paper).replace("<AnswerScore>1<", "<AnswerScore>one<", 1))


def test_answer_key_grading_matches_the_server_grader(bank: Bank) -> None:
    rng = random.Random(5)
    for seed in range(60):
        paper = assemble(bank, seed)
        key = answer_key(bank, paper)
        skill = rng.random()
        answers = {}
        for entry in paper.items:
            if rng.random() < 0.05:
                continue  # left unanswered
            right = bank.items[entry.item_id].answer
            answers[entry.item_id] = right if rng.random() < skill else rng.choice(entry.choice_order)
        ours = grade(bank, paper, answers).value
        assert grade_answers(key, selection_answers_xml(answers)) == ours, seed


def test_free_text_answers_grade_like_selections(bank: Bank) -> None:
    from hits.wire.documents import answers_to_xml

    paper = assemble(bank, 8)
    answers = {e.item_id: bank.items[e.item_id].answer for e in paper.items[:27]}
    expected = grade(bank, paper, answers).value
    assert grade_answers(answer_key(bank, paper), answers_to_xml(list(answers.items()))) == expected == 96


def test_answer_key_semantics_for_other_mappings() -> None:
    ns = mturk.AK_NS
    key = f"""<AnswerKey xmlns="{ns}">
      <Question><QuestionIdentifier>q1</QuestionIdentifier>
        <AnswerOption><SelectionIdentifier>a</SelectionIdentifier><SelectionIdentifier>b</SelectionIdentifier>
          <AnswerScore>10</AnswerScore></AnswerOption>
        <AnswerOption><SelectionIdentifier>a</SelectionIdentifier><AnswerScore>4</AnswerScore></AnswerOption>
        <DefaultScore>-1</DefaultScore></Question>
      <Question><QuestionIdentifier>q2</QuestionIdentifier>
        <AnswerOption><SelectionIdentifier>c</SelectionIdentifier><AnswerScore>3</AnswerScore></AnswerOption>
      </Question>
      {{mapping}}
    </AnswerKey>"""
    validate_answer_key(key.replace("{mapping}", ""))

    def answers(q1: list[str], q2: list[str]) -> str:
        parts = "".join(
            f"<Answer><QuestionIdentifier>{q}</QuestionIdentifier>"
            + "".join(f"<SelectionIdentifier>{s}</SelectionIdentifier>" for s in sel)
            + "</Answer>"
            for q, sel in (("q1", q1), ("q2", q2))
        )
        return f'<QuestionFormAnswers xmlns="{mturk.QFA_NS}">{parts}</QuestionFormAnswers>'

    plain = key.replace("{mapping}", "")
    assert grade_answers(plain, answers(["b", "a"], ["c"])) == 13  # must select exactly {a, b}
    assert grade_answers(plain, answers(["a"], ["d"])) == 4
    assert grade_answers(plain, answers(["b"], [])) == -1
    scaled = key.replace(
        "{mapping}",
        "<QualificationValueMapping><ScaleMapping><SummedScoreMultiplier>2.5"
        "</SummedScoreMultiplier></ScaleMapping></QualificationValueMapping>",
    )
    validate_answer_key(scaled)
    assert grade_answers(scaled, answers(["a"], ["c"])) == 17
    ranged = key.replace(
        "{mapping}",
        "<QualificationValueMapping><RangeMapping><SummedScoreRange><InclusiveLowerBound>0"
        "</InclusiveLowerBound><InclusiveUpperBound>10</InclusiveUpperBound><QualificationValue>1"
        "</QualificationValue></SummedScoreRange><OutOfRangeQualificationValue>9"
        "</OutOfRangeQualificationValue></RangeMapping></QualificationValueMapping>",
    )
    validate_answer_key(ranged)
    assert grade_answers(ranged, answers(["a"], ["c"])) == 1
    assert grade_answers(ranged, answers(["a", "b"], ["c"])) == 9


def test_a_failed_section_earns_value_0_from_the_exported_key_too(bank: Bank) -> None:
    """Issue 15, item 9: spelling and grammar all right, judgment 3 of 8 (needs 7): 82, not passed."""
    for seed in range(20):
        paper = assemble(bank, seed)
        answers = {e.item_id: bank.items[e.item_id].answer for e in paper.items}
        for entry in [e for e in paper.items if e.section == "judgment"][:5]:
            answers[entry.item_id] = next(c for c in entry.choice_order if c != answers[entry.item_id])
        result = grade(bank, paper, answers)
        assert (result.score, result.passed, result.value) == (82, False, 0)
        key = answer_key(bank, paper)
        validate_answer_key(key)
        assert grade_answers(key, selection_answers_xml(answers)) == 0
        assert len(key.encode()) < 65535  # MTurk's limit on an AnswerKey


def test_every_possible_sum_of_the_key_decodes_to_the_graders_value(bank: Bank) -> None:
    """Exhaustive: each count per section (11 x 11 x 9 of them) gets the grader's value from the key."""
    paper = assemble(bank, 4)
    key = answer_key(bank, paper)
    by_section = {s.id: [e for e in paper.items if e.section == s.id] for s in bank.sections}
    spelling, grammar, judgment = (len(by_section[s.id]) for s in bank.sections)
    for counts in product(range(spelling + 1), range(grammar + 1), range(judgment + 1)):
        answers = {}
        for section, count in zip(bank.sections, counts, strict=True):
            for i, entry in enumerate(by_section[section.id]):
                right = bank.items[entry.item_id].answer
                answers[entry.item_id] = (
                    right if i < count else next(c for c in entry.choice_order if c != right)
                )
        expected = grade(bank, paper, answers).value
        assert grade_answers(key, selection_answers_xml(answers)) == expected, counts
