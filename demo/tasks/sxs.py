"""Demo for the sxs template: two made-up systems' descriptions of a drawing, judged on five metrics.

Each candidate is a sentence of known 1-to-4 quality about its drawing (the
two of an item never share one). Three systems write them, each with a
typical skill and a little luck per item. The true preference on a metric
follows the quality gap: one step is "marginally", two or more
"substantially" better. Specificity moves half as much (every sentence names
two coloured shapes, right or wrong), and human-likeness is always neutral
(all of them come from the same sentence maker).
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
from hits.requester.templates.sxs import METRICS

#: System -> typical skill; per item each draws skill + Gaussian luck, and the luckier writes better.
SYSTEMS = {"keen": 1.0, "steady": 0.3, "hasty": -0.5}
LUCK = 0.7


def preferences(first: int, second: int) -> dict[str, int]:
    """The true preference per metric between qualities ``first`` and ``second`` (positive: second)."""
    gap = second - first
    step = max(-2, min(2, gap))
    half = max(-2, min(2, int(gap / 2)))
    return {
        "comprehensiveness": step,
        "specificity": half,
        "hallucinations": step,
        "tldr": step,
        "human_likeness": 0,
    }


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}

    def make_row(kind: str, i: int) -> ItemAndKey:
        scene = random_scene(rng)
        name = save_png(folder / "media", draw(scene))
        systems = rng.sample(sorted(SYSTEMS), 2)
        luck = {s: SYSTEMS[s] + rng.gauss(0, LUCK) for s in systems}
        high, low = sorted(rng.sample((4, 3, 2, 1), 2), reverse=True)
        quality = {s: high if luck[s] == max(luck.values()) else low for s in systems}
        texts = {s: sentence_with_rating(scene, quality[s], rng) for s in systems}
        candidates = [{"id": f"c{k + 1}", "text": texts[s], "system": s} for k, s in enumerate(systems)]
        truth[truth_key(name, list(texts.values()))] = {texts[s]: quality[s] for s in systems}
        item = {"image": name, "alt": "A drawing of two coloured shapes.", "candidates": candidates}
        return item, {"preferences": preferences(quality[systems[0]], quality[systems[1]])}

    write_items_and_gold(folder, items, gold, make_row)
    return truth


def judge(
    truth: Truth, key: str, left: str, right: str, profile: Profile, rng: random.Random
) -> dict[str, int]:
    """Answers in page terms (negative: left better) for ``left`` and ``right``, as the profile would."""
    if profile.strategy == "majority":
        return dict.fromkeys(METRICS, 0)  # "about the same", unread
    if profile.strategy == "random" or key not in truth:
        return {m: rng.randint(-2, 2) for m in METRICS}
    answer = preferences(truth[key][left], truth[key][right])
    for metric in answer:
        if rng.random() >= profile.accuracy:  # a slip: one step off
            answer[metric] = max(-2, min(2, answer[metric] + rng.choice((-1, 1))))
    return answer


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data: dict[str, str] = {}
    for i, fieldset in enumerate(slots_of(form, "sxs-item")):
        img = fieldset.find("img")
        assert isinstance(img, Tag)
        left, right = [p.get_text() for p in fieldset.find_all("p", class_="candidate-text")]
        answer = judge(truth, truth_key(image_name(img), [left, right]), left, right, profile, rng)
        data.update({f"sxs-{i}-{metric}": str(value) for metric, value in answer.items()})
    return data


DEMO = DemoTask(
    template="sxs",
    title="Compare two descriptions of a simple drawing on five questions",
    description="Say which of two descriptions of a drawing is better on five questions, and by how much.",
    keywords="images, descriptions, side by side, comparison",
    write_data=write,
    fill_form=fill,
    items_per_hit=3,
    gold_per_hit=1,
    template_options={"gold_tolerance": 1, "gold_pass_score": 1.0},
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
