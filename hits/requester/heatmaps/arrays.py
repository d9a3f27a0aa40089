"""Heatmap arrays: checked, read from files, and drawn as a coloured, transparent overlay.

An overlay is a PNG of one size for every model of an image (the image's
proportions, :data:`OVERLAY_SIDE` pixels on the longer side, see
:func:`overlay_size`), resampled smoothly from whatever resolution the model's
array has: a model's native resolution would otherwise tell it apart from
the others on every image. The page stretches it over the image: hot areas
are red and opaque, cold ones blue and transparent, so the worker sees the
image through everything the model does not point at. The page's strength
slider changes the overlay's opacity.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from hits.requester.heatmaps import HeatmapError

#: The largest side a heatmap may have (a model's array is usually far coarser than its image).
MAX_SIDE = 2048
#: Overlays are drawn this many pixels on their longer side, whatever the array's resolution.
OVERLAY_SIDE = 256
#: Suffixes of precomputed heatmap files: a NumPy array, or a greyscale picture.
ARRAY_SUFFIXES = (".npy",)
PICTURE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif")
#: The colour ramp, cold to hot: blue, cyan, green, yellow, red.
_RAMP = np.array([[0, 0, 255], [0, 255, 255], [0, 255, 0], [255, 255, 0], [255, 0, 0]], dtype=float)


def checked(values: Any) -> np.ndarray:
    """``values`` as a float array scaled to 0..1; ``HeatmapError`` unless a finite, non-negative 2-D array.

    A map that is zero everywhere stays zero (it points at nothing).
    """
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise HeatmapError("the heatmap is not an array of numbers") from exc
    if array.ndim == 3 and array.shape[0] == 1:
        array = array[0]  # a batch of one, as many models return
    if array.ndim != 2 or min(array.shape) < 1:
        raise HeatmapError(f"a heatmap must be a 2-D array, not of shape {array.shape}")
    if max(array.shape) > MAX_SIDE:
        raise HeatmapError(f"a heatmap may be at most {MAX_SIDE} cells on a side, not {array.shape}")
    if not np.isfinite(array).all():
        raise HeatmapError("the heatmap holds NaN or infinite values")
    if (array < 0).any():
        raise HeatmapError("the heatmap holds negative values")
    top = float(array.max())
    return array / top if top > 0 else array


def load_precomputed(path: Path) -> np.ndarray:
    """A precomputed heatmap file (``.npy``, or a picture read as greyscale), checked."""
    suffix = path.suffix.lower()
    try:
        if suffix in ARRAY_SUFFIXES:
            return checked(np.load(path, allow_pickle=False))  # never unpickle a requester's file
        if suffix in PICTURE_SUFFIXES:
            with Image.open(path) as picture:
                return checked(np.asarray(picture.convert("L"), dtype=float))
    except (OSError, ValueError) as exc:
        raise HeatmapError(f"{path.name} cannot be read as a heatmap: {exc}") from exc
    raise HeatmapError(f"{path.name}: a heatmap file is .npy or a picture ({', '.join(PICTURE_SUFFIXES)})")


def overlay_size(width: int | None, height: int | None) -> tuple[int, int]:
    """The overlay size (width, height) for an image of ``width`` x ``height`` (square if unknown)."""
    if not width or not height or width <= 0 or height <= 0:
        return OVERLAY_SIDE, OVERLAY_SIDE
    scale = OVERLAY_SIDE / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def overlay_png(heat: np.ndarray, size: tuple[int, int] | None = None) -> bytes:
    """The overlay for a checked heatmap, ``size`` (width, height): ramp colours, opacity with the heat.

    The PNG carries pixels only (no text, time or colour-profile chunks).
    """
    grey = Image.fromarray(np.uint8(np.round(heat * 255)), mode="L")
    target = size or (OVERLAY_SIDE, OVERLAY_SIDE)
    if grey.size != target:
        grey = grey.resize(target, Image.Resampling.BILINEAR)
    level = np.asarray(grey, dtype=float) / 255
    position = level * (len(_RAMP) - 1)
    low = np.clip(np.floor(position).astype(int), 0, len(_RAMP) - 2)
    mix = (position - low)[..., None]
    rgb = _RAMP[low] * (1 - mix) + _RAMP[low + 1] * mix
    alpha = np.clip(level * 1.25, 0, 1) * 255  # the coldest fifth is all but invisible
    rgba = np.dstack([rgb, alpha]).round().astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(rgba, mode="RGBA").save(out, format="PNG", optimize=False)
    return out.getvalue()


def heat_of_overlay(png: bytes) -> np.ndarray:
    """The heat an overlay shows, read back from its opacity (0..1): what a viewer perceives."""
    with Image.open(io.BytesIO(png)) as picture:
        alpha = np.asarray(picture.convert("RGBA"), dtype=float)[..., 3] / 255
    # Opacity saturates at 80% heat, so the hottest fifth reads back as 0.8.
    return np.clip(alpha / 1.25, 0, 1)
