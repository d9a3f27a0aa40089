"""The built-in provider: a deterministic stand-in for a model, for demos and tests.

It draws one Gaussian blob (plus optional decoys) on a 64 x 64 grid. Where
the blob goes depends only on the model's settings and the text: with
``aim: words`` it reads position words (left, right, upper, lower, top,
bottom, middle) the way a well-aligned model would find the region a
sentence names, and falls back to a place drawn from a hash of the text when
there are none; with ``aim: hash`` it always uses the hash, like a model that
aligns nothing. The same text always gives the same map, on every machine.
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass

import numpy as np

from hits.requester.heatmaps.source import ImageSource

GRID = 64
_HORIZONTAL = {"left": 0.25, "right": 0.75}
_VERTICAL = {"upper": 0.25, "top": 0.25, "lower": 0.75, "bottom": 0.75}
_WORD = re.compile(r"[a-z]+")


def _hashed(seed: str, text: str, k: int) -> tuple[float, float]:
    """A place in the middle 70% of the image, from a hash of the text (the same everywhere)."""
    digest = hashlib.sha256(f"{seed}\0{k}\0{text.strip().lower()}".encode()).digest()
    a, b = struct.unpack(">II", digest[:8])
    return 0.15 + 0.7 * a / 0xFFFFFFFF, 0.15 + 0.7 * b / 0xFFFFFFFF


def aimed_place(text: str) -> tuple[float, float] | None:
    """The (x, y) centre, as fractions of the image, that the text's position words name; None if none."""
    words = set(_WORD.findall(text.lower()))
    xs = [v for w, v in _HORIZONTAL.items() if w in words]
    ys = [v for w, v in _VERTICAL.items() if w in words]
    if not xs and not ys and not words & {"middle", "centre", "center"}:
        return None
    return (xs[0] if len(xs) == 1 else 0.5), (ys[0] if len(ys) == 1 else 0.5)


@dataclass(frozen=True)
class BlobProvider:
    """Gaussian blobs: ``spread`` is the blob's width as a fraction of the image; ``decoys`` stray blobs."""

    name: str = "builtin"
    spread: float = 0.1
    aim: str = "words"
    decoys: int = 0

    def heatmap(self, image: ImageSource, text: str) -> np.ndarray:
        """The map for ``text`` (the image is not looked at: the blob's place comes from the text)."""
        place = aimed_place(text) if self.aim == "words" else None
        centres = [place or _hashed(self.name, text, 0)]
        centres += [_hashed(self.name, text, k + 1) for k in range(self.decoys)]
        axis = (np.arange(GRID) + 0.5) / GRID
        xs, ys = np.meshgrid(axis, axis)
        heat = np.zeros((GRID, GRID))
        for k, (cx, cy) in enumerate(centres):
            weight = 1.0 if k == 0 else 0.8
            heat += weight * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * self.spread**2))
        return heat
