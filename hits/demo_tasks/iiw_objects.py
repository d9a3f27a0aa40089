"""The iiw demo's Task 1: the objects template's drawings and seeds, and Task 2's truth from them.

Task 1 comes from the ``objects`` demo (drawn shapes, a weak detector's
seeded boxes, gold items); Task 2's bots know true statements about each
drawing made from the same truth: each shape's description and how many
shapes there are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hits.demo_tasks import Truth, write_jsonl
from hits.demo_tasks.objects import write as write_objects


def write(folder: Path, pictures: int, seed: int = 11) -> tuple[Truth, Truth]:
    """items.jsonl (with seeded objects), gold.jsonl, seeds.jsonl and media/; (Task 1 truth, Task 2 truth)."""
    # Two gold a HIT of two pictures: one gold item per gold slot, so no worker meets one twice.
    objects_truth = write_objects(folder, pictures, max(4, pictures + pictures % 2), seed)
    refine_truth: Truth = {}
    for name, things in objects_truth.items():
        refine_truth[name] = [
            *(str(t["description"]) for t in things),
            f"There are exactly {len(things)} shapes on a plain pale background.",
            "The shapes are drawn flat, without outlines or shadows.",
        ]
    items = [line for line in (folder / "items.jsonl").read_text().splitlines() if line.strip()]
    write_jsonl(
        folder / "seeds.jsonl",
        [{"id": _id(line), "caption": "Coloured shapes on a light background."} for line in items],
    )
    return objects_truth, refine_truth


def _id(line: str) -> str:
    import json

    row: dict[str, Any] = json.loads(line)
    return str(row["id"])
