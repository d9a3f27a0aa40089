"""Results export: JSONL, and CSV in MTurk's batch-results layout.

Existing analysis scripts read MTurk's ``Batch_*_results.csv``: one row per
assignment with ``Input.*`` and ``Answer.*`` columns. Gold slots are marked
in the JSONL (exports go to the requester, never to workers).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import IO, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.batches.columns import leading_subset
from hits.requester.pages.gold import page_slots
from hits.requester.tables.campaigns import Campaign, PublishedHIT, Submission
from hits.requester.templates import get_template

# The MTurk columns a campaign fills, in MTurk's order (one definition: hits.requester.batches.columns).
BATCH_COLUMNS = leading_subset(
    {
        "HITId",
        "HITTypeId",
        "Title",
        "Reward",
        "AssignmentId",
        "WorkerId",
        "AssignmentStatus",
        "SubmitTime",
        "WorkTimeInSeconds",
    }
)
_STATUS = {"approve": "Approved", "reject": "Rejected", "held": "Submitted", None: "Submitted"}


def _submissions(session: Session, campaign_id: int) -> Iterator[Submission]:
    yield from session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id)
        .order_by(Submission.id)
        .execution_options(yield_per=500)
    )


def consensus(session: Session, campaign: Campaign) -> dict[str, dict[str, Any]]:
    """Each real item's aggregated label with its confidence, by item id (the template's method).

    ``confidence`` is P(most workers like these would give the label), which
    accounts for the item's ``votes``; ``support`` is the method's own figure
    (see :func:`hits.requester.quality.aggregation.majority_confidence`). Computed from
    the answers the results count (see ``answers_frame``); an item nobody has
    answered yet is absent.
    """
    from hits.requester.answers import answers_frame
    from hits.requester.quality.aggregation import aggregate_frame

    frame = answers_frame(session, campaign.id)
    if frame.empty:
        return {}
    method = get_template(campaign.template).aggregation
    return {
        a.item_id: {
            "label": a.label,
            "confidence": round(a.confidence, 4),
            "votes": a.votes,
            "support": a.detail.get("support"),
            "method": a.method,
        }
        for a in aggregate_frame(frame, method)
    }


def assignment_records(session: Session, campaign_id: int) -> Iterator[dict[str, Any]]:
    """One dict per assignment: ids, decision, gold score, and each slot's item, answer and consensus.

    ``consensus`` (real items only) is the item's aggregated label and its
    confidence over the whole campaign, the same on every assignment that
    shows the item.
    """
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    labels = consensus(session, campaign)
    for sub in _submissions(session, campaign_id):
        answers = sub.answers.get("answers", [])
        slots = []
        plan = {slot.position: slot for slot in sub.published_hit.slots}
        for page_slot in page_slots(session, sub.published_hit, sub.assignment_id):
            planned = plan[page_slot.position]
            source = page_slot.gold or planned.item
            assert source is not None
            slots.append(
                {
                    "position": page_slot.position,
                    "item_id": source.external_id,
                    "is_gold": page_slot.gold is not None,
                    "input": page_slot.payload,
                    "answer": answers[page_slot.position] if page_slot.position < len(answers) else None,
                    "consensus": None if page_slot.gold is not None else labels.get(source.external_id),
                }
            )
        yield {
            "assignment_id": sub.assignment_id,
            "hit_id": sub.published_hit.mturk_hit_id,
            "worker_id": sub.worker_id,
            "decision": sub.decision,
            "gold_correct": sub.gold_correct,
            "gold_total": sub.gold_total,
            "submitted_at": sub.submitted_at.isoformat() if sub.submitted_at else None,
            "work_seconds": sub.work_seconds,
            "slots": slots,
        }


def write_jsonl(session: Session, campaign_id: int, out: IO[str]) -> int:
    """One assignment a line, every value (inputs, answers, consensus) as the JSON value it is."""
    count = 0
    for record in assignment_records(session, campaign_id):
        out.write(json.dumps(record, sort_keys=True) + "\n")
        count += 1
    return count


def write_batch_csv(session: Session, campaign_id: int, out: IO[str]) -> int:
    """MTurk's batch-results CSV: ``Input.<field>_<n>`` and ``Answer.<field>`` columns."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    template = get_template(campaign.template)
    # Answers the marketplace never took in (the worker returned or abandoned the
    # assignment) have no place among MTurk's statuses; the JSONL keeps them as "void".
    records = [r for r in assignment_records(session, campaign_id) if r["decision"] != "void"]
    input_cols: list[str] = []
    answer_cols: list[str] = []
    rows = []
    for record in records:
        # A nested value (a target item's box, a list of seeds) is one JSON cell: csv's own str()
        # would write a Python repr ({'x': 102.0}) that no CSV reader can parse back.
        inputs = {
            f"Input.{key}_{slot['position']}": csv_cell(value)
            for slot in record["slots"]
            for key, value in slot["input"].items()
        }
        answers = {
            f"Answer.{name}": csv_cell(value)
            for name, value in template.export_fields(
                [s["answer"] for s in record["slots"]], [s["input"] for s in record["slots"]]
            )
        }
        # After MTurk's own columns, so scripts that read those by name are unaffected.
        agreed = {
            f"Consensus.{key}_{slot['position']}": csv_cell(slot["consensus"][key])
            for slot in record["slots"]
            if slot["consensus"] is not None
            for key in ("label", "confidence", "votes")
        }
        for col in inputs:
            if col not in input_cols:
                input_cols.append(col)
        for col in [*answers, *agreed]:
            if col not in answer_cols:
                answer_cols.append(col)
        rows.append(
            {
                "HITId": record["hit_id"],
                "HITTypeId": campaign.hit_type_id,
                "Title": campaign.spec.get("title", ""),
                "Reward": f"${campaign.spec.get('reward', '')}",
                "AssignmentId": record["assignment_id"],
                "WorkerId": record["worker_id"],
                "AssignmentStatus": _STATUS.get(record["decision"], "Submitted"),
                "SubmitTime": record["submitted_at"] or "",
                "WorkTimeInSeconds": int(record["work_seconds"] or 0),
                **inputs,
                **answers,
                **agreed,
            }
        )
    writer = csv.DictWriter(out, fieldnames=BATCH_COLUMNS + input_cols + answer_cols, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return len(rows)


def csv_cell(value: Any) -> Any:
    """A value as one CSV cell: lists and dicts (orderings, sets, spans, boxes) as JSON."""
    return json.dumps(value) if isinstance(value, list | dict) else value


def write_labels_csv(session: Session, campaign: Campaign, out: IO[str]) -> int:
    """Each item's aggregated label: ``item_id, label, confidence, votes, method`` (labels as JSON)."""
    writer = csv.writer(out)
    writer.writerow(["item_id", "label", "confidence", "votes", "method"])
    agreed = consensus(session, campaign)
    for item_id in sorted(agreed):
        row = agreed[item_id]
        writer.writerow([item_id, json.dumps(row["label"]), row["confidence"], row["votes"], row["method"]])
    return len(agreed)
