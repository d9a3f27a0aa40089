"""Demo for the heatmap template: drawn "scans" with bright patches, three made-up models.

Each picture is a grey, X-ray-like drawing with two or three bright patches
in known places (upper left, lower right, ...). Its report has one sentence
per patch, saying where it is; most come with a box around the patch, one
without (as datasets often lack boxes). Three models point at regions:

* ``focused`` finds the place a sentence names and points there tightly;
* ``blurry`` finds it too, but spreads its heat over much of the picture;
* ``lost`` ignores the words and points at a place drawn from the text, plus two stray spots.

``focused`` and ``blurry`` come with precomputed ``.npy`` heatmaps for the
report sentences; ``lost`` makes all of its maps live; all three make their
maps live for the workers' own sentences (the built-in provider). A bot
judges a heatmap as a person would, by looking at it: it reads the heat off
the overlay the page shows and measures how much of the patch's region is hot
and how much of the heat lies on it.
"""

from __future__ import annotations

import hashlib
import io
import random
import time
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import numpy as np
import requests
from bs4 import Tag
from PIL import Image, ImageDraw, ImageFilter

from demo.profiles import Profile
from demo.tasks import DemoTask, Truth, image_name, save_png, slots_of, write_jsonl
from hits.requester.heatmaps.arrays import checked, heat_of_overlay, overlay_png
from hits.requester.heatmaps.builtin import BlobProvider
from hits.requester.heatmaps.providers import ImageSource
from hits.requester.templates.heatmap import QUESTIONS

SIZE = 256
#: Where a patch can be: its words and its centre as fractions of the picture.
PLACES: dict[str, tuple[float, float]] = {
    "upper left": (0.25, 0.25),
    "upper right": (0.75, 0.25),
    "lower left": (0.25, 0.75),
    "lower right": (0.75, 0.75),
    "left middle": (0.25, 0.5),
    "right middle": (0.75, 0.5),
}
HALF = 0.12  # a patch's box reaches this far from its centre (fraction of the side)
MODELS: dict[str, dict[str, Any]] = {
    "focused": {"provider": "builtin", "spread": 0.085, "aim": "words"},
    "blurry": {"provider": "builtin", "spread": 0.3, "aim": "words"},
    "lost": {"provider": "builtin", "spread": 0.08, "aim": "hash", "decoys": 2},
}
PRECOMPUTED = ("focused", "blurry")
#: Seconds between a bot's two requests for one picture (the campaign's min_interval is below it).
PAUSE = 0.3


def _scan(places: list[str]) -> bytes:
    """A grey drawing with a darker chest shape and a bright patch at each place."""
    image = Image.new("L", (SIZE, SIZE), 20)
    pen = ImageDraw.Draw(image)
    pen.ellipse((20, 30, 122, 236), fill=70)
    pen.ellipse((134, 30, 236, 236), fill=70)
    for place in places:
        cx, cy = PLACES[place]
        r = SIZE * HALF * 0.6
        pen.ellipse((cx * SIZE - r, cy * SIZE - r, cx * SIZE + r, cy * SIZE + r), fill=210)
    buffer = io.BytesIO()
    image.filter(ImageFilter.GaussianBlur(4)).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def sentence_for(place: str) -> str:
    """A report sentence about a patch at ``place``."""
    return f"There is a bright patch in the {place} part of the picture."


def prompt_for(place: str) -> str:
    """What a worker might write about a patch at ``place`` (other words than the report)."""
    return f"round pale spot, {place}"


def judge_heat(heat: np.ndarray, place: str) -> dict[str, int]:
    """The three answers a careful person gives a heatmap for the patch at ``place`` (1..5 each)."""
    h, w = heat.shape
    cx, cy = PLACES[place]
    x0, x1 = int((cx - HALF) * w), int(np.ceil((cx + HALF) * w))
    y0, y1 = int((cy - HALF) * h), int(np.ceil((cy + HALF) * h))
    region = heat[y0:y1, x0:x1]
    hot = heat >= 0.35
    coverage = float((region >= 0.35).mean())
    share = float(hot[y0:y1, x0:x1].sum() / hot.sum()) if hot.any() else 0.0

    def band(x: float) -> int:
        return min(5, 1 + int(x * 5))

    answers = {"coverage": band(coverage), "share": band(share)}
    answers["intuitive"] = max(1, min(5, round((answers["coverage"] + answers["share"]) / 2)))
    return answers


def _seen(heat: np.ndarray) -> np.ndarray:
    """A heatmap as the page shows it (drawn as an overlay, then read back)."""
    return heat_of_overlay(overlay_png(checked(heat)))


def write(folder: Path, items: int, gold: int, seed: int) -> Truth:
    rng = random.Random(seed)
    media = folder / "media"
    truth: Truth = {}
    rows: dict[str, list[dict[str, object]]] = {"items": [], "gold": []}
    providers = {name: BlobProvider(name=name, **{k: v for k, v in spec.items() if k != "provider"})
                 for name, spec in MODELS.items()}  # fmt: skip
    for kind, count in (("items", items), ("gold", gold)):
        for i in range(count):
            places = rng.sample(sorted(PLACES), rng.choice((2, 3)))
            name = save_png(media, _scan(places))
            sentences = []
            key: dict[int, dict[str, dict[str, int]]] = {}
            for k, place in enumerate(places):
                text = sentence_for(place)
                cx, cy = PLACES[place]
                sentence: dict[str, Any] = {"text": text, "heatmaps": {}}
                if k < len(places) - 1:  # the last sentence has no box, as in real datasets
                    side = 2 * HALF * SIZE
                    sentence["boxes"] = [
                        {"x": (cx - HALF) * SIZE, "y": (cy - HALF) * SIZE, "width": side, "height": side}
                    ]
                key[k] = {}
                for model, provider in providers.items():
                    heat = provider.heatmap(ImageSource(), text)
                    if model in PRECOMPUTED:
                        # Two items may show the same picture with their sentences in another order.
                        digest = hashlib.sha256(f"{name}|{model}|{text}".encode()).hexdigest()[:20]
                        (media / "maps").mkdir(parents=True, exist_ok=True)
                        np.save(media / "maps" / f"{digest}.npy", heat.astype(np.float32))
                        sentence["heatmaps"][model] = f"maps/{digest}.npy"
                    key[k][model] = judge_heat(_seen(heat), place)
                sentences.append(sentence)
            truth[name] = {"places": places}
            row: dict[str, object] = {
                "id": f"{kind}-{i:04d}",
                "item": {
                    "image": name,
                    "alt": "A grey scan-like drawing with bright patches.",
                    "width": SIZE,
                    "height": SIZE,
                    "models": sorted(MODELS),
                    "sentences": sentences,
                },
            }
            if kind == "gold":
                row["answer"] = {"sentences": key}
            rows[kind].append(row)
    write_jsonl(folder / "items.jsonl", rows["items"])
    if gold:
        write_jsonl(folder / "gold.jsonl", rows["gold"])
    return truth


def _answer(heat: np.ndarray | None, place: str, profile: Profile, rng: random.Random) -> dict[str, int]:
    if profile.strategy == "majority":
        return dict.fromkeys(QUESTIONS, 3)
    if profile.strategy == "random" or heat is None:
        return {q: rng.randint(1, 5) for q in QUESTIONS}
    answer = judge_heat(heat, place)
    for q in answer:
        if rng.random() >= profile.accuracy:  # a slip: one step off
            answer[q] = max(1, min(5, answer[q] + rng.choice((-1, 1))))
    return answer


def _heat(src: str) -> np.ndarray:
    import base64

    return heat_of_overlay(base64.b64decode(src.split(",", 1)[1]))


#: How often a bot asks again for heatmaps that did not come (a model busy with other
#: workers' calls: at most a few of one model's calls run at once), as a person presses the
#: page's button again; then the ones still missing are marked so.
ASK_AGAIN = 4


def _ask(endpoint: str, data: dict[str, str]) -> dict[str, Any]:
    """The endpoint's heatmaps for one round, asked again after a pause while some did not come."""
    for attempt in range(ASK_AGAIN + 1):
        answer: dict[str, Any] = requests.post(endpoint, data=data, timeout=60).json()
        if "error" in answer:
            raise requests.HTTPError(f"heatmaps refused: {answer['error']}")
        if all(hm["ok"] for hm in answer["heatmaps"]) or attempt == ASK_AGAIN:
            return answer
        time.sleep(1.0 + attempt)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns


def fill(form: Tag, truth: Truth, profile: Profile, rng: random.Random) -> dict[str, str]:
    """Ask the page's endpoint for heatmaps (as the page's script does), look at them, rate them."""
    hidden = {
        str(i["name"]): str(i.get("value", ""))
        for i in form.find_all("input", type="hidden")
        if isinstance(i, Tag) and i.get("name") in ("assignmentId", "hitId", "workerId", "turkSubmitTo")
    }
    parts = urlsplit(hidden["turkSubmitTo"])
    origin = f"{parts.scheme}://{parts.netloc}/"  # the demo's HIT pages are served by its marketplace
    data: dict[str, str] = {}
    for fieldset in slots_of(form, "heatmap-item"):
        i = int(str(fieldset["data-slot"]))
        endpoint = urljoin(origin, str(fieldset["data-endpoint"]))
        img = fieldset.find("img", class_="heat-base")
        assert isinstance(img, Tag)
        places = truth.get(image_name(img), {}).get("places") or list(PLACES)
        choices = fieldset.find_all("input", attrs={"name": f"pick-{i}"})
        pick = rng.randrange(len(choices))
        label = choices[pick].find_parent("label")
        said = " ".join(label.get_text().split()) if isinstance(label, Tag) else ""
        # A person reads where the chosen sentence says the patch is.
        place = next((p for p in PLACES if sentence_for(p) == said), places[0])
        own = rng.choice(places)
        for part, extra, about in (
            ("report", {"sentence": str(pick)}, place),
            ("custom", {"prompt": prompt_for(own)}, own),
        ):
            answer = _ask(endpoint, {**hidden, "position": str(i), "round": part, **extra})
            for hm in answer["heatmaps"]:
                base = f"heatmap-{i}-{part}-{hm['token']}"
                if not hm["ok"]:
                    data[f"{base}-missing"] = "1"
                    continue
                rated = _answer(_heat(hm["src"]), about, profile, rng)
                data.update({f"{base}-{q}": str(v) for q, v in rated.items()})
            time.sleep(PAUSE)
        data[f"heatmap-{i}-sentence"] = str(pick)
        data[f"heatmap-{i}-prompt"] = prompt_for(own)
    return data


DEMO = DemoTask(
    template="heatmap",
    title="Rate how well heatmaps point at what a sentence describes",
    description="Pick a sentence about a scan-like drawing, rate three models' heatmaps for it, "
    "then do the same for a sentence of your own.",
    keywords="images, heatmaps, saliency, alignment, rating",
    write_data=write,
    fill_form=fill,
    items_per_hit=2,
    gold_per_hit=1,
    template_options={
        "models": MODELS,
        "time_limit": 8,
        "min_interval": 0.2,
        "gold_tolerance": 1,
        "gold_pass_score": 0.8,
    },
    quality={"accuracy_threshold": 0.6, "confidence": 0.9, "min_gold": 3},
)
