"""The generated sections of docs/benchmarks.md: text between a benchmark's two markers.

Only what lies between ``<!-- bench:NAME begin -->`` and ``<!-- bench:NAME end -->`` is
ever rewritten; the prose around it (what the figures mean, earlier runs) is the
authors'.
"""

from __future__ import annotations


class MissingMarkers(ValueError):
    """The document has no (or only half a) generated section for a benchmark."""


def markers(name: str) -> tuple[str, str]:
    """The begin and end markers of ``name``'s section."""
    return f"<!-- bench:{name} begin -->", f"<!-- bench:{name} end -->"


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the lines between ``name``'s markers replaced by ``body``."""
    begin, end = markers(name)
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start >= 0 else -1
    if start < 0 or stop < 0:
        raise MissingMarkers(f"docs/benchmarks.md has no {begin} ... {end} section")
    return text[: start + len(begin)] + "\n" + body.strip("\n") + "\n" + text[stop:]


def block(text: str, name: str) -> str | None:
    """What lies between ``name``'s markers now, or None if it has none."""
    begin, end = markers(name)
    start = text.find(begin)
    stop = text.find(end, start + len(begin)) if start >= 0 else -1
    return text[start + len(begin) : stop].strip("\n") if start >= 0 and stop >= 0 else None
