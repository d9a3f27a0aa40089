"""A complete, small campaign for every built-in template: the examples of docs/campaigns.md.

Each example is data (items, gold, options, the campaign file's keys) that
``example_files`` turns into the files a requester writes. The reference
shows them and a test loads every one with ``load_campaign_file``, so an
example that stops loading fails the tests instead of misleading a reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from hits.money import format_amount, mturk_fee
from hits.requester.templates import get_template

#: The folder of the examples' pictures, next to the campaign file.
MEDIA_DIR = "media"
#: Every example's reward per assignment and its number of assignments per HIT (unless it says otherwise).
REWARD = Decimal("0.10")
ASSIGNMENTS = 3


@dataclass(frozen=True)
class Example:
    """One template's example campaign: what its files hold."""

    template: str
    title: str
    description: str
    items: list[dict[str, Any]]
    gold: list[tuple[dict[str, Any], Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    #: Keys of the campaign file that differ from the common ones (``campaign_keys``).
    keys: dict[str, Any] = field(default_factory=dict)


def _spans_key(correct: str, generated: str, wrong: list[str], missing: list[str]) -> dict[str, Any]:
    """A spans gold key from the words themselves, so its offsets cannot drift from its texts."""

    def span(text: str, word: str) -> list[int]:
        start = text.index(word)
        return [start, start + len(word)]

    return {"mistakes": [span(generated, w) for w in wrong], "missing": [span(correct, w) for w in missing]}


_SPANS_CORRECT = "Two children play on a red slide in a sunny park."
_SPANS_GENERATED = "Three children play on a blue slide in a park."
_HEATMAP_SENTENCE = {
    "text": "A small round shadow sits in the lower left of the picture.",
    "boxes": [{"x": 96, "y": 300, "width": 80, "height": 70}],
    "heatmaps": {"m1": "heatmaps/scan-1-m1.png", "m2": "heatmaps/scan-1-m2.png"},
}

EXAMPLES: dict[str, Example] = {
    e.template: e
    for e in (
        Example(
            "rating",
            "Rate how well a sentence describes a picture",
            "Read each sentence and rate from 1 to 4 how well it describes its picture.",
            [
                {
                    "image": "kitchen.jpg",
                    "sentence": "A man slices bread on a wooden board.",
                    "alt": "A kitchen",
                },
                {"image": "harbour.jpg", "sentence": "Two sailing boats are tied to a pier."},
            ],
            [({"image": "dog.jpg", "sentence": "A brown dog runs across a lawn."}, {"rating": 4})],
            {"gold_tolerance": 0},
            # One example shows the guidance section (docs/templates.md, Guidance); any template takes it.
            {
                "guidance": {
                    "instructions": "Rate each sentence by **what it says**, not by what it leaves out. "
                    "A short sentence can still earn a 4.",
                    "examples": [
                        {
                            "kind": "good",
                            "text": "The dog, the running and the lawn are all in the picture: "
                            "nothing is wrong.",
                            "image": "dog.jpg",
                            "image_alt": "A brown dog on a lawn",
                            "answer": "4",
                        },
                        {
                            "kind": "bad",
                            "text": "A 1 for *A brown dog runs across a lawn* because it does not "
                            "mention the sky: leaving things out is not an error.",
                        },
                    ],
                    "faq": [
                        {
                            "question": "What if I cannot tell the animal's colour?",
                            "answer": "Judge only what you can see; when unsure, choose the higher rating.",
                        }
                    ],
                    "scale": [
                        "Fully right",
                        "One moderate slip",
                        "A serious error",
                        "Unrelated to the picture",
                    ],
                }
            },
        ),
        Example(
            "select",
            "Tick the sentences that describe a picture",
            "Tick every sentence that describes the picture, or say that none does.",
            [
                {
                    "image": "harbour.jpg",
                    "sentences": ["Boats are moored in a harbour.", "A cat sleeps on a sofa."],
                },
                {
                    "image": "market.jpg",
                    "sentences": ["People buy fruit at a stall.", "A train enters a station."],
                },
            ],
            [
                (
                    {"image": "dog.jpg", "sentences": ["A dog runs on grass.", "A car is parked."]},
                    {"correct": [0]},
                )
            ],
            {"gold_pass_score": 0.5},
        ),
        Example(
            "write",
            "Describe a picture in one sentence",
            "Write one sentence, under 100 characters, that says what the picture shows.",
            [
                {"image": "market.jpg", "example": "A woman sells apples at a street market."},
                {"image": "harbour.jpg"},
            ],
        ),
        Example(
            "spans",
            "Mark the mistakes in a description",
            "Mark the words of GENERATED that are wrong and the details of CORRECT that it leaves out.",
            [{"image": "park.jpg", "correct": _SPANS_CORRECT, "generated": _SPANS_GENERATED}],
            [
                (
                    {
                        "image": "beach.jpg",
                        "correct": "A dog digs in wet sand.",
                        "generated": "A cat digs in sand.",
                    },
                    _spans_key("A dog digs in wet sand.", "A cat digs in sand.", ["cat"], ["wet"]),
                )
            ],
            {"gold_pass_score": 0.5},
        ),
        Example(
            "target",
            "Does the phrase pick out the framed object?",
            "Read the phrase and say whether it names the object in the frame, and how well.",
            [
                {
                    "image": "street.jpg",
                    "width": 640,
                    "height": 480,
                    "box": {"x": 120, "y": 80, "width": 90, "height": 200},
                    "expression": "the man in the red coat",
                    "item_id": "street-17",
                    "system": "model-a",
                }
            ],
            [
                (
                    {
                        "image": "dog.jpg",
                        "width": 640,
                        "height": 480,
                        "box": {"x": 200, "y": 150, "width": 180, "height": 140},
                        "expression": "the brown dog",
                        "item_id": "dog-3",
                        "system": "reference",
                    },
                    {"category": "A"},
                )
            ],
        ),
        Example(
            "compare",
            "Which description of the picture is best?",
            "Put the descriptions of the picture in order, best first.",
            [
                {
                    "image": "beach.jpg",
                    "candidates": [
                        {"id": "c1", "text": "A dog digs a hole in wet sand.", "system": "model-a"},
                        {"id": "c2", "text": "An animal on a beach.", "system": "model-b"},
                    ],
                }
            ],
            [
                (
                    {
                        "image": "dog.jpg",
                        "candidates": [
                            {"id": "c1", "text": "A cat sits on a lawn.", "system": "model-a"},
                            {"id": "c2", "text": "A brown dog runs across a lawn.", "system": "model-b"},
                        ],
                    },
                    {"order": ["c2", "c1"]},
                )
            ],
            {"gold_pass_score": 0.8},
        ),
        Example(
            "sxs",
            "Compare two descriptions of a picture",
            "Read two long descriptions of one picture and say which is better on each of five points.",
            [
                {
                    "image": "kitchen.jpg",
                    "candidates": [
                        {
                            "id": "d1",
                            "text": "A man in an apron slices bread. A kettle steams.",
                            "system": "model-a",
                        },
                        {"id": "d2", "text": "A person is in a room. There is food.", "system": "model-b"},
                    ],
                }
            ],
            [
                (
                    {
                        "image": "dog.jpg",
                        "candidates": [
                            {
                                "id": "d1",
                                "text": "A brown dog runs across a green lawn.",
                                "system": "model-a",
                            },
                            {"id": "d2", "text": "A black cat sleeps in a blue car.", "system": "model-b"},
                        ],
                    },
                    {"preferences": {"hallucinations": -2, "comprehensiveness": -1}},
                )
            ],
            {"gold_tolerance": 1, "gold_pass_score": 1.0},
        ),
        Example(
            "refine",
            "Improve a description of a picture",
            "Make the description of the picture more accurate and complete.",
            [{"image": "garden.jpg", "previous": "A garden with some flowers."}],
            keys={
                "assignments_per_hit": 1,
                "items_per_hit": 1,
                "workflow": {"rounds": {"max_rounds": 5, "jaccard_threshold": 0.8}},
            },
        ),
        Example(
            "objects",
            "Fix the list of objects in a picture",
            "Correct the boxes and labels of the objects in the picture and describe each one.",
            [
                {
                    "image": "desk.jpg",
                    "width": 800,
                    "height": 600,
                    "objects": [
                        {"label": "laptop", "box": [100, 120, 300, 200]},
                        {"label": "mug", "box": [450, 300, 80, 100], "description": "a white mug"},
                    ],
                }
            ],
            [
                (
                    {
                        "image": "dog.jpg",
                        "width": 640,
                        "height": 480,
                        "objects": [{"label": "dog", "box": [200, 150, 180, 140]}],
                    },
                    {"objects": [{"label": "dog", "box": [205, 150, 175, 140], "aliases": ["puppy"]}]},
                )
            ],
            {"iou_threshold": 0.5, "gold_pass_score": 0.75},
        ),
        Example(
            "rank",
            "Which pictures look most like the first one?",
            "Rank the candidate pictures by how closely each resembles the reference picture.",
            [
                {
                    "image": "reference-1.png",
                    "candidates": [
                        {"id": "p1", "image": "candidates/1-a.png", "system": "model-a"},
                        {"id": "p2", "image": "candidates/1-b.png", "system": "model-b"},
                        {"id": "p3", "image": "candidates/1-c.png", "system": "model-c"},
                    ],
                    "condition": "sketches",
                }
            ],
            [
                (
                    {
                        "image": "reference-2.png",
                        "candidates": [
                            {"id": "p1", "image": "candidates/2-a.png", "system": "model-a"},
                            {"id": "p2", "image": "candidates/2-b.png", "system": "copy"},
                        ],
                    },
                    {"ranks": {"p1": 2, "p2": 1}},
                )
            ],
            {"gold_min_tau": 0.6},
        ),
        Example(
            "heatmap",
            "Rate heatmaps of a picture",
            "Pick a sentence of the report, rate each heatmap for it, then try a prompt of your own.",
            [
                {
                    "image": "scan-1.png",
                    "width": 512,
                    "height": 512,
                    "models": ["m1", "m2"],
                    "sentences": [_HEATMAP_SENTENCE],
                }
            ],
            [
                (
                    {
                        "image": "scan-2.png",
                        "width": 512,
                        "height": 512,
                        "models": ["m1", "m2"],
                        "sentences": [_HEATMAP_SENTENCE],
                    },
                    {"sentences": {"0": {"m1": {"coverage": 4, "share": 3}}}},
                )
            ],
            {"models": {"m1": {"provider": "builtin"}, "m2": {"provider": "builtin", "spread": 0.2}}},
        ),
    )
}


def campaign_keys(example: Example) -> dict[str, Any]:
    """The example's campaign file as a mapping, in the order a requester would write it."""
    template = get_template(example.template)
    keys: dict[str, Any] = {
        "name": f"{example.template}-example",
        "template": example.template,
        "title": example.title,
        "description": example.description,
        "keywords": "pictures, descriptions",
        "reward": format_amount(REWARD),
        "budget": "",  # filled in below, from the plan
        "assignments_per_hit": ASSIGNMENTS,
        "items_per_hit": len(example.items),
    }
    if template.has_gold:
        keys["gold_per_hit"] = 1
    keys["items"] = "items.jsonl"
    if example.gold:
        keys["gold"] = "gold.jsonl"
    keys["media_dir"] = MEDIA_DIR
    if example.options:
        keys["template_options"] = example.options
    keys.update(example.keys)
    assignments = int(keys["assignments_per_hit"])
    hits = -(-len(example.items) // int(keys["items_per_hit"]))
    cost = (REWARD + mturk_fee(REWARD, max_assignments=assignments)) * assignments * hits
    keys["budget"] = format_amount(cost * 10)  # room for a few re-posts, bonuses or more items
    return keys


def item_line(ident: str, payload: Mapping[str, Any], answer: Any = None) -> str:
    """One line of an items file (or, with ``answer``, of a gold file)."""
    line: dict[str, Any] = {"id": ident, "item": dict(payload)}
    if answer is not None:
        line["answer"] = answer
    return json.dumps(line, ensure_ascii=False)


def _pictures(value: Any) -> Iterator[str]:
    """Every local picture a payload names (an ``image`` or a precomputed heatmap), for the media folder."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if key == "image" and isinstance(inner, str) and "://" not in inner:
                yield inner
            elif key == "heatmaps" and isinstance(inner, Mapping):
                yield from (str(v) for v in inner.values())
            else:
                yield from _pictures(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _pictures(inner)


@dataclass(frozen=True)
class ExampleFiles:
    """The text of an example's files, and the pictures its media folder must hold."""

    campaign: str
    items: str
    gold: str | None
    pictures: list[str]

    def write(self, folder: Path) -> Path:
        """Write the files and empty stand-ins for the pictures into ``folder``; the campaign file."""
        (folder / "items.jsonl").write_text(self.items, encoding="utf-8")
        if self.gold is not None:
            (folder / "gold.jsonl").write_text(self.gold, encoding="utf-8")
        for picture in self.pictures:
            target = folder / MEDIA_DIR / picture
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"")
        path = folder / "campaign.yaml"
        path.write_text(self.campaign, encoding="utf-8")
        return path


def example_files(template: str) -> ExampleFiles:
    """The files of ``template``'s example campaign."""
    example = EXAMPLES[template]
    campaign = yaml.safe_dump(campaign_keys(example), sort_keys=False, allow_unicode=True, width=100)
    items = "".join(item_line(f"{template}-{n}", p) + "\n" for n, p in enumerate(example.items, start=1))
    gold = None
    if example.gold:
        gold = "".join(
            item_line(f"{template}-gold-{n}", p, a) + "\n" for n, (p, a) in enumerate(example.gold, start=1)
        )
    payloads = [*example.items, *(p for p, _ in example.gold)]
    pictures = sorted({picture for p in payloads for picture in _pictures(p)})
    return ExampleFiles(campaign, items, gold, pictures)
