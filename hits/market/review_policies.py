"""MTurk's review policies: ScoreMyKnownAnswers/2011-09-01 and SimplePlurality/2011-09-01.

An AssignmentReviewPolicy (ScoreMyKnownAnswers) is evaluated when an
assignment is submitted: the answers to the questions of its AnswerKey are
scored as a percentage, and the assignment is approved, rejected or the HIT
extended as its parameters say. A HITReviewPolicy (SimplePlurality) is
evaluated once, when the HIT becomes reviewable: per question, the plurality
answer and how many agree with it; per worker, the share of questions where
they agreed; the HIT's agreement score is the share of questions that reached
the threshold. Every finding is a ReviewResultDetail and every step taken a
ReviewActionDetail, kept for ListReviewPolicyResultsForHIT.

A policy only decides: it returns :class:`PolicyAction` values, and
:func:`hits.market.hit_ops.carry_out_policy_actions` carries them out through
the ordinary decision code, so money moves exactly as with ApproveAssignment.
This module imports none of the assignment or HIT code that calls it.

Marketplace side, product.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from lxml import etree
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market.errors import RequestError, invalid
from hits.market.missing_rows import MissingRows
from hits.market.models import HIT, Assignment, HITReviewPolicies, ReviewRecord

SCORE_KNOWN = "ScoreMyKnownAnswers/2011-09-01"
PLURALITY = "SimplePlurality/2011-09-01"
KEYS = {
    SCORE_KNOWN: {
        "AnswerKey",
        "ApproveIfKnownAnswerScoreIsAtLeast",
        "ApproveReason",
        "RejectIfKnownAnswerScoreIsLessThan",
        "RejectReason",
        "ExtendIfKnownAnswerScoreIsLessThan",
        "ExtendMaximumAssignments",
        "ExtendMinimumTimeInSeconds",
    },
    PLURALITY: {
        "QuestionIds",
        "QuestionIDs",
        "QuestionAgreementThreshold",
        "DisregardAssignmentIfRejected",
        "DisregardAssignmentIfKnownAnswerScoreIsLessThan",
        "ExtendIfHITAgreementScoreIsLessThan",
        "ExtendMaximumAssignments",
        "ExtendMinimumTimeInSeconds",
        "ApproveIfWorkerAgreementScoreIsAtLeast",
        "ApproveReason",
        "RejectIfWorkerAgreementScoreIsLessThan",
        "RejectReason",
    },
}
LEVEL_OF = {SCORE_KNOWN: "Assignment", PLURALITY: "HIT"}
PERCENT_KEYS = {
    k for keys in KEYS.values() for k in keys if "Score" in k or k == "QuestionAgreementThreshold"
}
QFA_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd"


def validate_policy(policy: Any, member: str, expected: str) -> dict[str, Any]:
    """Check a ReviewPolicy structure; return it as {name, params: {key: values or map}}."""
    if not isinstance(policy, dict) or policy.get("PolicyName") != expected:
        raise invalid(f"{member} must name the policy {expected}.")
    params: dict[str, Any] = {}
    for parameter in policy.get("Parameters") or []:
        key = parameter.get("Key") if isinstance(parameter, dict) else None
        if key not in KEYS[expected]:
            raise invalid(f"{member}: {key!r} is not a parameter of {expected}.")
        if key == "AnswerKey":
            entries = parameter.get("MapEntries") or []
            # A question's known answer is zero or more values (none: the worker must leave it blank).
            if not entries or any(not isinstance(e, dict) or not e.get("Key") for e in entries):
                raise invalid(f"{member}: AnswerKey needs MapEntries of a question id and its answer.")
            params[key] = {e["Key"]: [str(v) for v in e.get("Values") or []] for e in entries}
            continue
        values = [str(v) for v in parameter.get("Values") or []]
        if not values:
            raise invalid(f"{member}: {key} needs a value.")
        if key in PERCENT_KEYS or key in ("ExtendMaximumAssignments", "ExtendMinimumTimeInSeconds"):
            try:
                number = int(values[0])
            except ValueError as exc:
                raise invalid(f"{member}: {key} must be a whole number.") from exc
            upper = 101 if key in PERCENT_KEYS else (25 if key == "ExtendMaximumAssignments" else 31_536_000)
            if not 0 <= number <= upper:
                raise invalid(f"{member}: {key} must be between 0 and {upper}.")
        params["QuestionIds" if key == "QuestionIDs" else key] = values
    if expected == SCORE_KNOWN and "AnswerKey" not in params:
        raise invalid(f"{member}: {SCORE_KNOWN} needs an AnswerKey.")
    if expected == PLURALITY:
        if "QuestionIds" not in params or "QuestionAgreementThreshold" not in params:
            raise invalid(f"{member}: {PLURALITY} needs QuestionIds and QuestionAgreementThreshold.")
        # The older documentation gives QuestionIds as one comma-separated value: take either form.
        params["QuestionIds"] = [q.strip() for v in params["QuestionIds"] for q in v.split(",") if q.strip()]
    return {"name": expected, "params": params, "wire": policy}


def validate_policies(params: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The AssignmentReviewPolicy and HITReviewPolicy of a CreateHIT request, validated (or None)."""
    assignment_policy = params.get("AssignmentReviewPolicy")
    hit_policy = params.get("HITReviewPolicy")
    return (
        validate_policy(assignment_policy, "AssignmentReviewPolicy", SCORE_KNOWN)
        if assignment_policy is not None
        else None,
        validate_policy(hit_policy, "HITReviewPolicy", PLURALITY) if hit_policy is not None else None,
    )


def attach(
    session: Session, hit: HIT, assignment_policy: dict[str, Any] | None, hit_policy: dict[str, Any] | None
) -> None:
    """Store the validated policies given to CreateHIT (see :func:`validate_policies`)."""
    if assignment_policy is None and hit_policy is None:
        return
    _NO_POLICIES.forget(session, hit.id)
    session.add(HITReviewPolicies(hit_id=hit.id, assignment_policy=assignment_policy, hit_policy=hit_policy))
    session.flush()


#: HITs the current transaction found to have no review policies.
_NO_POLICIES = MissingRows("hitforge_no_review_policies")


def note_no_policies(session: Session, hit_id: str) -> None:
    """Remember, for the current transaction only, that the HIT has no review policies.

    Most HITs have none, and a submission asks twice (the assignment's policy,
    then the HIT's when it turns reviewable): a missing row is not in the
    identity map, so each ask was a query. A query that reads the HIT can read
    its policies in the same round trip (an outer join) and note a miss here.
    """
    _NO_POLICIES.note(session, hit_id)


def _policies(session: Session, hit_id: str) -> HITReviewPolicies | None:
    if _NO_POLICIES.known_missing(session, hit_id):
        return None
    found = session.get(HITReviewPolicies, hit_id)
    if found is None:
        note_no_policies(session, hit_id)
    return found


def answers_of(xml: str | None) -> dict[str, list[str]]:
    """Question id -> the worker's answer values from QuestionFormAnswers.

    Values are trimmed and blanks dropped; a question answered in several
    ``Answer`` elements (a multi-valued form field) gets all of them.
    """
    if not xml:
        return {}
    root = etree.fromstring(xml.encode("utf-8"), etree.XMLParser(resolve_entities=False, no_network=True))
    out: dict[str, list[str]] = {}
    for answer in root.iter(f"{{{QFA_NS}}}Answer"):
        qid = answer.findtext(f"{{{QFA_NS}}}QuestionIdentifier") or ""
        values = out.setdefault(qid, [])
        for tag in ("FreeText", "SelectionIdentifier", "OtherSelectionText"):
            values.extend(v for e in answer.iter(f"{{{QFA_NS}}}{tag}") if (v := (e.text or "").strip()))
    return out


def matches(given: list[str], known: list[str]) -> bool:
    """MTurk's rule: exactly the known values (case and punctuation count; spaces around do not)."""
    return set(given) == {k.strip() for k in known if k.strip()}


#: ReviewActionStatus values of the service model (Intended and Cancelled never occur: actions run at once).
SUCCEEDED, FAILED = "Succeeded", "Failed"
#: How actions recorded before the statuses were spelt as the service model spells them read.
_OLD_STATUSES = {"SUCCEEDED": SUCCEEDED, "FAILED": FAILED}


def _as_wire(record: ReviewRecord) -> dict[str, Any]:
    """A stored result or action as the API returns it (older actions' statuses in today's spelling)."""
    status = record.data.get("Status")
    if record.kind == "action" and status in _OLD_STATUSES:
        return {**record.data, "Status": _OLD_STATUSES[status]}
    return record.data


def _record(session: Session, hit_id: str, level: str, kind: str, data: dict[str, Any]) -> None:
    session.add(ReviewRecord(hit_id=hit_id, level=level, kind=kind, data=data))


def _result(
    session: Session,
    hit: HIT,
    level: str,
    subject: HIT | Assignment,
    key: str,
    value: str,
    question_id: str | None = None,
) -> None:
    """Record one ReviewResultDetail of the ``level`` policy: a finding about ``subject``."""
    data: dict[str, Any] = {"SubjectId": subject.id, "SubjectType": "HIT" if subject is hit else "Assignment"}
    if question_id is not None:
        data["QuestionId"] = question_id
    data.update(Key=key, Value=value)
    _record(session, hit.id, level, "result", data)


@dataclass(frozen=True)
class PolicyAction:
    """One step a policy decided on, for the caller to carry out and :func:`record_action` to keep.

    Deciding here and carrying out in :func:`hits.market.hit_ops.carry_out_policy_actions` keeps
    this module below the assignment code: policies compute, callers apply.
    """

    level: str  # the deciding policy's level: "Assignment" or "HIT"
    name: str  # "approve", "reject" or "extend"
    target: Assignment | None = None  # None: the HIT itself (extend)
    reason: str | None = None
    params: dict[str, Any] = field(default_factory=dict)  # the policy's parameters (extend)


def record_action(session: Session, hit: HIT, action: PolicyAction, run: Callable[[], str]) -> None:
    """Run one action in a savepoint and keep its ReviewActionDetail (a failure is recorded, not raised)."""
    action_id = uuid.uuid4().hex[:30].upper()
    target = action.target
    detail: dict[str, Any] = {
        "ActionId": action_id,
        "ActionName": action.name,
        "TargetId": target.id if target is not None else hit.id,
        "TargetType": "Assignment" if target is not None else "HIT",
    }
    try:
        with session.begin_nested():
            detail["Result"] = run()
        detail["Status"] = SUCCEEDED
    except RequestError as exc:
        detail.update(Status=FAILED, ErrorCode=exc.turk_error_code, Result=exc.message)
    detail["CompleteTime"] = utcnow().timestamp()  # epoch seconds, as botocore reads timestamps
    _record(session, hit.id, action.level, "action", detail)


def extension(hit: HIT, params: dict[str, Any], now: datetime) -> tuple[int, datetime]:
    """The HIT's assignments and expiry after one extension: one assignment more (up to
    ExtendMaximumAssignments), open for at least ExtendMinimumTimeInSeconds from ``now``."""
    limit = int(params.get("ExtendMaximumAssignments", ["25"])[0])
    if hit.max_assignments >= limit:
        raise RequestError(
            f"The HIT already has {hit.max_assignments} assignments, the most the policy allows."
        )
    minimum = timedelta(seconds=int(params.get("ExtendMinimumTimeInSeconds", ["3600"])[0]))
    return hit.max_assignments + 1, max(hit.expires_at, now + minimum)


def on_submitted(session: Session, assignment: Assignment) -> list[PolicyAction]:
    """Evaluate the HIT's ScoreMyKnownAnswers policy for a newly submitted assignment.

    Its findings are recorded; the actions it decides on are returned, for the caller to carry out.
    """
    policies = _policies(session, assignment.hit_id)
    if policies is None or policies.assignment_policy is None:
        return []
    hit = assignment.hit
    params = policies.assignment_policy["params"]
    given = answers_of(assignment.answer)
    key: dict[str, list[str]] = params["AnswerKey"]
    correct = 0
    for qid, accepted in key.items():
        right = matches(given.get(qid, []), accepted)
        correct += int(right)
        _result(session, hit, "Assignment", assignment, "KnownAnswerCorrect", str(right).lower(), qid)
    score = round(100 * correct / len(key))
    _result(session, hit, "Assignment", assignment, "KnownAnswerScore", str(score))

    def threshold(name: str) -> int | None:
        return int(params[name][0]) if name in params else None

    approve_at, reject_below, extend_below = (
        threshold("ApproveIfKnownAnswerScoreIsAtLeast"),
        threshold("RejectIfKnownAnswerScoreIsLessThan"),
        threshold("ExtendIfKnownAnswerScoreIsLessThan"),
    )
    actions: list[PolicyAction] = []
    if approve_at is not None and score >= approve_at:
        reason = params.get("ApproveReason", [None])[0]
        actions.append(PolicyAction("Assignment", "approve", assignment, reason))
    elif reject_below is not None and score < reject_below:
        reason = params.get("RejectReason", ["Your answers to the known questions were not right."])[0]
        actions.append(PolicyAction("Assignment", "reject", assignment, reason))
    if extend_below is not None and score < extend_below:
        actions.append(PolicyAction("Assignment", "extend", params=params))
    return actions


def on_reviewable(session: Session, hit: HIT) -> list[PolicyAction]:
    """Evaluate the HIT's SimplePlurality policy, once, when the HIT becomes reviewable.

    Its findings are recorded; the actions it decides on are returned, for the caller to carry out.
    """
    policies = _policies(session, hit.id)
    if policies is None or policies.hit_policy is None or policies.hit_policy_done_at is not None:
        return []
    policies.hit_policy_done_at = utcnow()
    params = policies.hit_policy["params"]
    assignments = session.scalars(
        select(Assignment).where(
            Assignment.hit_id == hit.id, Assignment.status.in_(("Submitted", "Approved", "Rejected"))
        )
    ).all()
    if params.get("DisregardAssignmentIfRejected", ["false"])[0].lower() == "true":
        assignments = [a for a in assignments if a.status != "Rejected"]
    if "DisregardAssignmentIfKnownAnswerScoreIsLessThan" in params:
        floor = int(params["DisregardAssignmentIfKnownAnswerScoreIsLessThan"][0])
        known = {
            r.data["SubjectId"]: int(r.data["Value"])
            for r in session.scalars(select(ReviewRecord).where(ReviewRecord.hit_id == hit.id))
            if r.data.get("Key") == "KnownAnswerScore"
        }
        assignments = [a for a in assignments if known.get(a.id, 100) >= floor]
    answers = {a.id: answers_of(a.answer) for a in assignments}
    threshold = int(params["QuestionAgreementThreshold"][0])
    agreed_questions = 0
    agreements: Counter[str] = Counter()
    questions = params["QuestionIds"]
    # An answer is compared whole (A and B does not match A); long answers are left out, as on MTurk.
    ballots = {
        aid: {q: "|".join(sorted(v)) for q, v in given.items() if v and all(len(x) <= 256 for x in v)}
        for aid, given in answers.items()
    }
    for qid in questions:
        votes = Counter(b[qid] for b in ballots.values() if qid in b)
        if not votes:
            continue
        plurality, count = votes.most_common(1)[0]
        total = sum(votes.values())
        percent = round(100 * count / total)
        agreed = 100 * count > threshold * total  # "greater than" the threshold, exactly
        agreed_questions += int(agreed)
        for key, value in (
            ("PluralityAnswer", plurality),
            ("PluralityAnswerPercent", str(percent)),
            ("AgreementReached", str(agreed).lower()),
        ):
            _result(session, hit, "HIT", hit, key, value, qid)
        for assignment_id, ballot in ballots.items():
            agreements[assignment_id] += int(agreed and ballot.get(qid) == plurality)
    hit_score = round(100 * agreed_questions / len(questions))
    _result(session, hit, "HIT", hit, "HITAgreementScore", str(hit_score))
    approve_at = (
        int(params["ApproveIfWorkerAgreementScoreIsAtLeast"][0])
        if "ApproveIfWorkerAgreementScoreIsAtLeast" in params
        else None
    )
    reject_below = (
        int(params["RejectIfWorkerAgreementScoreIsLessThan"][0])
        if "RejectIfWorkerAgreementScoreIsLessThan" in params
        else None
    )
    actions: list[PolicyAction] = []
    for assignment in assignments:
        worker_score = round(100 * agreements[assignment.id] / len(questions))
        _result(session, hit, "HIT", assignment, "WorkerAgreementScore", str(worker_score))
        if assignment.status != "Submitted":
            continue
        if approve_at is not None and worker_score >= approve_at:
            reason = params.get("ApproveReason", [None])[0]
            actions.append(PolicyAction("HIT", "approve", assignment, reason))
        elif reject_below is not None and worker_score < reject_below:
            reason = params.get("RejectReason", ["Your answers did not agree with the other workers'."])[0]
            actions.append(PolicyAction("HIT", "reject", assignment, reason))
    extend_below = params.get("ExtendIfHITAgreementScoreIsLessThan")
    if extend_below is not None and hit_score < int(extend_below[0]):
        actions.append(PolicyAction("HIT", "extend", params=params))
        policies.hit_policy_done_at = None  # evaluate again when the extra work is in
    return actions


def report(
    session: Session,
    hit_id: str,
    levels: list[str],
    results: bool,
    actions: bool,
    offset: int = 0,
    limit: int = 100,
) -> tuple[dict[str, Any], int]:
    """The ListReviewPolicyResultsForHIT members for ``levels``, and how many records this page holds.

    Results and actions of all the levels asked for are paged together, in the
    order they were recorded: ``limit`` records from ``offset`` on.
    """
    policies = session.get(HITReviewPolicies, hit_id)
    kinds = [kind for kind, wanted in (("result", results), ("action", actions)) if wanted]
    records = session.scalars(
        select(ReviewRecord)
        .where(ReviewRecord.hit_id == hit_id, ReviewRecord.level.in_(levels), ReviewRecord.kind.in_(kinds))
        .order_by(ReviewRecord.id)
        .offset(offset)
        .limit(limit)
    ).all()
    out: dict[str, Any] = {}
    for level in levels:
        stored = None
        if policies is not None:
            stored = policies.assignment_policy if level == "Assignment" else policies.hit_policy
        if stored is not None:
            out[f"{level}ReviewPolicy"] = stored["wire"]
        rep: dict[str, Any] = {}
        if results:
            rep["ReviewResults"] = [r.data for r in records if r.level == level and r.kind == "result"]
        if actions:
            rep["ReviewActions"] = [_as_wire(r) for r in records if r.level == level and r.kind == "action"]
        out[f"{level}ReviewReport"] = rep
    return out, len(records)
