"""Demo for the rank template: three made-up models redraw a drawing; rank their redrawings.

A reference drawing of two coloured shapes is "reconstructed" by three
systems from one, two or three sentences about it (the item's condition).
Each redrawing differs from the reference in a known number of ways (a
colour, a shape or the layout changed), so its true rank is known: fewer
differences rank better, and redrawings with as many differences tie. A
system's number of differences comes from its skill, the condition (more
sentences, fewer mistakes) and a little luck per item.
"""

from __future__ import annotations

import random
from pathlib import Path

from bs4 import Tag

from demo.data import COLOURS, RELATIONS, SHAPES, Scene, Thing, draw, random_scene
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, save_png, slots_of, truth_key, write_jsonl
from hits.requester.templates.rank import normalised

#: System -> mean number of differences from the reference with one sentence to go on.
SYSTEMS = {"keen": 1.0, "steady": 1.8, "hasty": 2.6}
#: Condition -> how many fewer differences it brings (the more sentences, the closer).
CONDITIONS = {"sentence 1": 0.0, "sentences 1-2": 0.5, "sentences 1-3": 1.0}
LUCK = 0.6
CHANGES = ("first colour", "second colour", "first shape", "second shape", "layout")


def redraw(scene: Scene, differences: int, rng: random.Random) -> Scene:
    """``scene`` with ``differences`` of its five features changed."""
    first, second, relation = scene.first, scene.second, scene.relation
    for change in rng.sample(CHANGES, differences):
        if change == "first colour":
            colours = [c for c in COLOURS if c not in (first.colour, second.colour)]
            first = Thing(rng.choice(colours), first.shape)
        elif change == "second colour":
            colours = [c for c in COLOURS if c not in (first.colour, second.colour)]
            second = Thing(rng.choice(colours), second.shape)
        elif change == "first shape":
            first = Thing(first.colour, rng.choice([s for s in SHAPES if s != first.shape]))
        elif change == "second shape":
            second = Thing(second.colour, rng.choice([s for s in SHAPES if s != second.shape]))
        else:
            relation = next(r for r in RELATIONS if r != relation)
    return Scene(first, second, relation)


def true_ranks(differences: dict[str, int]) -> dict[str, int]:
    """Ranks (1 closest) from each picture's number of differences; equal numbers tie."""
    return normalised(differences)


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}
    rows: dict[str, list[dict[str, object]]] = {"items": [], "gold": []}
    conditions = list(CONDITIONS)
    for kind, count in (("items", items), ("gold", gold)):
        for i in range(count):
            condition = conditions[i % len(conditions)]
            scene = random_scene(rng)
            reference = save_png(folder / "media", draw(scene))
            while True:
                diffs = {
                    s: max(0, min(len(CHANGES), round(skill - CONDITIONS[condition] + rng.gauss(0, LUCK))))
                    for s, skill in SYSTEMS.items()
                }
                # A gold key that ties everything would grade nobody (tau-b is undefined).
                if kind == "items" or len(set(diffs.values())) > 1:
                    break
            systems = rng.sample(sorted(SYSTEMS), len(SYSTEMS))  # candidate ids say nothing of systems
            images = {s: save_png(folder / "media", draw(redraw(scene, diffs[s], rng))) for s in systems}
            candidates = [{"id": f"c{k + 1}", "image": images[s], "system": s} for k, s in enumerate(systems)]
            truth[truth_key(reference, list(images.values()))] = {images[s]: diffs[s] for s in systems}
            row: dict[str, object] = {
                "id": f"{kind}-{i:04d}",
                "item": {
                    "image": reference,
                    "alt": "a drawing of two coloured shapes",
                    "candidates": candidates,
                    "condition": condition,
                },
            }
            if kind == "gold":
                row["answer"] = {"ranks": true_ranks({f"c{k + 1}": diffs[s] for k, s in enumerate(systems)})}
            rows[kind].append(row)
    write_jsonl(folder / "items.jsonl", rows["items"])
    write_jsonl(folder / "gold.jsonl", rows["gold"])
    return truth


def judge(truth: Truth, reference: str, shown: list[str], profile: Profile, rng: random.Random) -> list[int]:
    """Ranks for the pictures ``shown`` (page order) against ``reference``, as the profile would give them."""
    key = truth_key(reference, shown)
    if profile.strategy == "majority":
        return [1] * len(shown)  # "they all look alike", unlooked at
    if profile.strategy == "random" or key not in truth:
        return [rng.randint(1, len(shown)) for _ in shown]
    diffs = [truth[key][name] for name in shown]
    if rng.random() >= profile.accuracy:  # a slip: one picture misjudged by a difference
        k = rng.randrange(len(diffs))
        diffs[k] = max(0, diffs[k] + rng.choice((-1, 1)))
    ranks = true_ranks({str(k): d for k, d in enumerate(diffs)})
    return [ranks[str(k)] for k in range(len(shown))]


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data: dict[str, str] = {}
    for fieldset in slots_of(form, "rank-item"):
        figure = fieldset.find("figure")
        assert isinstance(figure, Tag)
        reference = figure.find("img")
        assert isinstance(reference, Tag)
        sections = [s for s in fieldset.find_all("section", class_="candidate") if isinstance(s, Tag)]
        shown, names = [], []
        for section in sections:
            img, select = section.find("img"), section.find("select")
            assert isinstance(img, Tag) and isinstance(select, Tag)
            shown.append(image_name(img))
            names.append(str(select["name"]))
        ranks = judge(truth, image_name(reference), shown, profile, rng)
        data.update({name: str(r) for name, r in zip(names, ranks, strict=True)})
    return data


DEMO = DemoTask(
    template="rank",
    title="Rank redrawn pictures by how much they look like the original",
    description="For each drawing, rank three redrawings from the closest to the furthest; ties allowed.",
    keywords="images, ranking, similarity, reconstruction",
    write_data=write,
    fill_form=fill,
    items_per_hit=3,
    # Two gold a page: random ranks pass a gold item about one time in five, so a spammer needs
    # a few more of them than a worker on a finer scale before the evidence is clear.
    gold_per_hit=2,
    template_options={"gold_min_tau": 0.6},
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
