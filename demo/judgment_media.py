"""Judgment items drawn locally: pictures of two coloured shapes and two candidate sentences.

Each picture comes from a scene description (``demo.data``), so the
better sentence is known by construction: one sentence states the scene
exactly, the other gets a colour or a whole object wrong. Images are named by
a hash of their content, so a file name says nothing about the answer.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

from demo.data import draw, random_scene, sentence_with_rating

PROMPT = "Which sentence better describes the image?"
ALT = "A drawing of two coloured shapes."


def judgment_items(
    media_dir: Path, count: int, seed: int = 2005, section: str = "judgment"
) -> list[dict[str, Any]]:
    """Write ``count`` pictures into ``media_dir`` and return the bank entries for them.

    The image path in each entry is relative to the bank file, which lives
    beside ``media_dir``.
    """
    rng = random.Random(seed)
    media_dir.mkdir(parents=True, exist_ok=True)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(out) < count:
        scene = random_scene(rng)
        png = draw(scene)
        name = hashlib.sha256(png).hexdigest()[:20] + ".png"
        if name in seen:
            continue
        seen.add(name)
        (media_dir / name).write_bytes(png)
        right = scene.sentence()
        wrong = sentence_with_rating(scene, rng.choice((3, 2, 1)), rng)
        ids = ["a", "b"]
        rng.shuffle(ids)
        choices = sorted(
            [{"id": ids[0], "text": right}, {"id": ids[1], "text": wrong}], key=lambda c: c["id"]
        )
        out.append(
            {
                "id": f"jd-{len(out) + 1:03d}",
                "section": section,
                "prompt": PROMPT,
                "image": f"{media_dir.name}/{name}",
                "alt": ALT,
                "choices": choices,
                "answer": ids[0],
                "explanation": f"The picture shows exactly this: {right}",
            }
        )
    return out
