"""The iiw demo's Task 1: the objects template's drawings and seeds, and Task 2's truth from them.

Task 1 comes from the ``objects`` demo (drawn shapes, gold items, a weak
detector's boxes), but the boxes are written to the seeds file the workflow's
seeder reads rather than to the items file. Task 2's bots know true statements
about each drawing made from the same truth: each shape's description and how
many shapes there are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from demo.tasks import Truth, write_jsonl
from demo.tasks.objects import write as write_objects


def write(folder: Path, pictures: int, seed: int = 11) -> tuple[Truth, Truth]:
    """items.jsonl, gold.jsonl, seeds.jsonl (with the detector's objects), media/; both tasks' truths."""
    # Two gold a HIT of two pictures: one gold item per gold slot, so no worker meets one twice.
    objects_truth = write_objects(folder, pictures, max(4, pictures + pictures % 2), seed)
    refine_truth: Truth = {}
    for name, things in objects_truth.items():
        refine_truth[name] = [
            *(str(t["description"]) for t in things),
            f"There are exactly {len(things)} shapes on a plain pale background.",
            "The shapes are drawn flat, without outlines or shadows.",
        ]
    rows = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines() if line.strip()]
    # The weak detector's boxes go through the workflow's seeder (the seeds file), as a model's
    # would: the items file holds only the pictures, and Task 1 shows what the seeder gave.
    write_jsonl(folder / "seeds.jsonl", [_seeds_line(row) for row in rows])
    for row in rows:
        row["item"].pop("objects", None)
    write_jsonl(folder / "items.jsonl", rows)
    return objects_truth, refine_truth


def _seeds_line(row: dict[str, Any]) -> dict[str, Any]:
    """A seeds-file line for an items-file row: a caption of the picture and the detector's objects."""
    found = row["item"]["objects"]
    objects = [{"label": o["label"], "box": o["box"], "caption": o.get("description", "")} for o in found]
    return {"id": str(row["id"]), "caption": "Coloured shapes on a light background.", "objects": objects}
