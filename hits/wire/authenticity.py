"""The typing record a HIT page sends with its answers: one hidden field, counts only.

The worker site adds ``/static/authenticity.js`` to the HIT pages it serves
(HTMLQuestion pages, layouts and crowd-element pages) and the requester
side's own campaign pages carry it too. The script counts what happens in the
page's free-text fields (keystrokes, pastes and their length, the page losing
focus or being hidden, the time to the first input) and, when the page's form
is submitted, adds one field, :data:`FIELD`, holding those counts as compact
JSON. Nothing the worker typed is ever in it.

Both halves read it here. The marketplace keeps it beside the assignment's
answer, which stays what MTurk would store (one larger than
:data:`MAX_FIELD_CHARS`, which no honest page sends, is dropped), and sends it
on the API as :data:`API_MEMBER`. The requester side keeps the parsed summary
on the submission, and takes the field out of any answers that still carry it
(a page that posts it by another name path, an older marketplace) before a
template sees them.

It comes from the worker's browser, so it is a claim, not a measurement: the
quality model only ever uses it to hold work for a person, never to approve
it, and a missing or malformed field is simply no signal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: The form field the script adds (MTurk pages never use this name).
FIELD = "hitforgeAuthenticity"
#: The Assignment member the marketplace's API sends it in, beside ``Answer`` (not in MTurk's model,
#: so boto3 leaves it out; hitforge's facade, ``hits.requester.mturk``, reads it from the raw reply).
API_MEMBER = "HitforgeAuthenticity"
#: The longest field kept: the script's JSON is under 200 characters; anything far longer is not its.
MAX_FIELD_CHARS = 1024
#: The summary's format version, as the script writes it.
VERSION = 1

#: Counts in the summary, each a whole number >= 0 (the script's names).
COUNTS = ("chars", "keys", "pastes", "pasted", "blurs", "hides", "fields")
#: Times in milliseconds since the page loaded; ``first_ms`` is absent when nothing was entered.
TIMES = ("first_ms", "typing_ms", "page_ms")
#: No count or time is kept above this (about 11 days in milliseconds): a bigger number is forged.
MAX_NUMBER = 1_000_000_000


def _number(value: Any) -> int | None:
    """A whole number within bounds, else None (booleans, floats with a fraction, strings refused)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0 or value > MAX_NUMBER:
        return None
    return value


def parse_summary(text: Any) -> dict[str, int] | None:
    """The typing summary in ``text``, validated; None when it is missing, too long or malformed.

    Only the known counts and times are kept, each a whole number in
    ``0..MAX_NUMBER``; a value of any other kind is left out rather than
    guessed at. A summary with none of the counts is no summary.
    """
    if not isinstance(text, str) or not text or len(text) > MAX_FIELD_CHARS:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, Mapping) or data.get("v") != VERSION:
        return None
    out: dict[str, int] = {}
    for name in (*COUNTS, *TIMES):
        number = _number(data.get(name))
        if number is not None:
            out[name] = number
    if not any(name in out for name in COUNTS):
        return None
    return out


def split_summary(fields: Mapping[str, str]) -> tuple[dict[str, str], dict[str, int] | None]:
    """``fields`` without :data:`FIELD`, and the summary it held (None when absent or unreadable)."""
    rest = {k: v for k, v in fields.items() if k != FIELD}
    return rest, parse_summary(fields.get(FIELD))


def kept_field(name: str, value: str) -> bool:
    """Whether the marketplace stores a posted field: all but an oversized typing summary."""
    return name != FIELD or len(value) <= MAX_FIELD_CHARS
