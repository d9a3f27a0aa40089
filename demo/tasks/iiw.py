"""The ImageInWords demo's data: drawings, model seeds for them, and the bots' truth.

The pictures, seeds and truth are written by ``demo.tasks.iiw_objects``;
here is the campaign file. Task 1 (object annotation) comes first and Task 2
(sequential refinement) starts from its approved triples.
"""

from __future__ import annotations

from typing import Any


def campaign(pictures: int) -> dict[str, Any]:
    """The demo's campaign file: Task 1 (objects) then Task 2 (refine) from its approved triples."""
    refine = {
        "title": "Improve the description of a drawing",
        "description": "Read a description of a simple drawing, correct it and add what is missing.",
        "keywords": "images, descriptions, writing, editing",
        "reward": "0.15",
    }
    rounds = {"max_rounds": 4, "jaccard_threshold": 0.8, "ngram": 2}
    spec: dict[str, Any] = {
        "name": "demo-iiw",
        "budget": "40.00",
        "assignments_per_hit": 1,
        "items_per_hit": 1,
        "lifetime_seconds": 3600,
        "assignment_duration_seconds": 600,
        "auto_approval_delay_seconds": 86400,
        "items": "items.jsonl",
        "media_dir": "media",
        "seed": 11,
    }
    workflow: dict[str, Any] = {"seeder": {"kind": "file", "path": "seeds.jsonl"}}
    # Task 1 has gold: two per HIT and a confidence of 0.6, so each worker's record is decided
    # after one HIT (2/2 approves, 1/2 or 0/2 rejects) and no work waits for a QA reviewer the
    # demo does not have; three workers a picture, so one careless or spamming is not the end of it.
    spec.update(
        template="objects",
        title="Check the objects marked in a drawing",
        description="Fix the boxes and labels of the objects in a drawing and describe each one.",
        keywords="images, objects, boxes, descriptions",
        reward="0.15",
        assignments_per_hit=3,
        items_per_hit=2,
        gold_per_hit=2,
        gold="gold.jsonl",
        template_options={"iou_threshold": 0.5, "gold_pass_score": 0.75},
        quality={"accuracy_threshold": 0.6, "confidence": 0.6, "min_gold": 2},
    )
    workflow.update(
        first_stage="objects",
        stages=[{"name": "describe", "template": "refine", "from": "objects", **refine, "rounds": rounds}],
    )
    spec["workflow"] = workflow
    return spec
