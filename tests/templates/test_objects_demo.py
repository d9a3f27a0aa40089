"""``hitforge demo --template objects`` as a user runs it, then the consensus from ``results aggregate``."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.celery


def _hitforge(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", *args],
        cwd=tmp_path,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(REPO),
            "COLUMNS": "160",
            "HITFORGE_VAR_DIR": str(tmp_path / "var" / "demo"),
        },
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_objects_demo_catches_spammers_and_its_consensus_is_lists_of_objects(tmp_path) -> None:
    demo = _hitforge(tmp_path, "demo", "--template", "objects", "--hits", "12")
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in demo.stdout

    aggregated = _hitforge(tmp_path, "results", "aggregate", "demo-objects")
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
