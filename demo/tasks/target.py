"""Demo for the target template: a boxed shape and an expression of known category."""

from __future__ import annotations

import random
from pathlib import Path

from bs4 import Tag

from demo.data import SHAPES, Scene, Thing, draw, random_scene
from demo.profiles import Profile
from demo.tasks import DemoTask, ItemAndKey, Truth, image_name, save_png, slots_of, write_items_and_gold

SIZE = (320, 240)
CATEGORIES = ("A", "O", "M", "F")
SYSTEMS = ("system-a", "system-b")
#: The category a copycat gives everything: most expressions are adequate.
MAJORITY = "A"
EXTRA_KINDS = ("star", "heart", "arrow")


def boxes(scene: Scene) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """Where ``demo_data.draw`` puts the two shapes, as (x, y, width, height)."""
    w = SIZE[0]
    if scene.relation == "above":
        return (w // 2 - 45, 20, 90, 90), (w // 2 - 45, 130, 90, 90)
    return (30, 75, 100, 100), (190, 75, 100, 100)


def expression(scene: Scene, category: str, rng: random.Random) -> str:
    """A referring expression for the first shape with the given true category."""
    target, other = scene.first, scene.second
    where = "at the top" if scene.relation == "above" else "on the left"
    if category == "A":
        options = [f"the {target.words()}", f"the {target.shape} {where}", f"{target.colour} {target.shape}"]
        return rng.choice(options)
    if category == "O":
        return rng.choice([f"the {target.colour} one", f"the thing {where}", "it", f"the shape {where}"])
    if category == "M":
        return rng.choice([f"the {other.shape}", f"the {other.words()}"])
    absent = [k for k in SHAPES + EXTRA_KINDS if k not in (target.shape, other.shape)]
    return f"the {rng.choice(absent)} {where}"


def _scene_for(category: str, rng: random.Random) -> Scene:
    scene = random_scene(rng)
    while category == "M" and scene.second.shape == scene.first.shape:
        scene = Scene(scene.first, Thing(scene.second.colour, rng.choice(SHAPES)), scene.relation)
    return scene


def _box(scene: Scene, category: str) -> dict[str, int]:
    (x, y, w, h), (x2, y2, _, _) = boxes(scene)
    if category == "M":  # the frame also takes in part of the other shape
        if scene.relation == "above":
            h = y2 - y + 30
        else:
            w = x2 - x + 30
    return {"x": x - 5, "y": y - 5, "width": w + 10, "height": h + 10}


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}

    def make_row(kind: str, i: int) -> ItemAndKey:
        category = rng.choices(CATEGORIES, weights=(5, 2, 1, 2))[0]
        scene = _scene_for(category, rng)
        name = save_png(folder / "media", draw(scene, SIZE))
        text = expression(scene, category, rng)
        truth[f"{name}|{text}"] = category
        item = {
            "image": name,
            "width": SIZE[0],
            "height": SIZE[1],
            "box": _box(scene, category),
            "expression": text,
            "item_id": f"{kind}-{i:04d}",
            "system": SYSTEMS[i % len(SYSTEMS)],
            "alt": "A drawing of two coloured shapes.",
        }
        return item, {"category": category}

    write_items_and_gold(folder, items, gold, make_row)
    return truth


def categorise(truth: Truth, key: str, profile: Profile, rng: random.Random) -> str:
    if profile.strategy == "majority":
        return MAJORITY
    if profile.strategy == "random" or key not in truth:
        return rng.choice(CATEGORIES)
    true = str(truth[key])
    if rng.random() < profile.accuracy:
        return true
    return rng.choice([c for c in CATEGORIES if c != true])


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data = {}
    for slot, fieldset in enumerate(slots_of(form, "target-item")):
        img, text = fieldset.find("img"), fieldset.find("p", class_="expression")
        assert isinstance(img, Tag) and isinstance(text, Tag)
        key = f"{image_name(img)}|{text.get_text().strip()}"
        data[f"category-{slot}"] = categorise(truth, key, profile, rng)
    return data


DEMO = DemoTask(
    template="target",
    title="Check whether descriptions name the framed shape",
    description="Say whether each description names the framed shape, names nothing, or names another.",
    keywords="images, referring expressions, annotation",
    write_data=write,
    fill_form=fill,
    items_per_hit=4,
    gold_per_hit=2,
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
