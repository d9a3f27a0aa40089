"""Demo for the 1-to-4 rating template: drawn scenes and sentences of known quality."""

from __future__ import annotations

import random
from pathlib import Path

from bs4 import Tag

from demo.data import write_rating_demo
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, slots_of

QUOTES = "\u201c\u201d"
#: The rating a copycat gives everything: the middle-high answer most raters pick.
MAJORITY_RATING = 3


def rate(truth: Truth, key: str, profile: Profile, rng: random.Random) -> int:
    """A rating for the pair ``key``, according to the profile."""
    if profile.strategy == "majority":
        return MAJORITY_RATING
    if profile.strategy == "random" or key not in truth:
        return rng.randint(1, 4)
    true = int(truth[key])
    if rng.random() < profile.accuracy:
        return true
    # A slip lands on a neighbouring rating, never back on the true one.
    return rng.choice([r for r in (true - 1, true + 1) if 1 <= r <= 4])


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    """Rate every pair on the page."""
    data = {}
    for index, pair in enumerate(slots_of(form, "pair")):
        img, sentence = pair.find("img"), pair.find("p", class_="sentence")
        assert isinstance(img, Tag) and isinstance(sentence, Tag)
        key = f"{image_name(img)}|{sentence.get_text().strip().strip(QUOTES)}"
        data[f"rating-{index}"] = str(rate(truth, key, profile, rng))
    return data


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    return dict(write_rating_demo(folder, items=items, gold=gold, seed=seed))


DEMO = DemoTask(
    template="rating",
    title="Rate how well short sentences describe simple drawings",
    description="Look at each drawing and rate its sentence from 1 (wrong) to 4 (exact).",
    keywords="images, rating, descriptions",
    write_data=write,
    fill_form=fill,
    template_options={"gold_tolerance": 0},
)
