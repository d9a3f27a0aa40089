"""Demo for the objects template: drawn shapes, and seeds that are partly wrong.

Each picture holds three or four coloured shapes at known places. The seeds
play a weak detector: some objects come through right (a few pixels off),
and each picture has at least two of these faults: an object missing, one
split into two fragments, one with a wrong label, and a box around nothing.
Left as they are, the seeds fail gold; fixed, they pass.

Bots fix the seeds as their profile would (:func:`simulated_answer`): a
careful one fixes each fault with its profile's accuracy, a spammer leaves
the seeds untouched or garbles them, a copycat keeps them as they are.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bs4 import Tag
from PIL import Image, ImageDraw

from demo.data import COLOURS, SHAPES
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, save_png, slots_of, write_jsonl
from hits.requester.templates.objects.geometry import iou, merge_objects

SIZE = (320, 240)
FAULTS = ("missing", "fragmented", "wrong_label", "invalid")
#: What a detector "sees" in empty background; and what a spammer types.
NOTHING_LABELS = ("shadow", "smudge", "blob")
FILLER = "an object in the picture"
_PLACES = {(0, 0): "top left", (1, 0): "top middle", (2, 0): "top right",
           (0, 1): "bottom left", (1, 1): "bottom middle", (2, 1): "bottom right"}  # fmt: skip


def _scene(rng: random.Random) -> list[dict[str, Any]]:
    """Three or four shapes, each in its own cell of a 3 x 2 grid: label, box, description, shape, colour."""
    cells = rng.sample(sorted(_PLACES), rng.choice((3, 4)))
    colours = rng.sample(sorted(COLOURS), len(cells))
    cell_w, cell_h = SIZE[0] // 3, SIZE[1] // 2
    things = []
    for (cx, cy), colour in zip(cells, colours, strict=True):
        shape = rng.choice(SHAPES)
        w, h = rng.randint(50, 80), rng.randint(50, 90)
        x = cx * cell_w + rng.randint(4, cell_w - w - 4)
        y = cy * cell_h + rng.randint(4, cell_h - h - 4)
        label = f"{colour} {shape}"
        article = "An" if colour[0] in "aeiou" else "A"
        things.append(
            {
                "label": label,
                "box": [x, y, w, h],
                "description": f"{article} {label} in the {_PLACES[(cx, cy)]} of the picture.",
                "shape": shape,
                "colour": colour,
            }
        )
    return things


def draw_scene(things: Sequence[Mapping[str, Any]]) -> bytes:
    """A PNG of the shapes, each filling its box."""
    image = Image.new("RGB", SIZE, (245, 245, 240))
    pen = ImageDraw.Draw(image)
    for t in things:
        x, y, w, h = t["box"]
        corners = (x, y, x + w - 1, y + h - 1)
        colour = COLOURS[t["colour"]]
        if t["shape"] == "circle":
            pen.ellipse(corners, fill=colour)
        elif t["shape"] == "square":
            pen.rectangle(corners, fill=colour)
        else:
            pen.polygon([(x + w // 2, y), (x + w - 1, y + h - 1), (x, y + h - 1)], fill=colour)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _jitter(box: Sequence[float], rng: random.Random, spread: int) -> list[int]:
    x, y, w, h = (int(v) for v in box)
    x2 = min(SIZE[0], max(x + 8, x + w + rng.randint(-spread, spread)))
    y2 = min(SIZE[1], max(y + 8, y + h + rng.randint(-spread, spread)))
    x = max(0, min(x2 - 8, x + rng.randint(-spread, spread)))
    y = max(0, min(y2 - 8, y + rng.randint(-spread, spread)))
    return [x, y, x2 - x, y2 - y]


def _empty_spot(things: Sequence[Mapping[str, Any]], rng: random.Random) -> list[int]:
    """A box over background only (a detector's false alarm)."""
    while True:
        w, h = rng.randint(25, 45), rng.randint(25, 45)
        box = [rng.randint(0, SIZE[0] - w), rng.randint(0, SIZE[1] - h), w, h]
        if all(iou(box, t["box"]) == 0 for t in things):
            return box


def seeds_for(things: Sequence[Mapping[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """A weak detector's objects for ``things``: right ones a little off, and at least two faults."""
    faults = rng.sample(FAULTS, rng.randint(2, 4))
    order = list(range(len(things)))
    rng.shuffle(order)
    victim = dict(zip(("missing", "fragmented", "wrong_label"), order, strict=False))
    seeds: list[dict[str, Any]] = []
    for k, t in enumerate(things):
        if "missing" in faults and victim.get("missing") == k:
            continue
        caption = f"a {t['shape']}" if rng.random() < 0.7 else ""
        if "fragmented" in faults and victim.get("fragmented") == k:
            x, y, w, h = t["box"]
            part = int(w * 0.46)  # each piece overlaps the whole by under one half
            seeds.append({"label": t["label"], "box": [x, y, part, h], "description": caption})
            seeds.append({"label": t["label"], "box": [x + w - part, y, part, h], "description": ""})
            continue
        label = t["label"]
        if "wrong_label" in faults and victim.get("wrong_label") == k:
            label = f"{t['colour']} {rng.choice([s for s in SHAPES if s != t['shape']])}"
        seeds.append({"label": label, "box": _jitter(t["box"], rng, 3), "description": caption})
    if "invalid" in faults:
        seeds.append(
            {"label": rng.choice(NOTHING_LABELS), "box": _empty_spot(things, rng), "description": ""}
        )
    rng.shuffle(seeds)
    return seeds


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}
    rows: dict[str, list[dict[str, object]]] = {"items": [], "gold": []}
    for kind, count in (("items", items), ("gold", gold)):
        for i in range(count):
            things = _scene(rng)
            name = save_png(folder / "media", draw_scene(things))
            truth[name] = [{k: t[k] for k in ("label", "box", "description")} for t in things]
            row: dict[str, object] = {
                "id": f"{kind}-{i:04d}",
                "item": {
                    "image": name,
                    "width": SIZE[0],
                    "height": SIZE[1],
                    "alt": "A drawing of coloured shapes on a pale background.",
                    "objects": seeds_for(things, rng),
                },
            }
            if kind == "gold":
                row["answer"] = {"objects": [{"label": t["label"], "box": t["box"]} for t in things]}
            rows[kind].append(row)
    write_jsonl(folder / "items.jsonl", rows["items"])
    write_jsonl(folder / "gold.jsonl", rows["gold"])
    return truth


def _owner(box: Sequence[float], truth: Sequence[Mapping[str, Any]]) -> int | None:
    """The true object a seeded box lies mostly inside (or around), if any."""
    best, which = 0.0, None
    for k, t in enumerate(truth):
        x, y, w, h = (float(v) for v in box)
        tx, ty, tw, th = (float(v) for v in t["box"])
        across = min(x + w, tx + tw) - max(x, tx)
        down = min(y + h, ty + th) - max(y, ty)
        share = max(0.0, across) * max(0.0, down) / (w * h)
        if share > best:
            best, which = share, k
    return which if best >= 0.5 else None


def _garble(seeds: Sequence[Mapping[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for _ in range(max(1, len(seeds) + rng.randint(-1, 1))):
        w, h = rng.randint(10, 120), rng.randint(10, 120)
        box = [rng.randint(0, SIZE[0] - w), rng.randint(0, SIZE[1] - h), w, h]
        label = rng.choice([*NOTHING_LABELS, *(f"{c} {s}" for c in COLOURS for s in SHAPES)])
        out.append({"label": label, "box": box, "description": FILLER})
    return out


def simulated_answer(
    seeds: Sequence[Mapping[str, Any]],
    truth: Sequence[Mapping[str, Any]] | None,
    profile: Profile,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """What a bot of ``profile`` submits for a picture seeded with ``seeds`` whose true objects are ``truth``.

    Careful bots (strategy ``truth``) fix each fault with probability
    ``profile.accuracy``: delete a box around nothing, merge fragments
    (:func:`merge_objects`, as the page does), correct a label, snap a box to
    its object, draw a missing object; and describe every object. Spammers
    keep the seeds or garble them (half and half); copycats keep the seeds.
    Either way the answer passes the page's checks (labels, boxes, descriptions).
    """

    def keep(objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        # The seeds as they are; a description too short for the page becomes filler.
        out = []
        for o in objects:
            text = str(o.get("description") or "")
            out.append(
                {
                    "label": str(o["label"]),
                    "box": list(o["box"]),
                    "description": text if len(text) >= 10 else FILLER,
                }
            )
        return out

    if profile.strategy == "majority" or truth is None:
        return keep(seeds)
    if profile.strategy == "random":
        return keep(seeds) if rng.random() < 0.5 else _garble(seeds, rng)
    sure = profile.accuracy
    groups: dict[int, list[Mapping[str, Any]]] = {}
    answer: list[dict[str, Any]] = []
    for s in seeds:
        owner = _owner(s["box"], truth)
        if owner is None:
            if rng.random() >= sure:  # the box around nothing survives
                answer.extend(keep([s]))
            continue
        groups.setdefault(owner, []).append(s)
    for k, t in enumerate(truth):
        pieces = groups.get(k)
        if not pieces:
            if rng.random() < sure:
                answer.append(
                    {"label": t["label"], "box": _jitter(t["box"], rng, 1), "description": t["description"]}
                )
            continue
        if len(pieces) > 1 and rng.random() >= sure:  # fragments left apart
            answer.extend(keep(pieces))
            continue
        obj = merge_objects(pieces) if len(pieces) > 1 else dict(pieces[0])
        label = t["label"] if rng.random() < sure else str(obj["label"])
        box = _jitter(t["box"], rng, 1) if rng.random() < sure else [int(round(v)) for v in obj["box"]]
        answer.append({"label": label, "box": box, "description": t["description"]})
    if not answer:
        answer = keep(seeds)
    return answer


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data: dict[str, str] = {}
    for fieldset in slots_of(form, "objects-item"):
        img, field = fieldset.find("img"), fieldset.find("input", attrs={"data-objects-field": True})
        assert isinstance(img, Tag) and isinstance(field, Tag)
        seeds = json.loads(str(field.get("value", "[]")))
        answer = simulated_answer(seeds, truth.get(image_name(img)), profile, rng)
        data[str(field["name"])] = json.dumps(answer)
    return data


DEMO = DemoTask(
    template="objects",
    title="Fix the boxes and labels of shapes in drawings, and describe each shape",
    description="Correct a rough list of the shapes in each drawing (boxes, labels) and describe each one.",
    keywords="images, objects, bounding boxes, annotation",
    write_data=write,
    fill_form=fill,
    items_per_hit=2,
    gold_per_hit=1,
    template_options={"iou_threshold": 0.5, "gold_pass_score": 0.75},
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
