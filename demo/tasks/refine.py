"""Demo for the refine template: descriptions of drawings improved one worker at a time.

The truth per drawing is a list of true statements about it. A careful bot
keeps the text it is given and adds the first true statement it lacks; when
nothing is missing it polishes one word (so late rounds change little and
the chain converges). A careless bot adds a statement with a misspelling; a
spammer replaces the text with nonsense, which the spelling check rejects.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

from bs4 import Tag

from demo.data import Scene
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, slots_of, write_drawn_items

ALT = "A drawing of two coloured shapes."
#: One-word polishes a careful bot makes when the text already says everything.
POLISH = [("plain", "smooth"), ("smooth", "plain"), ("exactly", "just"), ("just", "exactly")]


def facts(scene: Scene) -> list[str]:
    """True statements about the drawing, most important first."""
    one, two = scene.first.words(), scene.second.words()
    where = ("top", "bottom") if scene.relation == "above" else ("left", "right")
    return [
        scene.sentence(),
        f"The {one} is at the {where[0]} of the picture.",
        f"The {two} is at the {where[1]} of the picture.",
        "There are exactly two shapes on a plain pale background.",
        "Both shapes are drawn flat, without outlines or shadows.",
    ]


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    """Drawings only (no gold, no descriptions): the workflow's seeder gives each its first text to refine."""
    return write_drawn_items(folder, items, seed, id_prefix="pic", truth_of=facts, payload={"alt": ALT})


def _present(text: str, fact: str) -> bool:
    return fact.casefold().rstrip(".") in text.casefold()


def improve(previous: str, statements: list[str], profile: Profile, rng: random.Random) -> str:
    """The text a bot submits for a drawing whose current description is ``previous``."""
    if profile.strategy == "random" or not statements:
        count = rng.randint(8, 14)
        return " ".join(
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 8))) for _ in range(count)
        )
    if profile.strategy == "majority":
        return previous + " Some shapes are in it."
    missing = [f for f in statements if not _present(previous, f)]
    if missing:
        addition = missing[0]
        if rng.random() >= profile.accuracy:
            addition = addition.replace("picture", "pictre").replace("shapes", "shaeps")
        return (previous.rstrip() + " " + addition).strip()
    for old, new in POLISH:
        if f" {old} " in previous:
            return previous.replace(f" {old} ", f" {new} ", 1)
    return previous.rstrip(".") + ", as drawn."


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data = {}
    for slot, fieldset in enumerate(slots_of(form, "refine")):
        img = fieldset.find("img")
        box = fieldset.find("textarea")
        assert isinstance(img, Tag) and isinstance(box, Tag)
        data[f"text-{slot}"] = improve(box.get_text(), truth.get(image_name(img), []), profile, rng)
    return data


DEMO = DemoTask(
    template="refine",
    title="Improve the description of a drawing",
    description="Read a description of a simple drawing, correct it and add what is missing.",
    keywords="images, descriptions, writing, editing",
    write_data=write,
    fill_form=fill,
    items_per_hit=1,
    gold_per_hit=0,
)
