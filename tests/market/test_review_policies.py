"""Review policies through boto3: known answers and plurality decide, and the report says what happened."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hits.db import session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.questions import answers_to_xml
from tests.helpers import hit_params


def param(key: str, *values: str) -> dict:
    return {"Key": key, "Values": list(values)}


def work(market_sessions, hit_id: str, name: str, answers: list[tuple[str, str]]) -> str:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, name, "a-long-password")
        assignment = assignment_ops.accept(session, worker, hit_id)
        assignment_ops.submit(session, worker, assignment.id, answers_to_xml(answers))
        return assignment.id


def results(mturk, hit_id: str, level: str) -> tuple[list[dict], list[dict]]:  # type: ignore[no-untyped-def]
    report = mturk.list_review_policy_results_for_hit(
        HITId=hit_id, PolicyLevels=[level], RetrieveActions=True, RetrieveResults=True
    )[f"{level}ReviewReport"]
    return report.get("ReviewResults", []), report.get("ReviewActions", [])


def test_score_my_known_answers_approves_rejects_and_extends(mturk, market_sessions) -> None:
    policy = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": "colour", "Values": ["blue"]}]},
            param("ApproveIfKnownAnswerScoreIsAtLeast", "100"),
            param("ApproveReason", "Right on the known question."),
            param("RejectIfKnownAnswerScoreIsLessThan", "100"),
            param("RejectReason", "The known question was answered wrongly."),
            param("ExtendIfKnownAnswerScoreIsLessThan", "100"),
            param("ExtendMaximumAssignments", "3"),
        ],
    }
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=2, Reward="0.50", AssignmentReviewPolicy=policy))[
        "HIT"
    ]["HITId"]
    before = Decimal(mturk.get_account_balance()["AvailableBalance"])
    good = work(
        market_sessions, hit_id, f"smka-good-{hit_id[:6]}", [("colour", "Blue"), ("free", "anything")]
    )
    bad = work(market_sessions, hit_id, f"smka-bad-{hit_id[:6]}", [("colour", "green"), ("free", "anything")])
    assert mturk.get_assignment(AssignmentId=good)["Assignment"]["AssignmentStatus"] == "Approved"
    rejected = mturk.get_assignment(AssignmentId=bad)["Assignment"]
    assert rejected["AssignmentStatus"] == "Rejected"
    assert rejected["RequesterFeedback"] == "The known question was answered wrongly."
    assert before - Decimal(mturk.get_account_balance()["AvailableBalance"]) == Decimal(
        "0.60"
    )  # one reward + fee
    hit = mturk.get_hit(HITId=hit_id)["HIT"]
    assert hit["MaxAssignments"] == 3 and hit["NumberOfAssignmentsAvailable"] == 1  # extended for the bad one
    found, done = results(mturk, hit_id, "Assignment")
    scores = {r["SubjectId"]: r["Value"] for r in found if r["Key"] == "KnownAnswerScore"}
    assert scores == {good: "100", bad: "0"}
    assert [(a["ActionName"], a["Status"]) for a in done] == [
        ("approve", "SUCCEEDED"),
        ("reject", "SUCCEEDED"),
        ("extend", "SUCCEEDED"),
    ]
    assert done[0]["TargetId"] == good and done[2]["TargetType"] == "HIT"
    listed = mturk.list_review_policy_results_for_hit(HITId=hit_id)
    assert listed["AssignmentReviewPolicy"]["PolicyName"] == "ScoreMyKnownAnswers/2011-09-01"
    assert listed["HITReviewReport"] == {"ReviewResults": [], "ReviewActions": []}


def test_simple_plurality_judges_workers_by_agreement_when_the_hit_is_reviewable(
    mturk, market_sessions
) -> None:
    policy = {
        "PolicyName": "SimplePlurality/2011-09-01",
        "Parameters": [
            param("QuestionIds", "shape", "count"),
            param("QuestionAgreementThreshold", "60"),
            param("ApproveIfWorkerAgreementScoreIsAtLeast", "100"),
            param("RejectIfWorkerAgreementScoreIsLessThan", "100"),
            param("RejectReason", "Your answers differed from the others'."),
        ],
    }
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=3, HITReviewPolicy=policy))["HIT"]["HITId"]
    answers = [
        [("shape", "circle"), ("count", "2")],
        [("shape", "circle"), ("count", "2")],
        [("shape", "square"), ("count", "2")],
    ]
    ids = []
    for n, given in enumerate(answers):
        ids.append(work(market_sessions, hit_id, f"plural-{n}-{hit_id[:6]}", given))
        found, _ = results(mturk, hit_id, "HIT")
        assert bool(found) == (n == 2)  # evaluated once, when all three are in
    statuses = [mturk.get_assignment(AssignmentId=i)["Assignment"]["AssignmentStatus"] for i in ids]
    assert statuses == ["Approved", "Approved", "Rejected"]
    found, done = results(mturk, hit_id, "HIT")
    by_key = {(r.get("QuestionId"), r["Key"], r["SubjectId"]): r["Value"] for r in found}
    assert by_key[("shape", "PluralityAnswer", hit_id)] == "circle"
    assert by_key[("shape", "PluralityAnswerPercent", hit_id)] == "67"
    assert by_key[(None, "HITAgreementScore", hit_id)] == "100"
    assert by_key[(None, "WorkerAgreementScore", ids[2])] == "50"
    assert sorted(a["ActionName"] for a in done) == ["approve", "approve", "reject"]


@pytest.mark.parametrize(
    "policy",
    [
        {"PolicyName": "ScoreMyKnownAnswers/2011-09-01", "Parameters": [param("ApproveReason", "x")]},
        {"PolicyName": "ScoreMyKnownAnswers/2011-09-01", "Parameters": [param("Nonsense", "1")]},
        {"PolicyName": "SimplePlurality/2011-09-01", "Parameters": [param("QuestionIds", "q")]},
        {"PolicyName": "Made/Up", "Parameters": []},
    ],
)
def test_policies_are_validated(mturk, policy: dict) -> None:
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(AssignmentReviewPolicy=policy))
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidParameterValue"


def test_plurality_can_disregard_work_that_failed_the_known_answers(mturk, market_sessions) -> None:
    known = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [{"Key": "AnswerKey", "MapEntries": [{"Key": "check", "Values": ["yes"]}]}],
    }
    plurality = {
        "PolicyName": "SimplePlurality/2011-09-01",
        "Parameters": [
            param("QuestionIds", "shape"),
            param("QuestionAgreementThreshold", "100"),
            param("DisregardAssignmentIfKnownAnswerScoreIsLessThan", "100"),
        ],
    }
    hit_id = mturk.create_hit(
        **hit_params(MaxAssignments=3, AssignmentReviewPolicy=known, HITReviewPolicy=plurality)
    )["HIT"]["HITId"]
    for n, (check, shape) in enumerate([("yes", "circle"), ("yes", "circle"), ("no", "square")]):
        work(market_sessions, hit_id, f"disregard-{n}-{hit_id[:6]}", [("check", check), ("shape", shape)])
    found, _ = results(mturk, hit_id, "HIT")
    by_key = {r["Key"]: r["Value"] for r in found if r.get("QuestionId") == "shape"}
    # The third worker failed the known answer: without them the other two agree fully.
    assert by_key == {
        "PluralityAnswer": "circle",
        "PluralityAnswerPercent": "100",
        "AgreementReached": "true",
    }
