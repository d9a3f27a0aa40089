"""A batch's results as MTurk's batch-results CSV, and the edited file read back.

Writing reads the HITs and assignments from the marketplace (the authority on
who did what); the answers are the fields the layout's form posted. Reading
back takes MTurk's ``Approve`` / ``Reject`` columns and turns each mark into an
outbox entry, which the outbox applies through the API exactly once.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.batches.columns import REVIEW_COLUMNS, batch_header
from hits.requester.batches.inputs import read_csv
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.mturk import Marketplace
from hits.requester.quality.outbox import count_decisions
from hits.requester.quality.pipeline import VOID, record_assignments
from hits.requester.quality.review import grade_submissions
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import OutboxEntry, Submission
from hits.wire.authenticity import split_summary
from hits.wire.documents import xml_to_answers

#: Assignments that belong in the results: work handed in (MTurk lists no others).
_HANDED_IN = ["Submitted", "Approved", "Rejected"]


def mturk_time(value: Any) -> str:
    """A time as MTurk's CSV wrote it (``Wed Nov 25 04:13:26 UTC 2026``), in UTC; blank if none."""
    if not isinstance(value, datetime):
        return ""
    return value.astimezone(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")


def result_rows(
    sessions: Callable[[], Session], market: Marketplace, batch_id: int
) -> tuple[list[str], list[dict[str, str]]]:
    """The header and one row per handed-in assignment of the batch, in CSV order."""
    with session_scope(sessions) as session:
        batch = session.get(Batch, batch_id)
        if batch is None:
            raise ValueError(f"batch {batch_id} does not exist")
        columns = list(batch.columns)
        lifetime = str(batch.settings.get("lifetime_seconds", ""))
        rows = [
            (r.mturk_hit_id, dict(r.inputs))
            for r in session.scalars(
                select(BatchRow).where(BatchRow.batch_id == batch_id).order_by(BatchRow.position)
            )
            if r.mturk_hit_id
        ]
    out: list[dict[str, str]] = []
    answer_fields: set[str] = set()
    for hit_id, inputs in rows:
        hit = market.get_hit(hit_id)
        for assignment in market.assignments_for_hit(hit_id, _HANDED_IN):
            # The page's typing record (hits.wire.authenticity) is not one of the layout's answers.
            answers, _ = split_summary(xml_to_answers(assignment.get("Answer") or "<QuestionFormAnswers/>"))
            answer_fields.update(answers)
            accepted, submitted = assignment.get("AcceptTime"), assignment.get("SubmitTime")
            work = (
                int((submitted - accepted).total_seconds())
                if isinstance(accepted, datetime) and isinstance(submitted, datetime)
                else ""
            )
            out.append(
                {
                    "HITId": hit_id,
                    "HITTypeId": hit.get("HITTypeId", ""),
                    "Title": hit.get("Title", ""),
                    "Description": hit.get("Description", ""),
                    "Keywords": hit.get("Keywords", ""),
                    "Reward": f"${hit.get('Reward', '')}",
                    "CreationTime": mturk_time(hit.get("CreationTime")),
                    "MaxAssignments": str(hit.get("MaxAssignments", "")),
                    "RequesterAnnotation": hit.get("RequesterAnnotation", ""),
                    "AssignmentDurationInSeconds": str(hit.get("AssignmentDurationInSeconds", "")),
                    "AutoApprovalDelayInSeconds": str(hit.get("AutoApprovalDelayInSeconds", "")),
                    "Expiration": mturk_time(hit.get("Expiration")),
                    # Not reported by the API; MTurk's own file often left it blank too.
                    "NumberOfSimilarHITs": "",
                    "LifetimeInSeconds": lifetime,
                    "AssignmentId": assignment["AssignmentId"],
                    "WorkerId": assignment["WorkerId"],
                    "AssignmentStatus": assignment["AssignmentStatus"],
                    "AcceptTime": mturk_time(accepted),
                    "SubmitTime": mturk_time(submitted),
                    "AutoApprovalTime": mturk_time(assignment.get("AutoApprovalTime")),
                    "ApprovalTime": mturk_time(assignment.get("ApprovalTime")),
                    "RejectionTime": mturk_time(assignment.get("RejectionTime")),
                    "RequesterFeedback": assignment.get("RequesterFeedback", ""),
                    "WorkTimeInSeconds": str(work),
                    # Approval rates are the marketplace's, not exposed through the API: blank.
                    **{f"Input.{c}": inputs.get(c, "") for c in columns},
                    **{f"Answer.{k}": v for k, v in answers.items()},
                }
            )
    return batch_header(columns, sorted(answer_fields)), out


def write_results(header: list[str], rows: list[dict[str, str]], out: IO[str]) -> int:
    """Write the batch-results CSV (every cell quoted, as MTurk's download); the row count."""
    writer = csv.DictWriter(out, fieldnames=header, quoting=csv.QUOTE_ALL, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return len(rows)


@dataclass(frozen=True)
class ReviewMark:
    """One reviewed line of an edited results file."""

    line: int
    hit_id: str
    assignment_id: str
    action: str  # "approve" or "reject"
    feedback: str


def read_review(path: Path | str, data: bytes | None = None) -> list[ReviewMark]:
    """The approvals and rejections marked in an edited batch-results file.

    A non-empty ``Approve`` cell approves; text in ``Reject`` rejects with that
    text as the worker's feedback; a line with both is an error naming the file
    and line (every such line is reported at once). Lines with neither are skipped.
    """
    table = read_csv(path, data)
    needed = ["HITId", "AssignmentId", *REVIEW_COLUMNS]
    absent = [c for c in needed if c not in table.columns]
    if absent:
        raise InputFileError(path, 1, absent[0], "the column is missing: is this a batch-results file?")
    marks, errors = [], []
    for row in table.rows:
        approve, reject = row.cells["Approve"].strip(), row.cells["Reject"].strip()
        if not approve and not reject:
            continue
        if approve and reject:
            errors.append(
                InputFileError(path, row.line, "Approve", "both Approve and Reject are filled in: keep one")
            )
            continue
        assignment_id = row.cells["AssignmentId"].strip()
        if not assignment_id:
            errors.append(InputFileError(path, row.line, "AssignmentId", "the line has no assignment"))
            continue
        action = "approve" if approve else "reject"
        marks.append(ReviewMark(row.line, row.cells["HITId"].strip(), assignment_id, action, reject))
    if errors:
        raise InputFileErrors(errors)
    return marks


def marked_work(
    sessions: Callable[[], Session], market: Marketplace, batch_id: int, marks: list[ReviewMark]
) -> dict[str, list[dict[str, Any]]]:
    """The marketplace's handed-in assignments of each of the batch's HITs the marks name.

    Read before :func:`queue_review`'s transaction (no row lock is held over
    the network); the marketplace is the authority on which work is a HIT's.
    """
    with session_scope(sessions) as session:
        hits = set(session.scalars(select(BatchRow.mturk_hit_id).where(BatchRow.batch_id == batch_id)))
    named = sorted({m.hit_id for m in marks} & hits)
    return {hit_id: list(market.assignments_for_hit(hit_id, _HANDED_IN)) for hit_id in named}


def queue_review(
    session: Session,
    batch_id: int,
    path: Path | str,
    marks: list[ReviewMark],
    handed_in: Mapping[str, list[dict[str, Any]]],
) -> list[int]:
    """Outbox entries for the marks (one per assignment, however often the file is handed in).

    ``handed_in``: the marketplace's assignments per HIT (:func:`marked_work`).
    Each is recorded as a sync records it, then the marked submissions are
    row-locked and given the mark as their decision, so the review pipeline,
    QA and the deadline's approval leave them alone. A HIT that is not the
    batch's, an assignment that is not work handed in for the line's HIT, or
    one already decided the other way is an error naming the line; nothing is
    queued or recorded then.
    """
    batch = session.get(Batch, batch_id)
    if batch is None:
        raise ValueError(f"batch {batch_id} does not exist")
    published: dict[str, int | None] = {
        str(hit_id): published_id
        for hit_id, published_id in session.execute(
            select(BatchRow.mturk_hit_id, BatchRow.published_hit_id).where(
                BatchRow.batch_id == batch_id, BatchRow.mturk_hit_id.isnot(None)
            )
        )
    }
    # As a sync would (HITs locked in id order first, as every caller takes them): the
    # submissions then exist to lock and decide, graded as evidence on their workers.
    named: dict[int, list[dict[str, Any]]] = {}
    for hit_id in sorted({m.hit_id for m in marks}):
        published_id = published.get(hit_id)
        if published_id is not None:
            named[published_id] = list(handed_in.get(hit_id, []))
    recorded = record_assignments(session, named)
    grade_submissions(session, recorded.new_ids)
    count_decisions(session, recorded.market_decisions)
    submissions = {
        s.assignment_id: s
        for s in session.scalars(
            select(Submission)
            .where(Submission.assignment_id.in_(sorted({m.assignment_id for m in marks})))
            .order_by(Submission.id)
            .with_for_update(of=Submission)
            .execution_options(populate_existing=True)
        )
    }
    existing = {
        e.target: e
        for e in session.scalars(
            select(OutboxEntry).where(
                OutboxEntry.target.in_(list(submissions)), OutboxEntry.action.in_(("approve", "reject"))
            )
        )
    }
    errors = []
    decided: dict[str, str] = {}
    for mark in marks:
        if mark.hit_id not in published:
            errors.append(
                InputFileError(
                    path, mark.line, "HITId", f"HIT {mark.hit_id} is not one of batch {batch.name}'s"
                )
            )
            continue
        submission = submissions.get(mark.assignment_id)
        if (
            submission is None
            or submission.published_hit_id != published[mark.hit_id]
            or not submission.synced
            or submission.decision == VOID
        ):
            errors.append(
                InputFileError(
                    path,
                    mark.line,
                    "AssignmentId",
                    f"assignment {mark.assignment_id} is not work handed in for HIT {mark.hit_id}",
                )
            )
            continue
        entry = existing.get(mark.assignment_id)
        earlier = decided.setdefault(mark.assignment_id, mark.action)
        first = entry.action if entry is not None else _final(submission.decision) or earlier
        if first != mark.action:
            errors.append(
                InputFileError(
                    path,
                    mark.line,
                    "Approve" if mark.action == "approve" else "Reject",
                    f"assignment {mark.assignment_id} is marked to {first} already",
                )
            )
    # Checked in full before anything is added: a file with one bad line queues nothing
    # (the caller's rollback also undoes the recording above).
    if errors:
        raise InputFileErrors(errors)
    entries: list[OutboxEntry] = []
    for mark in marks:
        submission = submissions[mark.assignment_id]
        entry = existing.get(mark.assignment_id)
        if entry is None and _final(submission.decision) == mark.action:
            continue  # the marketplace has it so already: nothing to apply
        if entry is None:
            payload = {"feedback": mark.feedback} if mark.action == "reject" else {}
            entry = OutboxEntry(
                campaign_id=batch.campaign_id, action=mark.action, target=mark.assignment_id, payload=payload
            )
            session.add(entry)
            existing[mark.assignment_id] = entry
            submission.decision = mark.action
            submission.evidence = {
                **(submission.evidence or {}),
                "decided_by": "batch review",
                "line": mark.line,
            }
        entries.append(entry)
    session.flush()
    return [e.id for e in entries]


def _final(decision: str | None) -> str | None:
    """A submission's decision if it is an approval or rejection (not none, held or void)."""
    return decision if decision in ("approve", "reject") else None
