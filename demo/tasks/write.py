"""Demo for the write template: one sentence per drawing; no gold, quality from signals."""

from __future__ import annotations

import random
import string
from pathlib import Path

from bs4 import Tag

from demo.data import Scene
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, slots_of, write_drawn_items

EXAMPLE = "A small white dog wearing a red hat."


def _a(words: str) -> str:
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


def phrasings(scene: Scene) -> list[str]:
    """Ways a careful person might describe the scene in one sentence."""
    one, two = _a(scene.first.words()), _a(scene.second.words())
    if scene.relation == "above":
        return [
            scene.sentence(),
            f"{one.capitalize()} sits on top of {two}.",
            f"There is {one} over {two} on a pale background.",
            f"{two.capitalize()} under {one}.",
        ]
    return [
        scene.sentence(),
        f"{one.capitalize()} on the left and {two} on the right.",
        f"There is {one} beside {two} on a pale background.",
        f"{two.capitalize()} to the right of {one}.",
    ]


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    """Items only (this template takes no gold); the truth is each drawing's scene phrasings."""
    payload = {"alt": "A drawing of two coloured shapes.", "example": EXAMPLE}
    return write_drawn_items(folder, items, seed, id_prefix="items", truth_of=phrasings, payload=payload)


def _gibberish(rng: random.Random) -> str:
    count = rng.randint(2, 4)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 7))) for _ in range(count)]
    return " ".join(words).capitalize() + "."


def sentence(truth: Truth, key: str, slot: int, profile: Profile, rng: random.Random) -> str:
    """The sentence a bot writes for one drawing."""
    if profile.strategy == "random" or key not in truth:
        return _gibberish(rng)
    if profile.strategy == "majority":
        return f"Some shapes in picture {slot + 1}."  # generic, written without looking
    options = truth[key]
    text = rng.choice(options)
    if rng.random() >= profile.accuracy:  # a careless one: terse and misspelt
        text = text.replace("circle", "cirle").replace("square", "sqare").replace("triangle", "triangel")
    return text


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data = {}
    used: set[str] = set()
    for slot, fieldset in enumerate(slots_of(form, "pair")):
        img = fieldset.find("img")
        assert isinstance(img, Tag)
        text = sentence(truth, image_name(img), slot, profile, rng)
        if text in used:  # the page refuses the same sentence twice; a person would reword
            text = text.rstrip(".") + ", once more."
        used.add(text)
        data[f"sentence-{slot}"] = text
    return data


DEMO = DemoTask(
    template="write",
    title="Describe simple drawings in one sentence each",
    description="Write one short sentence for each drawing: what shapes, what colours, where.",
    keywords="images, descriptions, writing",
    write_data=write,
    fill_form=fill,
    items_per_hit=3,
    gold_per_hit=0,
)
