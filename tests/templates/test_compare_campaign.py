"""A compare campaign worked by bots over HTTP: consensus, confidence, agreement and systems exported."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from itertools import combinations

from demo.tasks import truth_key
from hits.db import session_scope
from hits.requester.quality.aggregation import aggregate_campaign, campaign_agreement
from hits.requester.quality.ranking import campaign_systems
from tests.helpers import hitforge_results


def test_careful_workers_orders_become_the_consensus_and_the_system_scores(
    tmp_path, settings, requester_sessions, careful_campaign
) -> None:
    name = "cmp-campaign"
    campaign_id, truth, _ = careful_campaign("compare", hits=3, name=name)  # both order every item

    items = {}
    for line in (tmp_path / "items.jsonl").read_text().splitlines():
        row = json.loads(line)
        items[row["id"]] = row["item"]
    true_order = {}
    for item_id, item in items.items():
        text_of = {c["text"]: c["id"] for c in item["candidates"]}
        true_order[item_id] = [text_of[t] for t in truth[truth_key(item["image"], list(text_of))]]

    with session_scope(requester_sessions) as session:
        aggregated = aggregate_campaign(session, campaign_id)
        alpha = campaign_agreement(session, campaign_id)
        report = campaign_systems(session, campaign_id)
    assert {a.item_id: a.label for a in aggregated} == true_order  # gold excluded, every item ordered
    # Two workers agreeing on every pair: support 1, confidence 0.875 (two votes are not certainty).
    assert all(a.method == "bradley_terry" and a.votes == 2 for a in aggregated)
    assert all(a.detail["support"] == 1.0 and a.confidence == 0.875 for a in aggregated)
    assert alpha == 1.0  # both put every candidate at the same place

    # Head-to-head counts are the true orders' system pairs, once per worker.
    system_of = {(i, c["id"]): c["system"] for i, item in items.items() for c in item["candidates"]}
    expected: Counter[tuple[str, str]] = Counter()
    for item_id, order in true_order.items():
        for better, worse in combinations(order, 2):
            expected[(system_of[(item_id, better)], system_of[(item_id, worse)])] += 2
    for head in report.pairs:
        assert (head.first_wins, head.second_wins) == (
            expected[(head.first, head.second)],
            expected[(head.second, head.first)],
        )
    assert report.winner == report.systems[0].system
    assert sum(s.wins for s in report.systems) == sum(expected.values())

    result = hitforge_results(settings, "aggregate", name)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["item_id"]: json.loads(r["label"]) for r in rows} == true_order
    assert {(r["confidence"], r["votes"], r["method"], r["support"]) for r in rows} == {
        ("0.8750", "2", "bradley_terry", "1.0000")
    }
    assert "krippendorff_alpha=1.0000" in result.stderr

    result = hitforge_results(settings, "systems", name)
    assert result.exit_code == 0, result.output
    systems_table, pairs_table = result.stdout.split("\n\n")
    systems = list(csv.DictReader(io.StringIO(systems_table)))
    assert [r["system"] for r in systems] == [s.system for s in report.systems]
    assert int(systems[0]["wins"]) == report.systems[0].wins
    pairs = list(csv.DictReader(io.StringIO(pairs_table)))
    assert len(pairs) == len(report.pairs) and all(r["net_preference"][0] in "+-" for r in pairs)
