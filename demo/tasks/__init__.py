"""Demo campaigns for every built-in template, with the truth the simulated crowd needs.

A demo task writes a campaign's items, gold and images from drawn scenes whose
content is known, so gold answers are true by construction; and it tells a
bot how to fill that template's page given the truth and the bot's profile.
The truth is keyed by what a person sees on the page (image file name and
text), never by item ids, because the page does not show which item is gold.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bs4 import Tag

from demo.profiles import Profile

#: What a demo's bots "know": page fingerprint -> true answer.
Truth = dict[str, Any]
WriteData = Callable[[Path, int, int, int], Truth]
#: One demo row: the item's payload and its true answer key (kept only for gold rows).
ItemAndKey = tuple[dict[str, Any], Any]
FillForm = Callable[[Tag, Truth, Profile, random.Random], dict[str, str]]


@dataclass(frozen=True)
class DemoTask:
    """One template's demo: its campaign settings, its data and how bots answer."""

    template: str
    title: str
    description: str
    keywords: str
    write_data: WriteData
    fill_form: FillForm
    items_per_hit: int = 4
    gold_per_hit: int = 2
    template_options: dict[str, Any] = field(default_factory=dict)
    quality: dict[str, Any] = field(
        default_factory=lambda: {"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 4}
    )


def demo_tasks() -> dict[str, DemoTask]:
    """The demo for each built-in template, by template name."""
    from demo.tasks import compare, heatmap, objects, rank, rating, refine, select, spans, sxs, target, write

    return {
        m.DEMO.template: m.DEMO
        for m in (rating, select, write, spans, target, compare, sxs, objects, rank, heatmap, refine)
    }


def get_demo_task(name: str) -> DemoTask:
    """The demo for template ``name``; an unknown name lists those that exist."""
    tasks = demo_tasks()
    if name not in tasks:
        raise KeyError(f"no demo for template {name!r}; choose one of: {', '.join(sorted(tasks))}")
    return tasks[name]


def image_name(img: Tag) -> str:
    """The file name an ``<img>`` shows (demo images are named by content)."""
    return str(img["src"]).split("?", 1)[0].rsplit("/", 1)[-1]


def truth_key(picture: str, shown: list[str]) -> str:
    """What a person sees of an item: its picture and the set of things ``shown`` beside it, in any order.

    The compare and sxs demos show descriptions beside a drawing, the rank demo candidate pictures
    beside a reference; the page's order is drawn per assignment, so the key ignores it.
    """
    return picture + "|" + "|".join(sorted(shown))


def slots_of(form: Tag, css_class: str) -> list[Tag]:
    """The page's item fieldsets, in slot order."""
    return [t for t in form.find_all("fieldset", class_=css_class) if isinstance(t, Tag)]


def save_png(media: Path, png: bytes) -> str:
    """Store a picture named by what it shows (a name cannot tell gold from ordinary items)."""
    from demo.picture_names import picture_name

    media.mkdir(parents=True, exist_ok=True)
    name = picture_name(png)
    (media / name).write_bytes(png)
    return name


def write_drawn_items(
    folder: Path,
    items: int,
    seed: int,
    *,
    id_prefix: str,
    truth_of: Callable[[Any], Any],
    payload: Mapping[str, Any],
) -> Truth:
    """Items of one new drawing each, and no gold: the templates whose workers write about a picture.

    Each item is ``{"image": <drawing>, **payload}`` with the id ``<id_prefix>-0000``...; the truth
    per drawing is ``truth_of(its scene)``, what a careful person could say about it.
    """
    from demo.data import draw, random_scene

    rng = random.Random(seed)
    truth: Truth = {}
    rows = []
    for i in range(items):
        scene = random_scene(rng)
        name = save_png(folder / "media", draw(scene))
        truth[name] = truth_of(scene)
        rows.append({"id": f"{id_prefix}-{i:04d}", "item": {"image": name, **payload}})
    write_jsonl(folder / "items.jsonl", rows)
    return truth


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def write_items_and_gold(
    folder: Path, items: int, gold: int, make_row: Callable[[str, int], ItemAndKey]
) -> None:
    """Write ``items.jsonl`` and ``gold.jsonl`` with rows from ``make_row(kind, index)``.

    ``kind`` is "items" or "gold"; every row is made the same way (so gold looks like any
    other item) and only gold rows keep their answer key.
    """
    rows: dict[str, list[dict[str, Any]]] = {"items": [], "gold": []}
    for kind, count in (("items", items), ("gold", gold)):
        for i in range(count):
            item, key = make_row(kind, i)
            row: dict[str, Any] = {"id": f"{kind}-{i:04d}", "item": item}
            if kind == "gold":
                row["answer"] = key
            rows[kind].append(row)
    write_jsonl(folder / "items.jsonl", rows["items"])
    write_jsonl(folder / "gold.jsonl", rows["gold"])
