"""Gold rows in a batch's input CSV, and how a worker's answer to one is scored.

The convention: a column named ``Gold.<field>`` holds the answer expected in
the layout's form field ``<field>`` (the ``Answer.<field>`` column of the
results). A row with any ``Gold.*`` cell filled in is a gold row; its empty
``Gold.*`` cells are not checked. The ``Gold.*`` columns are split off when
the CSV is read: they are never substituted into the layout (a layout naming
one is refused), never stored with the row's inputs and never written to the
results' ``Input.*`` columns, so a gold row's page is built exactly as any
other row's.

Scoring is field equality (:mod:`hits.requester.templates.batch.matching`): numbers are equal
within a tolerance (the batch's, or the field's own); text is compared
exactly, or with whitespace collapsed and case folded when the requester
asks; several values of one field (checkboxes, joined with ``|``) are
compared as a set; a gold value written as JSON (an annotation element's
boxes, keypoints, polygons) is compared structurally, boxes by overlap. A
field of a ``<crowd-form>`` answer is named by its dotted path inside the
``taskAnswers`` object (``sentiment.label``), as
``answer-format="flatten-objects"`` would have named it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hits.requester.templates.batch.matching import (
    Tolerance,
    load_json,
    parse_structure,
    plain_text,
    structures_match,
    tolerance_for,
    values_match,
)

#: The prefix of the input CSV's columns holding a gold row's expected answers.
GOLD_PREFIX = "Gold."
#: The field ``<crowd-form>`` posts its JSON answer in (its default answer format).
CROWD_ANSWERS = "taskAnswers"


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


def answer_value(answers: Mapping[str, Any], field: str) -> tuple[bool, Any]:
    """``(True, value)`` for the worker's value of ``field`` (a posted field, else a dotted path
    into ``taskAnswers``, as JSON gave it), ``(False, None)`` when the answer has none."""
    if field in answers:
        return True, answers[field]
    raw = answers.get(CROWD_ANSWERS)
    if not isinstance(raw, str):
        return False, None
    parsed, value = load_json(raw)
    if not parsed:
        return False, None
    if isinstance(value, list) and value:
        value = value[0]
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def field_matches(given: Any, expected: str, tolerance: Tolerance) -> bool:
    """Whether the worker's value of one field matches the gold cell ``expected``.

    A cell written as JSON is compared structurally (:func:`structures_match`), the worker's
    value parsed too when it came as JSON text (a posted field, or ``flatten-objects``);
    otherwise both are compared as the form would have posted them.
    """
    structured, wanted = parse_structure(expected)
    if structured:
        if isinstance(given, str):
            parsed, given = parse_structure(given)
            if not parsed:
                return False
        return structures_match(given, wanted, tolerance)
    if isinstance(given, dict | list):
        try:
            given = json.dumps(given, sort_keys=True, separators=(",", ":"))
        except (ValueError, RecursionError):  # nested past what a form could mean: not the answer
            return False
    return values_match(
        plain_text(given), expected, tolerance=tolerance.number, normalise_text=tolerance.normalise_text
    )


def score_fields(answers: Mapping[str, Any], key: Mapping[str, str], options: Mapping[str, Any]) -> float:
    """The share of the gold row's fields answered as expected (1.0: all of them).

    Whether a row with some fields right passes is the template's ``gold_passed``: the
    batch's ``gold_pass_share`` (default 1.0, every field).
    """
    if not key:
        return 1.0
    right = 0
    for field, expected in key.items():
        found, given = answer_value(answers, field)
        if found and field_matches(given, str(expected), tolerance_for(field, options)):
            right += 1
    return right / len(key)


def json_cell_problems(cells: Mapping[str, str], fields: list[str]) -> list[tuple[str, str]]:
    """``(column, problem)`` for each of a row's gold cells that starts like JSON but is not JSON."""
    problems = []
    for field in fields:
        text = cells.get(GOLD_PREFIX + field, "").strip()
        if text.startswith(("{", "[")):
            try:
                json.loads(text)
            except ValueError as exc:
                problems.append(
                    (GOLD_PREFIX + field, f"the gold value starts like JSON but is not JSON: {exc}")
                )
    return problems
