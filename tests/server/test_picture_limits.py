"""Pictures a requester's media folder holds are decoded by the web process for blinded pages
(re-encoded without metadata) and for heatmap overlays: a huge one must not take the process's
memory or answer with a server error."""

from __future__ import annotations

import importlib
import struct
import zlib
from pathlib import Path

from PIL import Image

from hits.requester.heatmaps.providers import ImageSource
from server.requester.hit_pages import heatmap_views

# The package's view function is also called media: the module itself, by its name.
media = importlib.import_module("server.requester.hit_pages.media")


def _png_header(path: Path, width: int, height: int) -> Path:
    """A PNG whose header claims ``width`` x ``height``: Pillow reads only the header to open it."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)
    return path


def test_a_decompression_bomb_in_the_media_folder_gives_a_square_overlay_not_a_500(tmp_path: Path) -> None:
    bomb = _png_header(tmp_path / "bomb.png", 100_000, 100_000)  # Pillow refuses to open it
    size = heatmap_views._overlay_size({}, ImageSource(path=bomb))
    assert size[0] == size[1] > 0


def test_pictures_past_the_pixel_limit_are_not_decoded(tmp_path: Path) -> None:
    # 42 MP: under Pillow's own bomb limit (89 MP), over what a blinded page decodes (40 MP).
    big = _png_header(tmp_path / "big.png", 7_000, 6_000)
    assert media._reencode(str(big), None) is None
    small = tmp_path / "small.png"
    Image.new("RGB", (30, 20), (200, 10, 10)).save(small)
    assert media._reencode(str(small), None) is not None


def test_the_reencoded_cache_is_bounded_by_bytes() -> None:
    cache = media._ReencodedCache(max_bytes=100)
    for n in range(5):
        cache.put(("p", n), b"x" * 40)
    assert cache.used <= 100
    assert cache.get(("p", 4)) == (True, b"x" * 40) and cache.get(("p", 0)) == (False, None)
    cache.put(("huge",), b"x" * 101)  # larger than the whole cache: served, never kept
    assert cache.get(("huge",)) == (False, None)
    cache.put(("none",), None)  # "not a picture" is remembered too, at no cost
    assert cache.get(("none",)) == (True, None)
