"""Demo for the compare template: drawings described by made-up systems of different skill.

Every candidate is a sentence of known 1-to-4 quality about its drawing, and
the candidates of one item never share a quality, so the true order is known.
Four systems write them; each has a typical skill, and per item a little luck,
so the better systems win most comparisons but not all. Some items have two
candidates (a plain side-by-side choice), others three or four.
"""

from __future__ import annotations

import random
from pathlib import Path

from bs4 import Tag

from demo.data import draw, random_scene, sentence_with_rating
from demo.profiles import Profile
from demo.tasks import (
    DemoTask,
    ItemAndKey,
    Truth,
    image_name,
    save_png,
    slots_of,
    truth_key,
    write_items_and_gold,
)

#: System -> typical skill; per item each draws skill + Gaussian luck, and the luckiest writes best.
SYSTEMS = {"keen": 1.2, "steady": 0.6, "hasty": 0.0, "muddled": -0.6}
LUCK = 0.7
CANDIDATE_COUNTS = (2, 3, 3, 4)


def candidates_for(
    scene_sentences: dict[int, str], rng: random.Random
) -> tuple[list[dict[str, str]], list[str]]:
    """Shuffled candidates (neutral ids c1.., with their system) and the true order, best first."""
    count = rng.choice(CANDIDATE_COUNTS)
    systems = rng.sample(sorted(SYSTEMS), count)
    by_skill = sorted(systems, key=lambda s: SYSTEMS[s] + rng.gauss(0, LUCK), reverse=True)
    ratings = sorted(rng.sample(sorted(scene_sentences), count), reverse=True)
    written = [(system, scene_sentences[rating]) for system, rating in zip(by_skill, ratings, strict=True)]
    best_first = [text for _, text in written]
    rng.shuffle(written)
    candidates = [
        {"id": f"c{k + 1}", "text": text, "system": system} for k, (system, text) in enumerate(written)
    ]
    ids = {c["text"]: c["id"] for c in candidates}
    return candidates, [ids[text] for text in best_first]


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}

    def make_row(kind: str, i: int) -> ItemAndKey:
        scene = random_scene(rng)
        name = save_png(folder / "media", draw(scene))
        sentences = {rating: sentence_with_rating(scene, rating, rng) for rating in (4, 3, 2, 1)}
        candidates, order = candidates_for(sentences, rng)
        text_of = {c["id"]: c["text"] for c in candidates}
        truth[truth_key(name, list(text_of.values()))] = [text_of[c] for c in order]
        item = {"image": name, "alt": "A drawing of two coloured shapes.", "candidates": candidates}
        return item, {"order": order}

    write_items_and_gold(folder, items, gold, make_row)
    return truth


def rank(truth: Truth, key: str, shown: list[str], profile: Profile, rng: random.Random) -> list[str]:
    """The texts ``shown`` (in page order) put in order, best first, as the profile would."""
    if profile.strategy == "majority":
        return list(shown)  # the order of the page, unread: "the first one looks fine"
    if profile.strategy == "random" or key not in truth:
        return rng.sample(shown, len(shown))
    order = list(truth[key])
    if rng.random() >= profile.accuracy:  # a slip: two neighbours swapped
        k = rng.randrange(len(order) - 1)
        order[k], order[k + 1] = order[k + 1], order[k]
    return order


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data: dict[str, str] = {}
    for fieldset in slots_of(form, "compare-item"):
        img = fieldset.find("img")
        assert isinstance(img, Tag)
        texts = [p.get_text() for p in fieldset.find_all("p", class_="candidate-text")]
        order = rank(truth, truth_key(image_name(img), texts), texts, profile, rng)
        selects = [s for s in fieldset.find_all("select") if isinstance(s, Tag)]
        if selects:  # three or more: a place for each, in page order
            for select, text in zip(selects, texts, strict=True):
                data[str(select["name"])] = str(order.index(text) + 1)
        else:  # two: the radio whose value puts the chosen one first
            radios = [r for r in fieldset.find_all("input", type="radio") if isinstance(r, Tag)]
            data[str(radios[0]["name"])] = str(radios[texts.index(order[0])]["value"])
    return data


DEMO = DemoTask(
    template="compare",
    title="Put descriptions of simple drawings in order, best first",
    description="For each drawing, read two to four descriptions and order them from best to worst.",
    keywords="images, descriptions, comparison, ranking",
    write_data=write,
    fill_form=fill,
    items_per_hit=3,
    gold_per_hit=1,
    template_options={"gold_pass_score": 0.8},
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
