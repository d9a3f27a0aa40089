"""Demo for the select template: candidate sentences, some true of the drawing, some not."""

from __future__ import annotations

import random
from pathlib import Path

from bs4 import Tag

from demo.data import Scene, draw, random_scene, sentence_with_rating
from demo.profiles import Profile
from demo.tasks import DemoTask, ItemAndKey, Truth, image_name, save_png, slots_of, write_items_and_gold

CANDIDATES = 8
NONE_SHARE = 0.15  # items where no candidate fits


def true_sentences(scene: Scene) -> list[str]:
    """Sentences that describe the scene, worded differently."""
    first, second = article(scene.first.words()), article(scene.second.words())
    where = "below" if scene.relation == "above" else "beside"
    turned = f"{second[0].upper()}{second[1:]} {where} {first}."
    return [scene.sentence(), turned, f"Two shapes: {first} and {second}."]


def article(words: str) -> str:
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


def candidates_for(scene: Scene, rng: random.Random) -> tuple[list[str], list[int]]:
    """Shuffled candidate sentences and the indices of those that are true."""
    right = [] if rng.random() < NONE_SHARE else rng.sample(true_sentences(scene), rng.randint(1, 2))
    wrong: list[str] = []
    while len(right) + len(wrong) < CANDIDATES:
        sentence = sentence_with_rating(scene, rng.choice((1, 2)), rng)
        if sentence not in wrong and sentence not in right:
            wrong.append(sentence)
    labelled = [(s, True) for s in right] + [(s, False) for s in wrong]
    rng.shuffle(labelled)
    return [s for s, _ in labelled], [i for i, (_, ok) in enumerate(labelled) if ok]


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}

    def make_row(kind: str, i: int) -> ItemAndKey:
        scene = random_scene(rng)
        name = save_png(folder / "media", draw(scene))
        sentences, correct = candidates_for(scene, rng)
        truth[name] = correct
        item = {"image": name, "sentences": sentences, "alt": "A drawing of two coloured shapes."}
        return item, {"correct": correct}

    write_items_and_gold(folder, items, gold, make_row)
    return truth


def choose(truth: Truth, key: str, count: int, profile: Profile, rng: random.Random) -> list[int]:
    """The ticked candidates for one picture ([] is "no caption is correct")."""
    if profile.strategy == "majority":
        return [0]  # the first sentence, ticked without reading: what looks like consensus
    if profile.strategy == "random" or key not in truth:
        return [] if rng.random() < 0.2 else sorted(rng.sample(range(count), rng.randint(1, 3)))
    chosen = set(truth[key])
    if rng.random() >= profile.accuracy:  # a slip: one sentence judged wrongly
        chosen ^= {rng.randrange(count)}
    return sorted(chosen)


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data = {}
    for slot, fieldset in enumerate(slots_of(form, "pair")):
        img = fieldset.find("img")
        assert isinstance(img, Tag)
        count = len(fieldset.find_all("input", attrs={"data-role": "candidate"}))
        ticked = choose(truth, image_name(img), count, profile, rng)
        if not ticked:
            data[f"select-{slot}-none"] = "on"
        for j in ticked:
            data[f"select-{slot}-{j}"] = "on"
    return data


DEMO = DemoTask(
    template="select",
    title="Tick the sentences that describe simple drawings",
    description="For each drawing, tick every sentence that describes it, or say that none does.",
    keywords="images, descriptions, selection",
    write_data=write,
    fill_form=fill,
    items_per_hit=3,
    gold_per_hit=1,
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
