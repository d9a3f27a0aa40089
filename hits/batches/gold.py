"""Gold rows in a batch's input CSV, and how a worker's answer to one is scored.

The convention: a column named ``Gold.<field>`` holds the answer expected in
the layout's form field ``<field>`` (the ``Answer.<field>`` column of the
results). A row with any ``Gold.*`` cell filled in is a gold row; its empty
``Gold.*`` cells are not checked. The ``Gold.*`` columns are split off when
the CSV is read: they are never substituted into the layout (a layout naming
one is refused), never stored with the row's inputs and never written to the
results' ``Input.*`` columns, so a gold row's page is built exactly as any
other row's.

Scoring is field equality: numbers are equal within a tolerance; text is
compared exactly, or with whitespace collapsed and case folded when the
requester asks; several values of one field (checkboxes, joined with ``|``)
are compared as a set. A field of a ``<crowd-form>`` answer is named by its
dotted path inside the ``taskAnswers`` object (``sentiment.label``), as
``answer-format="flatten-objects"`` would have named it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The prefix of the input CSV's columns holding a gold row's expected answers.
GOLD_PREFIX = "Gold."
#: The field ``<crowd-form>`` posts its JSON answer in (its default answer format).
CROWD_ANSWERS = "taskAnswers"
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class GoldColumns:
    """An input CSV's header split into the columns the layout gets and the gold fields."""

    inputs: list[str]
    #: ``field`` for each ``Gold.<field>`` column, in the file's order.
    fields: list[str]


def split_columns(columns: list[str]) -> GoldColumns:
    """Separate the ``Gold.<field>`` columns from the inputs (a bare ``Gold.`` is a ``ValueError``)."""
    inputs, fields = [], []
    for name in columns:
        if name.startswith(GOLD_PREFIX):
            field = name[len(GOLD_PREFIX) :].strip()
            if not field:
                raise ValueError(f"the column {name!r} names no field: write Gold.<form field>")
            fields.append(field)
        else:
            inputs.append(name)
    return GoldColumns(inputs, fields)


def expected_answers(cells: Mapping[str, str], fields: list[str]) -> dict[str, str]:
    """A row's filled-in gold cells by field; empty when the row is not gold."""
    return {f: cells[GOLD_PREFIX + f] for f in fields if cells.get(GOLD_PREFIX + f, "").strip()}


def answer_value(answers: Mapping[str, Any], field: str) -> str | None:
    """The worker's value of ``field``: a posted field, else a dotted path into ``taskAnswers``."""
    if field in answers:
        return str(answers[field])
    raw = answers.get(CROWD_ANSWERS)
    if not isinstance(raw, str):
        return None
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return None
    if isinstance(value, list) and value:
        value = value[0]
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _text(text: str, normalise: bool) -> str:
    return _SPACES.sub(" ", text).strip().casefold() if normalise else text


def values_match(given: str, expected: str, *, tolerance: float = 0.0, normalise_text: bool = False) -> bool:
    """Whether one field's answer equals the expected one, by the rules of the module docstring."""
    wanted, got = _number(expected), _number(given)
    if wanted is not None and got is not None:
        # A relative slack too, so a tolerance of 0 still equates 0.1 + 0.2 and 0.3.
        return abs(got - wanted) <= tolerance + 1e-9 * max(1.0, abs(wanted))
    if _text(given, normalise_text) == _text(expected, normalise_text):
        return True
    if "|" in given or "|" in expected:
        return {_text(v, normalise_text) for v in given.split("|")} == {
            _text(v, normalise_text) for v in expected.split("|")
        }
    return False


def score_fields(answers: Mapping[str, Any], key: Mapping[str, str], options: Mapping[str, Any]) -> float:
    """The share of the gold row's fields answered as expected (1.0: all of them)."""
    if not key:
        return 1.0
    tolerance = float(options.get("gold_tolerance", 0.0))
    normalise = bool(options.get("gold_normalise_text", False))
    right = 0
    for field, expected in key.items():
        given = answer_value(answers, field)
        if given is not None and values_match(
            given, str(expected), tolerance=tolerance, normalise_text=normalise
        ):
            right += 1
    return right / len(key)
