"""Pictures on HIT pages, under URLs that name no file.

A page's picture URL names a HIT, a position on it and the assignment (if
any), with an HMAC tag the server made: ``/tasks/media/<hit row>/<position>/<tag>``.
It never carries the requester's file name, which could tell gold apart (a
gold folder, a ``gold_`` prefix), nor the same URL for one gold picture on
two HITs. The file served is the one the page shows at that position, so
only files a page shows can be fetched: not the campaign's other files, even
when its media folder holds them (``media_dir: .`` with the gold answers).

A slot may show more pictures than its ``image``: the ``rank`` template's
candidates. Picture ``part`` k > 0 is the item's k-th candidate's ``image``;
k is bound into the tag and appears nowhere in the URL, so the URL does not
tell which of the item's candidates (and so which model) a picture is.

On a blinded page (an ``arranged`` template: ``sxs``, ``rank``, ``heatmap``)
the bytes must not tell either: a text-to-image model's PNG often names it in
a text chunk ("parameters", "Software"), a camera or editor in EXIF, and a
file format or colour mode may differ by model. Such pictures are decoded
and served re-encoded as plain RGBA PNGs, pixels only (EXIF orientation
applied first), and the re-encoded bytes are cached per file version. A file
that cannot be decoded as a picture is not served there (404).

A candidate picture there (``rank``: a model's output) is also served at one
canvas size for all the item's candidates, the smallest box that holds each
of them (at most ``MAX_CANVAS_SIDE`` on a side): each picture is scaled to fit
it, aspect ratio kept, and padded with transparent pixels. A model whose
pictures have a size of their own (512x512 against 1024x768) cannot be told
by the served picture's dimensions. The reference picture (part 0) is not a
model's output and keeps its size.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import threading
import warnings
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import Response, abort, current_app, request, send_from_directory, url_for
from PIL import Image, ImageOps
from sqlalchemy import select
from werkzeug.security import safe_join

from hits.requester.pages.gold import exposures_for
from hits.requester.tables.campaigns import Campaign, HITSlot, PublishedHIT
from hits.requester.templates import get_template
from server.db import requester_session

SALT = b"hitforge.hit-pages.media"
#: Candidate pictures a slot may show besides its own (the ``rank`` template's maximum).
MAX_PARTS = 8
#: The longest side a candidates' canvas may have: pages show them at 240 pixels, this leaves room to zoom.
MAX_CANVAS_SIDE = 2048
#: The most pixels a picture of a blinded page may have (40 MP: 160 MB decoded): larger ones are
#: not served, so that a few requests at once cannot take the web process's memory.
MAX_PICTURE_PIXELS = 40_000_000
#: How many bytes of re-encoded pictures a web process keeps.
CACHE_BYTES = 256 * 2**20
#: What Pillow raises for a file that is not a picture it can (or should: a decompression bomb) decode.
_UNREADABLE = (OSError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning)
_ROTATED = {5, 6, 7, 8}  # EXIF orientations that turn the picture a quarter: width and height swap


def _tag(published_id: int, position: int, assignment_id: str, part: int = 0) -> str:
    fields = [SALT, str(published_id).encode(), str(position).encode(), assignment_id.encode()]
    if part:  # the slot's own picture keeps the tag it always had
        fields.append(str(part).encode())
    message = b"\0".join(fields)
    mac = hmac.new(str(current_app.secret_key).encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def is_local(image: str) -> bool:
    """Whether a payload's picture is a file of the campaign's media folder (not a URL of its own)."""
    return bool(image) and not image.startswith(("http://", "https://", "/"))


def media_url(published_id: int, position: int, assignment_id: str | None, part: int = 0) -> str:
    """The URL of the picture at ``position`` of this HIT's page, as the assignment (or preview) sees it.

    ``part``: 0 for the slot's ``image``, k for its item's k-th candidate's (1-based).
    """
    tag = _tag(published_id, position, assignment_id or "", part)
    return url_for(
        "hit_pages.media", published_id=published_id, position=position, tag=tag, a=assignment_id or None
    )


class _ReencodedCache:
    """Re-encoded pictures by (path, version, canvas), the least recently used dropped first.

    Bounded by bytes, not entries: one requester's large pictures must not fill the web
    process's memory (an entry count let 64 pictures of any size stay).
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self.used = max_bytes, 0
        self.entries: OrderedDict[tuple[Any, ...], bytes | None] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> tuple[bool, bytes | None]:
        with self.lock:
            if key not in self.entries:
                return False, None
            self.entries.move_to_end(key)
            return True, self.entries[key]

    def put(self, key: tuple[Any, ...], data: bytes | None) -> None:
        size = len(data or b"")
        if size > self.max_bytes:
            return
        with self.lock:
            if key in self.entries:
                return
            self.entries[key] = data
            self.used += size
            while self.used > self.max_bytes:
                _, dropped = self.entries.popitem(last=False)
                self.used -= len(dropped or b"")


_REENCODED = _ReencodedCache(CACHE_BYTES)


def _reencoded(path: str, version: tuple[int, int], canvas: tuple[int, int] | None = None) -> bytes | None:
    """The picture at ``path`` as a PNG of its pixels alone (None: not a picture Pillow can read).

    ``version`` (modification time, size) keys the cache: a file replaced is re-encoded again.
    ``canvas``: fit the picture in that size (aspect ratio kept) and pad it with transparent pixels.
    """
    key = (path, version, canvas)
    cached, data = _REENCODED.get(key)
    if not cached:
        data = _reencode(path, canvas)
        _REENCODED.put(key, data)
    return data


def _reencode(path: str, canvas: tuple[int, int] | None) -> bytes | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as picture:
                if picture.width * picture.height > MAX_PICTURE_PIXELS:
                    return None  # decoding it would take gigabytes a request; refused like a bomb
                # Orientation is EXIF's: applied to the pixels before EXIF goes. One mode for all, so
                # neither a palette nor a missing alpha channel tells one model's pictures apart.
                pixels = ImageOps.exif_transpose(picture).convert("RGBA")
    except _UNREADABLE:
        return None
    if canvas is not None:  # a picture already of the canvas's size is left as it is
        pixels = ImageOps.pad(pixels, canvas, method=Image.Resampling.LANCZOS, color=(0, 0, 0, 0))
    out = io.BytesIO()
    pixels.save(out, format="PNG")  # no pnginfo, exif or icc_profile given: none written
    return out.getvalue()


@lru_cache(maxsize=256)
def _shown_size(path: str, version: tuple[int, int]) -> tuple[int, int] | None:
    """The picture's size as shown (EXIF orientation applied), from its header; None if unreadable."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as picture:
                width, height = picture.size
                turned = picture.getexif().get(0x0112) in _ROTATED
    except _UNREADABLE:
        return None
    return (height, width) if turned else (width, height)


def _media_file(media: Path, image: str) -> tuple[str, tuple[int, int]] | None:
    """The path of ``image`` in the media folder and its version (None: no such file)."""
    path = safe_join(str(media), image)
    if path is None or not Path(path).is_file():
        return None
    stat = Path(path).stat()
    return path, (stat.st_mtime_ns, stat.st_size)


def _canvas(media: Path, candidates: list[Any]) -> tuple[int, int] | None:
    """The one size all of an item's candidate pictures are served at (None: none can be read).

    The smallest box holding each candidate as it is, so no picture is made smaller, unless a
    side would pass ``MAX_CANVAS_SIDE``: then the box is scaled down to it, its shape kept.
    """
    sizes = []
    for candidate in candidates:
        found = _media_file(media, str(candidate.get("image", ""))) if isinstance(candidate, dict) else None
        size = _shown_size(*found) if found else None
        if size:
            sizes.append(size)
    if not sizes:
        return None
    width, height = max(w for w, _ in sizes), max(h for _, h in sizes)
    scale = min(1.0, MAX_CANVAS_SIDE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _blinded_picture(media: Path, image: str, canvas: tuple[int, int] | None = None) -> Any:
    """The response for a picture of a blinded page: re-encoded, pixels only (404 if it is none)."""
    found = _media_file(media, image)
    data = _reencoded(*found, canvas) if found else None
    if data is None:
        abort(404)
    response = Response(data, mimetype="image/png")
    response.cache_control.max_age = 3600
    return response


def serve_media(published_id: int, position: int, tag: str) -> Any:
    """The picture a ``media_url`` names; 404 for anything else, forged or not."""
    assignment_id = request.args.get("a", "")
    # Every part's tag is computed and compared, so the time taken says nothing about which matched.
    matches = [
        hmac.compare_digest(tag.encode(), _tag(published_id, position, assignment_id, part).encode())
        for part in range(MAX_PARTS + 1)
    ]
    if not any(matches):
        abort(404)
    part = matches.index(True)
    session = requester_session()
    # One slot, not the whole page: the slot with its campaign's media folder, then what this
    # assignment was shown there (asked whether or not the slot is gold, so timing tells nothing).
    found = session.execute(
        select(HITSlot, Campaign.id, Campaign.spec, Campaign.template)
        .join(PublishedHIT, PublishedHIT.id == HITSlot.published_hit_id)
        .join(Campaign, Campaign.id == PublishedHIT.campaign_id)
        .where(HITSlot.published_hit_id == published_id, HITSlot.position == position)
    ).first()
    if found is None or not found.spec.get("media_path"):
        abort(404)
    slot = found.HITSlot
    shown = exposures_for(session, found.id, [assignment_id]).get(assignment_id, {}) if assignment_id else {}
    gold = shown.get(position) if slot.gold_item_id is not None else None
    payload = gold.payload if gold else slot.payload
    candidates = payload.get("candidates") or []
    if part == 0:
        image = str(payload.get("image", ""))
    elif part <= len(candidates) and isinstance(candidates[part - 1], dict):
        image = str(candidates[part - 1].get("image", ""))
    else:
        abort(404)
    if not is_local(image):
        abort(404)
    if get_template(found.template).arranged:
        media = Path(found.spec["media_path"])
        # A candidate's picture (a model's output) at the size all the item's candidates share.
        canvas = _canvas(media, candidates) if part else None
        response = _blinded_picture(media, image, canvas)
        response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return response
    response = send_from_directory(Path(found.spec["media_path"]), image, max_age=3600, etag=False)
    # Flask names the file in Content-Disposition, hashes its path into the ETag and gives its
    # modification time: the file name may say what the opaque URL hides (a system,
    # "gold-3.png"), and gold pictures added later than the others would show a later date.
    # The browser shows and caches (max_age) a picture without them.
    for header in ("Content-Disposition", "Last-Modified"):
        del response.headers[header]
    # Pictures only: a requester's SVG opened on its own must not run scripts on this site.
    response.headers["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return response
