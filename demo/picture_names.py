"""Demo pictures are named by what they show, so a bot recognises one as a person would.

The name is a digest of the picture's size and RGBA pixels, not of its file:
a blinded HIT page serves pictures re-encoded (``server/requester/hit_pages/media.py``),
other pages serve the file as it is, and either way the pixels, and so the
name, are the same. A name derived from content says nothing of gold.
"""

from __future__ import annotations

import hashlib
import io

from PIL import Image


def picture_name(picture: bytes) -> str:
    """The demo file name of the picture encoded in ``picture`` (``<20 hex digits>.png``)."""
    with Image.open(io.BytesIO(picture)) as opened:
        rgba = opened.convert("RGBA")
    return hashlib.sha256(repr(rgba.size).encode() + rgba.tobytes()).hexdigest()[:20] + ".png"
