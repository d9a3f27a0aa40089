"""Demo for the spans template: generated descriptions with planted mistakes and omissions."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from bs4 import Tag

from demo.data import COLOURS, SHAPES, Scene, draw, random_scene
from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, save_png, slots_of, write_jsonl

GENERATED_PER_IMAGE = 4
_WORD = re.compile(r"\w+")


class Text:
    """A sentence built word by word, remembering where chosen words sit."""

    def __init__(self) -> None:
        self.text = ""
        self.marked: list[list[int]] = []

    def add(self, word: str, mark: bool = False) -> None:
        if self.text:
            self.text += " "
        if mark:
            self.marked.append([len(self.text), len(self.text) + len(word)])
        self.text += word


def _article(next_word: str, capital: bool) -> str:
    word = "an" if next_word[0] in "aeiou" else "a"
    return word.capitalize() if capital else word


def describe(scene: Scene, rng: random.Random) -> tuple[str, str, dict[str, list[list[int]]]]:
    """(correct, generated, key): the generated text has 0 to 2 planted faults."""
    correct, generated = Text(), Text()
    relation = ["above"] if scene.relation == "above" else ["next", "to"]
    faults = rng.sample(["colour1", "shape2", "omit2"], rng.choice((0, 1, 1, 2)))
    c1 = rng.choice([c for c in COLOURS if c != scene.first.colour]) if "colour1" in faults else None
    s2 = rng.choice([s for s in SHAPES if s != scene.second.shape]) if "shape2" in faults else None
    for out, is_generated in ((correct, False), (generated, True)):
        first_colour = (c1 or scene.first.colour) if is_generated else scene.first.colour
        out.add(_article(first_colour, True))
        out.add(first_colour, mark=is_generated and c1 is not None)
        out.add(scene.first.shape)
        for word in relation:
            out.add(word)
        omitted = "omit2" in faults
        second_colour = scene.second.colour
        if is_generated and omitted:
            out.add(_article(s2 or scene.second.shape, False))
        else:
            out.add(_article(second_colour, False))
            out.add(second_colour, mark=not is_generated and omitted)
        second_shape = (s2 or scene.second.shape) if is_generated else scene.second.shape
        out.add(second_shape, mark=is_generated and s2 is not None)
        out.text += "."
    return correct.text, generated.text, {"mistakes": generated.marked, "missing": correct.marked}


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    truth: Truth = {}
    rows: dict[str, list[dict[str, object]]] = {"items": [], "gold": []}
    for kind, count in (("items", items), ("gold", gold)):
        made = 0
        while made < count:
            scene = random_scene(rng)
            name = save_png(folder / "media", draw(scene))
            seen: set[str] = set()
            for _ in range(GENERATED_PER_IMAGE * 3):
                if made >= count or len(seen) >= GENERATED_PER_IMAGE:
                    break
                correct, generated, key = describe(scene, rng)
                if generated in seen:
                    continue
                seen.add(generated)
                truth[f"{name}|{generated}"] = key
                row: dict[str, object] = {
                    "id": f"{kind}-{made:04d}",
                    "item": {
                        "image": name,
                        "alt": "A drawing of two coloured shapes.",
                        "correct": correct,
                        "generated": generated,
                    },
                }
                if kind == "gold":
                    row["answer"] = key
                rows[kind].append(row)
                made += 1
    write_jsonl(folder / "items.jsonl", rows["items"])
    write_jsonl(folder / "gold.jsonl", rows["gold"])
    return truth


def _random_marks(text: str, rng: random.Random) -> list[list[int]]:
    words = [[m.start(), m.end()] for m in _WORD.finditer(text)]
    return sorted(rng.sample(words, min(len(words), rng.randint(0, 2))))


def marks(truth: Truth, key: str, correct: str, generated: str, profile: Profile, rng: random.Random) -> dict:
    """The marks a bot makes on one description pair."""
    if profile.strategy == "majority":
        return {"mistakes": [], "missing": []}  # "looks fine": the answer most often given
    if profile.strategy == "random" or key not in truth:
        return {"mistakes": _random_marks(generated, rng), "missing": _random_marks(correct, rng)}
    answer = {kind: [list(s) for s in spans] for kind, spans in truth[key].items()}
    if rng.random() >= profile.accuracy:
        planted = [(kind, s) for kind, spans in answer.items() for s in spans]
        if planted:  # overlooks one fault
            kind, span = rng.choice(planted)
            answer[kind].remove(span)
        else:  # sees a fault that is not there
            answer["mistakes"] = _random_marks(generated, rng)[:1]
    return answer


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    data = {}
    for slot, fieldset in enumerate(slots_of(form, "pair")):
        img = fieldset.find("img")
        correct = fieldset.find("p", id=f"correct-{slot}")
        generated = fieldset.find("p", id=f"generated-{slot}")
        assert isinstance(img, Tag) and isinstance(correct, Tag) and isinstance(generated, Tag)
        c, g = correct.get_text(), generated.get_text()
        data[f"spans-{slot}"] = json.dumps(marks(truth, f"{image_name(img)}|{g}", c, g, profile, rng))
    return data


DEMO = DemoTask(
    template="spans",
    title="Mark mistakes and missing details in descriptions of drawings",
    description="Compare a generated description with a correct one and mark what is wrong or missing.",
    keywords="images, descriptions, mistakes, annotation",
    write_data=write,
    fill_form=fill,
    items_per_hit=GENERATED_PER_IMAGE - 1,  # plus one gold: four descriptions a page
    template_options={"gold_pass_score": 0.75},
    gold_per_hit=1,
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
