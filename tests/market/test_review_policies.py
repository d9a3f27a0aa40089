"""Review policies through boto3: known answers and plurality decide, and the report says what happened."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hits.db import session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.models import ReviewRecord
from hits.wire.documents import answers_to_xml
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
        market_sessions, hit_id, f"smka-good-{hit_id[:6]}", [("colour", " blue "), ("free", "anything")]
    )
    # Case counts, as on MTurk: "Blue" is not "blue".
    bad = work(market_sessions, hit_id, f"smka-bad-{hit_id[:6]}", [("colour", "Blue"), ("free", "anything")])
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
        ("approve", "Succeeded"),
        ("reject", "Succeeded"),
        ("extend", "Succeeded"),
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
        {
            "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
            "Parameters": [
                {"Key": "AnswerKey", "MapEntries": [{"Key": "q", "Values": ["a"]}]},
                param("ApproveIfKnownAnswerScoreIsAtLeast", "102"),
            ],
        },
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
            param("QuestionAgreementThreshold", "99"),
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


def test_hit_policy_needs_its_agreement_threshold(mturk) -> None:
    policy = {"PolicyName": "SimplePlurality/2011-09-01", "Parameters": [param("QuestionIds", "q")]}
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.create_hit(**hit_params(HITReviewPolicy=policy))
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.InvalidParameterValue"


def test_known_answers_must_match_every_value_exactly(mturk, market_sessions) -> None:
    policy = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {
                "Key": "AnswerKey",
                "MapEntries": [
                    {"Key": "animals", "Values": ["cat", "dog"]},  # both must be chosen
                    {"Key": "blank", "Values": []},  # must be left empty
                ],
            }
        ],
    }
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=3, AssignmentReviewPolicy=policy))["HIT"]["HITId"]
    both = work(market_sessions, hit_id, f"both-{hit_id[:6]}", [("animals", "dog"), ("animals", "cat")])
    one = work(market_sessions, hit_id, f"one-{hit_id[:6]}", [("animals", "cat"), ("blank", "x")])
    found, done = results(mturk, hit_id, "Assignment")
    correct = {
        (r["SubjectId"], r["QuestionId"]): r["Value"] for r in found if r["Key"] == "KnownAnswerCorrect"
    }
    assert correct == {
        (both, "animals"): "true",
        (both, "blank"): "true",
        (one, "animals"): "false",  # cat alone is not cat and dog
        (one, "blank"): "false",
    }
    scores = {r["SubjectId"]: r["Value"] for r in found if r["Key"] == "KnownAnswerScore"}
    assert scores == {both: "100", one: "0"}
    assert done == []  # no thresholds given: scored, nothing done
    for assignment_id in (both, one):
        assert (
            mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]["AssignmentStatus"] == "Submitted"
        )


def test_agreement_must_exceed_the_threshold(mturk, market_sessions) -> None:
    policy = {
        "PolicyName": "SimplePlurality/2011-09-01",
        "Parameters": [
            param("QuestionIds", "shape,colour"),  # the older comma-separated form
            param("QuestionAgreementThreshold", "50"),
        ],
    }
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=2, HITReviewPolicy=policy))["HIT"]["HITId"]
    work(market_sessions, hit_id, f"half-a-{hit_id[:6]}", [("shape", "circle"), ("colour", " red")])
    work(market_sessions, hit_id, f"half-b-{hit_id[:6]}", [("shape", "square"), ("colour", "red ")])
    found, _ = results(mturk, hit_id, "HIT")
    reached = {r["QuestionId"]: r["Value"] for r in found if r["Key"] == "AgreementReached"}
    # Half agreeing on shape is not more than 50; colour agrees once the spaces around are trimmed.
    assert reached == {"shape": "false", "colour": "true"}
    assert {r["Key"]: r["Value"] for r in found if "QuestionId" not in r and r["SubjectId"] == hit_id} == {
        "HITAgreementScore": "50"
    }


def test_review_results_are_paged(mturk, market_sessions) -> None:
    policy = {
        "PolicyName": "ScoreMyKnownAnswers/2011-09-01",
        "Parameters": [
            {"Key": "AnswerKey", "MapEntries": [{"Key": f"q{n}", "Values": ["yes"]} for n in range(3)]},
            param("ApproveIfKnownAnswerScoreIsAtLeast", "0"),
        ],
    }
    hit_id = mturk.create_hit(**hit_params(MaxAssignments=2, AssignmentReviewPolicy=policy))["HIT"]["HITId"]
    for n in range(2):
        work(market_sessions, hit_id, f"paged-{n}-{hit_id[:6]}", [(f"q{i}", "yes") for i in range(3)])
    whole = mturk.list_review_policy_results_for_hit(HITId=hit_id, PolicyLevels=["Assignment"])
    assert whole["NextToken"]  # as on MTurk: a page with rows has a token, the end is an empty page
    everything = whole["AssignmentReviewReport"]
    assert len(everything["ReviewResults"]) == 8 and len(everything["ReviewActions"]) == 2
    pages, seen, token = [], [], None
    while True:
        kwargs: dict[str, str] = {"NextToken": token} if token else {}
        page = mturk.list_review_policy_results_for_hit(
            HITId=hit_id, PolicyLevels=["Assignment"], MaxResults=3, **kwargs
        )
        assert page["AssignmentReviewPolicy"]["PolicyName"] == "ScoreMyKnownAnswers/2011-09-01"
        report = page["AssignmentReviewReport"]
        pages.append(len(report["ReviewResults"]) + len(report["ReviewActions"]))
        seen += report["ReviewResults"] + report["ReviewActions"]
        token = page.get("NextToken")
        if token is None:
            break
        assert len(pages) < 10
    assert pages == [3, 3, 3, 1, 0]
    key = repr  # every record once across the pages, none twice
    assert sorted(map(key, seen)) == sorted(
        map(key, everything["ReviewResults"] + everything["ReviewActions"])
    )


def test_actions_recorded_in_the_old_spelling_read_as_the_service_model_spells_them(
    mturk, market_sessions
) -> None:
    hit_id = mturk.create_hit(**hit_params())["HIT"]["HITId"]
    old = {"ActionId": "OLD", "ActionName": "approve", "TargetId": hit_id, "TargetType": "HIT"}
    with session_scope(market_sessions) as session:  # rows as they were written before the fix
        for status in ("SUCCEEDED", "FAILED"):
            session.add(
                ReviewRecord(hit_id=hit_id, level="HIT", kind="action", data={**old, "Status": status})
            )
    _, done = results(mturk, hit_id, "HIT")
    assert [a["Status"] for a in done] == ["Succeeded", "Failed"]
