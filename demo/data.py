"""Demo data drawn locally: scenes of coloured shapes whose content is known.

Because every picture is generated from a scene description, the true rating
of each sentence is known by construction, so gold answers are true and the
simulated crowd can be scored. Nothing is downloaded.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from demo.picture_names import picture_name

COLOURS = {
    "red": (214, 39, 40),
    "blue": (31, 119, 180),
    "green": (44, 160, 44),
    "yellow": (238, 200, 30),
    "purple": (148, 103, 189),
    "orange": (255, 127, 14),
}
SHAPES = ("circle", "square", "triangle")
RELATIONS = ("above", "beside")


@dataclass(frozen=True)
class Thing:
    colour: str
    shape: str

    def words(self) -> str:
        return f"{self.colour} {self.shape}"


@dataclass(frozen=True)
class Scene:
    first: Thing
    second: Thing
    relation: str

    def sentence(self) -> str:
        article = "An" if self.first.colour[0] in "aeiou" else "A"
        other = "an" if self.second.colour[0] in "aeiou" else "a"
        relation = "above" if self.relation == "above" else "next to"
        return f"{article} {self.first.words()} {relation} {other} {self.second.words()}."


def _other(rng: random.Random, options: tuple[str, ...] | list[str], not_this: str) -> str:
    return rng.choice([o for o in options if o != not_this])


def random_scene(rng: random.Random) -> Scene:
    first = Thing(rng.choice(list(COLOURS)), rng.choice(SHAPES))
    second = Thing(_other(rng, list(COLOURS), first.colour), rng.choice(SHAPES))
    return Scene(first, second, rng.choice(RELATIONS))


def sentence_with_rating(scene: Scene, rating: int, rng: random.Random) -> str:
    """A sentence about ``scene`` whose true 1-to-4 rating is ``rating``."""
    if rating == 4:
        return scene.sentence()
    if rating == 3:  # one moderate slip: a wrong colour on one object
        wrong = Thing(_other(rng, list(COLOURS), scene.second.colour), scene.second.shape)
        if wrong.colour == scene.first.colour:
            wrong = Thing(
                _other(rng, [c for c in COLOURS if c != scene.first.colour], scene.second.colour),
                scene.second.shape,
            )
        return Scene(scene.first, wrong, scene.relation).sentence()
    if rating == 2:  # a major error: one object entirely wrong
        wrong = Thing(_other(rng, list(COLOURS), scene.first.colour), _other(rng, SHAPES, scene.first.shape))
        return Scene(wrong, scene.second, scene.relation).sentence()
    # rating 1: nothing in the sentence is in the picture
    used = {scene.first.colour, scene.second.colour}
    free = [c for c in COLOURS if c not in used]
    a = Thing(free[0], _other(rng, SHAPES, scene.first.shape))
    b = Thing(free[1], _other(rng, SHAPES, scene.second.shape))
    return Scene(a, b, scene.relation).sentence()


def draw(scene: Scene, size: tuple[int, int] = (320, 240)) -> bytes:
    """A PNG of the scene."""
    image = Image.new("RGB", size, (245, 245, 240))
    pen = ImageDraw.Draw(image)
    w, h = size
    if scene.relation == "above":
        boxes = [(w // 2 - 45, 20, w // 2 + 45, 110), (w // 2 - 45, 130, w // 2 + 45, 220)]
    else:
        boxes = [(30, 75, 130, 175), (190, 75, 290, 175)]
    for thing, box in zip((scene.first, scene.second), boxes, strict=True):
        colour = COLOURS[thing.colour]
        if thing.shape == "circle":
            pen.ellipse(box, fill=colour)
        elif thing.shape == "square":
            pen.rectangle(box, fill=colour)
        else:
            x0, y0, x1, y1 = box
            pen.polygon([((x0 + x1) // 2, y0), (x1, y1), (x0, y1)], fill=colour)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_rating_demo(folder: Path, *, items: int, gold: int, seed: int = 7) -> dict[str, int]:
    """Write items.jsonl, gold.jsonl and media/ for the rating demo; return the truth.

    The returned mapping (sentence + image -> true rating) is what the
    simulated crowd "sees"; it never goes to the server.
    """
    rng = random.Random(seed)
    media = folder / "media"
    media.mkdir(parents=True, exist_ok=True)
    truth: dict[str, int] = {}

    def make(n: int, prefix: str, handle: io.TextIOWrapper, with_answer: bool) -> None:
        for i in range(n):
            scene = random_scene(rng)
            png = draw(scene)
            # Named by what it shows: a file name cannot tell gold from ordinary items.
            name = picture_name(png)
            (media / name).write_bytes(png)
            rating = rng.choice((1, 2, 3, 4))
            sentence = sentence_with_rating(scene, rating, rng)
            truth[f"{name}|{sentence}"] = rating
            row: dict[str, object] = {
                "id": f"{prefix}{i:04d}",
                "item": {"image": name, "sentence": sentence, "alt": "A drawing of two coloured shapes."},
            }
            if with_answer:
                row["answer"] = {"rating": rating}
            handle.write(json.dumps(row) + "\n")

    with (folder / "items.jsonl").open("w") as fh:
        make(items, "item-", fh, False)
    with (folder / "gold.jsonl").open("w") as fh:
        make(gold, "gold-", fh, True)
    return truth
