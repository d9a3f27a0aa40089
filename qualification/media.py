"""The pictures a bank's items show: which files they are, and the names they are served by.

A test's media is never found by joining a requested path onto a folder. A
bank names its pictures (``image:`` of an item, a path relative to the bank
file); loading the bank checks each one (a plain relative path inside the
bank's folder, an image file type, a file that exists) and gives it a served
name made of a hash of its content and its file type. A media route serves
exactly the files of that catalogue, looked up by served name, so the bank
file, other files of the folder and other tests' pictures cannot be reached
by any spelling of a path, and a served name says nothing about an answer.
"""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

#: Picture types a test may show, with the Content-Type they are served with. No SVG: it can
#: carry script.
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


def image_problem(bank_dir: Path, ref: str) -> str | None:
    """Why ``ref`` (an item's ``image``) is not a picture a test may show, or None if it is."""
    if "\\" in ref or ref.startswith("/") or ":" in ref:
        return f"image must be a path relative to the bank file, with '/' between folders: {ref}"
    parts = PurePosixPath(ref).parts
    if not parts or any(part in ("..", ".") for part in parts):
        return f"image must stay inside the bank's folder (no '.' or '..'): {ref}"
    suffix = PurePosixPath(ref).suffix.lower()
    if suffix not in IMAGE_TYPES:
        return f"image must be one of {', '.join(sorted(IMAGE_TYPES))}: {ref}"
    path = bank_dir / ref
    if not path.is_file():
        return f"image file not found: {ref}"
    # A symbolic link could point anywhere: the file itself must be inside the bank's folder.
    if not path.resolve().is_relative_to(bank_dir.resolve()):
        return f"image must stay inside the bank's folder: {ref}"
    return None


def served_name(path: Path) -> str:
    """The name a picture is served by: a SHA-256 of its bytes, then its file type."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:40]
    return digest + path.suffix.lower()


def content_type(name: str) -> str:
    """The Content-Type of a served name."""
    return IMAGE_TYPES[PurePosixPath(name).suffix]
