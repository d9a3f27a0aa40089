"""Exports of a real campaign worked by bots: MTurk batch-results CSV and JSONL."""

from __future__ import annotations

import csv
import io
import json

from demo.crowd import PROFILES
from hits.db import session_scope
from hits.requester.campaigns.export import BATCH_COLUMNS, write_batch_csv, write_jsonl
from hits.requester.quality.aggregation import aggregate_campaign
from tests.helpers import campaign_bot, launch_demo_campaign


def test_batch_csv_and_jsonl_hold_every_assignment(tmp_path, live_server, market, requester_sessions) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path, market, requester_sessions, live_server.url, hits=2, name="export-1"
    )
    for n in range(2):
        campaign_bot(live_server.url, f"exporter-{n}", PROFILES["diligent"], truth, "export-1", seed=n).run(5)
    with session_scope(requester_sessions) as session:
        csv_out, jsonl_out = io.StringIO(), io.StringIO()
        assert write_batch_csv(session, campaign_id, csv_out) == 4
        assert write_jsonl(session, campaign_id, jsonl_out) == 4
        aggregated = aggregate_campaign(session, campaign_id, "majority_vote")
    rows = list(csv.DictReader(io.StringIO(csv_out.getvalue())))
    header = csv_out.getvalue().splitlines()[0].split(",")
    assert header[: len(BATCH_COLUMNS)] == BATCH_COLUMNS
    assert {"Input.image_0", "Input.sentence_0", "Answer.rating-0", "Answer.rating-2"} <= set(header)
    assert all(r["Answer.rating-0"] in {"1", "2", "3", "4"} for r in rows)
    assert all(r["Reward"] == "$0.10" for r in rows)
    records = [json.loads(line) for line in jsonl_out.getvalue().splitlines()]
    assert {r["assignment_id"] for r in records} == {r["AssignmentId"] for r in rows}
    assert all(sum(s["is_gold"] for s in r["slots"]) == 1 for r in records)
    assert len(aggregated) == 4  # the four ordinary items, gold excluded
    # Each real item carries its consensus label and confidence, in both formats.
    by_item = {a.item_id: a for a in aggregated}
    for record in records:
        for slot in record["slots"]:
            if slot["is_gold"]:
                assert slot["consensus"] is None
            else:
                expected = by_item[slot["item_id"]]
                assert slot["consensus"]["label"] == expected.label
                assert slot["consensus"]["confidence"] == round(expected.confidence, 4)
                # Next to it, the votes it rests on and the method's own figure.
                assert slot["consensus"]["votes"] == expected.votes
                assert slot["consensus"]["support"] == expected.detail["support"]
    for row, record in zip(rows, records, strict=True):
        real = [s for s in record["slots"] if not s["is_gold"]]
        assert [row[f"Consensus.label_{s['position']}"] for s in real] == [
            str(s["consensus"]["label"]) for s in real
        ]
        assert [row[f"Consensus.votes_{s['position']}"] for s in real] == [
            str(s["consensus"]["votes"]) for s in real
        ]
        gold = next(s for s in record["slots"] if s["is_gold"])
        assert not row.get(f"Consensus.label_{gold['position']}")
