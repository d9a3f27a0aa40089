"""``hitforge results export`` of blinded campaigns (rank, sxs): answers in the items' terms, systems named.

Careful workers answer the truth on pages arranged per assignment; the export
(CSV and JSONL) must hold what the server stored, unscrambled, and that must
be the truth again, candidate by candidate and system by system.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from sqlalchemy import select

from demo.tasks import truth_key
from demo.tasks.rank import true_ranks
from demo.tasks.sxs import preferences
from hits.db import session_scope
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.templates.sxs import METRICS
from tests.helpers import hitforge_results


def _truth_of(template: str, item: dict[str, Any], truth: Any) -> dict[str, int]:
    """What a careful worker answers for ``item``, in its own terms."""
    if template == "rank":
        diffs = truth[truth_key(item["image"], [c["image"] for c in item["candidates"]])]
        return true_ranks({c["id"]: diffs[c["image"]] for c in item["candidates"]})
    first, second = (c["text"] for c in item["candidates"])
    quality = truth[truth_key(item["image"], [first, second])]
    return preferences(quality[first], quality[second])


def _csv_answer(template: str, row: dict[str, str], position: int, item: dict[str, Any]) -> dict[str, int]:
    """The slot's answer read back from its CSV row, checking the system columns on the way."""
    if template == "rank":
        for c in item["candidates"]:
            assert row[f"Answer.system-{position}-{c['id']}"] == c["system"]
        return {c["id"]: int(row[f"Answer.rank-{position}-{c['id']}"]) for c in item["candidates"]}
    first, second = item["candidates"]
    assert (row[f"Answer.pref-{position}-first"], row[f"Answer.pref-{position}-second"]) == (
        first["system"],
        second["system"],
    )
    return {m: int(row[f"Answer.pref-{position}-{m}"]) for m in METRICS}


@pytest.mark.parametrize("template", ["rank", "sxs"])
def test_export_holds_the_stored_unscrambled_answers_by_candidate_and_system(
    template, settings, requester_sessions, careful_campaign
) -> None:
    name = f"{template}-export"
    campaign_id, truth, _ = careful_campaign(template, hits=1, name=name)
    with session_scope(requester_sessions) as session:
        stored = {
            s.assignment_id: s.answers["answers"]
            for s in session.scalars(
                select(Submission)
                .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
                .where(PublishedHIT.campaign_id == campaign_id)
            )
        }
    assert len(stored) == 2

    as_csv = hitforge_results(settings, "export", name, "--format", "csv")
    as_jsonl = hitforge_results(settings, "export", name, "--format", "jsonl")
    assert as_csv.exit_code == 0 and as_jsonl.exit_code == 0, as_csv.output + as_jsonl.output
    rows = {r["AssignmentId"]: r for r in csv.DictReader(io.StringIO(as_csv.stdout))}
    records = {r["assignment_id"]: r for r in map(json.loads, as_jsonl.stdout.splitlines())}
    assert set(rows) == set(records) == set(stored)
    checked = 0
    for assignment_id, answers in stored.items():
        slots = records[assignment_id]["slots"]
        assert len(slots) == len(answers)
        for slot in slots:
            position, item = slot["position"], slot["input"]
            expected = _truth_of(template, item, truth)  # a careful worker's answer, gold or not
            assert answers[position] == expected
            assert slot["answer"] == expected
            assert _csv_answer(template, rows[assignment_id], position, item) == expected
            checked += 1
    # Every slot of both assignments; page-place columns (rank-0-0, sxs-0-...) are not the export's.
    assert checked == sum(len(a) for a in stored.values()) >= 4
    header = next(csv.reader(io.StringIO(as_csv.stdout)))
    assert not any(h.startswith(("Answer.rank-0-0", "Answer.sxs-")) for h in header)
