"""``hitforge demo --template objects`` as a user runs it, then the consensus from ``results aggregate``."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.helpers import run_hitforge

pytestmark = pytest.mark.celery


def test_the_objects_demo_catches_spammers_and_its_consensus_is_lists_of_objects(tmp_path) -> None:
    demo = run_hitforge(tmp_path, "demo", "--template", "objects", "--hits", "12")
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in demo.stdout

    aggregated = run_hitforge(tmp_path, "results", "aggregate", "demo-objects")
    assert aggregated.returncode == 0, aggregated.stdout[-2000:] + aggregated.stderr[-2000:]
    rows = list(csv.DictReader(io.StringIO(aggregated.stdout)))
    # Two pictures per HIT, no gold among them; a picture whose every worker was rejected or
    # held as flagged has nothing that counts and no row.
    assert 12 < len(rows) <= 12 * 2
    assert {r["method"] for r in rows} == {"object_clusters"}
    lines = (tmp_path / "var" / "demo" / "campaign" / "items.jsonl").read_text().splitlines()
    items = {row["id"]: row["item"] for row in map(json.loads, lines)}
    assert {r["item_id"] for r in rows} <= set(items)
    for r in rows:
        objects = json.loads(r["label"])
        assert isinstance(objects, list)
        for o in objects:
            assert set(o) == {"label", "box", "description", "support"}
            assert o["label"].strip() and len(o["box"]) == 4 and 0.5 < o["support"] <= 1.0
            width, height = items[r["item_id"]]["width"], items[r["item_id"]]["height"]
            assert o["box"][0] + o["box"][2] <= width + 1 and o["box"][1] + o["box"][3] <= height + 1
