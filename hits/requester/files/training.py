"""Practice items a campaign offers its workers (``training:``): answered, then explained.

A campaign file may list a few training items, inline under ``training:``, each
an item in the template's own item format (as a line of the items file gives
it), its right answer in the gold file's format, and an explanation (Markdown,
made safe as the guidance's is: ``hits.requester.files.guidance``). Workers
meet them on practice pages the guidance block links to; a practice answer is
judged with the template's own parsing and gold scoring, and only then are the
verdict, the right answer and the explanation shown. Nothing of it is stored:
a training item is never gold, never a HIT's slot, never paid or graded.

Checked when the campaign file is read (file, line, field): the template must
have right answers; each item and answer must be the template's; and no
training item may share an id or its content with an item or a gold item (a
practice item that is also real work would be done unpaid, and one that is
gold would hand its answer to everyone).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from werkzeug.security import safe_join

from hits.requester.fileerrors import InputFileError, InputFileErrors, validation_errors
from hits.requester.files.guidance import MAX_MARKDOWN, markdown_pictures, markdown_problems, render_markdown
from hits.requester.templates import get_template
from hits.requester.templates.base import TaskTemplate

#: The most training items a campaign takes: practice before the work, not a second campaign.
MAX_TRAINING = 20


class TrainingItem(BaseModel):
    """One practice item: an item of the template, its right answer and why that answer is right."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(
        min_length=1,
        max_length=200,
        description="The practice item's id; it may not be an id of the items file or the gold file.",
    )
    item: dict[str, Any] = Field(
        description="The item, in the template's item format (what a line of the items file holds under "
        '"item"); it may not be the same as an item or a gold item.'
    )
    answer: Any = Field(
        description="The right answer, in the template's answer format (what a line of the gold file "
        'holds under "answer"); scored as gold is, with the template_options.'
    )
    explanation: str = Field(
        min_length=1,
        max_length=MAX_MARKDOWN,
        description="Why that answer is right (Markdown), shown only after the worker has answered.",
    )
    right_answer: str | None = Field(
        None,
        min_length=1,
        max_length=300,
        description="The right answer in words, as the worker reads it after answering; none: the "
        "template's own words for the answer.",
    )


def training_of(spec: Mapping[str, Any]) -> list[TrainingItem]:
    """The training items of a stored campaign spec, in order (none: an empty list)."""
    return [TrainingItem.model_validate(raw) for raw in spec.get("training") or []]


def training_refusal(template: TaskTemplate) -> str | None:
    """Why ``template`` cannot have training items (None: it can)."""
    if not template.has_gold:
        return (
            f"the {template.name!r} template has no right answers to show, so it takes no training items; "
            "remove training (show good and bad answers with guidance.examples instead)"
        )
    if template.no_training_reason:
        return f"the {template.name!r} template takes no training items: {template.no_training_reason}"
    return None


def item_pictures(payload: Mapping[str, Any]) -> list[str]:
    """The pictures an item names by a path in the media folder: its ``image``, then its candidates'."""
    found = [str(payload.get("image") or "")]
    for candidate in payload.get("candidates") or []:
        if isinstance(candidate, Mapping):
            found.append(str(candidate.get("image") or ""))
    # As the page server tells a media-folder file from an address of its own (``hit_pages.media.is_local``).
    return [p for p in found if p and not p.startswith(("http://", "https://", "/"))]


def training_pictures(items: Sequence[TrainingItem]) -> list[str]:
    """Every media-folder picture the practice pages show (items and explanations), once each, in order."""
    found: list[str] = []
    for entry in items:
        found.extend(item_pictures(entry.item))
        found.extend(markdown_pictures(entry.explanation))
    return list(dict.fromkeys(found))


def _line(lines: Mapping[tuple[Any, ...], int], steps: tuple[Any, ...]) -> int | None:
    while steps and steps not in lines:
        steps = steps[:-1]
    return lines.get(steps)


def _checked_entry(
    path: Path, template: TaskTemplate, n: int, entry: TrainingItem, lines: Mapping[tuple[Any, ...], int]
) -> tuple[dict[str, Any] | None, list[InputFileError]]:
    """The entry's validated payload (None: refused) and what is wrong with it."""
    at = ("training", n)
    try:
        payload = template.validate_item(entry.item)
    except ValidationError as exc:
        found = validation_errors(path, exc, dict(lines), prefix=(*at, "item"), model=template.item_model)
        return None, found.errors
    try:
        key = template.validate_answer_key(entry.answer)
        template.check_answer_key(key, payload)
    except ValidationError as exc:
        found = validation_errors(path, exc, dict(lines), prefix=(*at, "answer"), model=template.answer_model)
        return None, found.errors
    except ValueError as exc:
        return None, [InputFileError(path, _line(lines, (*at, "answer")), f"training.{n}.answer", str(exc))]
    return payload, []


def _explanation_problems(entry: TrainingItem, media: Path | None) -> Iterator[str]:
    yield from markdown_problems(entry.explanation)
    for picture in markdown_pictures(entry.explanation):
        joined = safe_join(str(media), picture) if media is not None else None
        if media is None:
            yield f"the picture {picture!r} needs a media folder: set media_dir"
        elif joined is None or not Path(joined).is_file():
            yield f"no file {picture!r} in the media folder {media}"


def check_training(
    path: Path,
    template_name: str,
    training: Sequence[TrainingItem],
    known: Sequence[tuple[str, Mapping[str, Any], str]],
    media: Path | None,
    lines: Mapping[tuple[Any, ...], int],
) -> None:
    """Refuse training items the template cannot judge, or that are (or look like) real work or gold.

    ``known`` holds the campaign's items and gold items as (id, payload, which file). Every problem
    at once, each with the campaign file's line and the field (``training.2.item.sentence``);
    raises ``InputFileErrors``.
    """
    if not training:
        return
    template = get_template(template_name)
    refusal = training_refusal(template)
    if refusal:
        raise InputFileError(path, lines.get(("training",)), "training", refusal)
    real = {ident: source for ident, _, source in known}
    contents = {_content(payload): (ident, source) for ident, payload, source in known}
    errors: list[InputFileError] = []
    seen: set[str] = set()
    for n, entry in enumerate(training):
        at = ("training", n)
        where = f"training.{n}"
        if entry.id in real:
            errors.append(
                InputFileError(
                    path,
                    _line(lines, (*at, "id")),
                    f"{where}.id",
                    f"{entry.id!r} is an id of {real[entry.id]}: a practice item is never real work nor "
                    "gold; give it an id of its own",
                )
            )
        elif entry.id in seen:
            line = _line(lines, (*at, "id"))
            errors.append(InputFileError(path, line, f"{where}.id", f"duplicate id {entry.id!r}"))
        seen.add(entry.id)
        payload, problems = _checked_entry(path, template, n, entry, lines)
        errors.extend(problems)
        if payload is not None and _content(payload) in contents:
            other, source = contents[_content(payload)]
            errors.append(
                InputFileError(
                    path,
                    _line(lines, (*at, "item")),
                    f"{where}.item",
                    f"this practice item is the same as {other!r} of {source}: workers would be shown "
                    "its right answer; practise on an item of its own",
                )
            )
        errors.extend(
            InputFileError(path, _line(lines, (*at, "explanation")), f"{where}.explanation", message)
            for message in _explanation_problems(entry, media)
        )
    if errors:
        raise InputFileErrors(errors)


def _content(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class PracticeItem:
    """A training item ready for a page: its validated payload and answer key, its place among them."""

    number: int
    count: int
    payload: dict[str, Any]
    key: Any
    entry: TrainingItem


def practice_item(spec: Mapping[str, Any], number: int) -> PracticeItem | None:
    """Training item ``number`` (from 0) of a stored campaign spec (None: there is no such item)."""
    items = training_of(spec)
    if not 0 <= number < len(items):
        return None
    template = get_template(str(spec["template"]))
    entry = items[number]
    payload = template.validate_item(entry.item)
    return PracticeItem(number, len(items), payload, template.validate_answer_key(entry.answer), entry)


@dataclass(frozen=True)
class Feedback:
    """What a worker is told once a practice answer is judged (HTML made safe).

    ``right`` is None only where nobody answered: a preview of what every worker reads afterwards.
    """

    right: bool | None
    right_answer: str
    explanation: str


@dataclass(frozen=True)
class Judged:
    """A practice answer judged: the form's errors (the template's own messages), or the feedback."""

    errors: dict[str, str]
    feedback: Feedback | None = None


def judge(
    spec: Mapping[str, Any],
    practice: PracticeItem,
    form: Mapping[str, str],
    picture_url: Callable[[str], str | None],
) -> Judged:
    """Judge a practice page's form with the template's own parsing and gold scoring; store nothing.

    The page shows the item as the item lists it (``TaskTemplate.item_order``), so the answer read
    back is in the item's terms, those of the right answer and of the explanation.
    """
    template = get_template(str(spec["template"]))
    options = spec.get("template_options") or {}
    parsed = template.parse_answers(form, 1)
    if parsed.ok:
        parsed = template.check_against_items(parsed, [practice.payload])
    if not parsed.ok:
        return Judged(dict(parsed.errors))
    answer = parsed.answers[0]
    if template.arranged:
        answer = template.unscramble(answer, template.item_order(practice.payload), practice.payload)
    score = template.score_gold_item(answer, practice.key, practice.payload, options)
    entry = practice.entry
    words = entry.right_answer or template.key_words(practice.key, practice.payload)
    return Judged(
        {},
        Feedback(
            right=template.gold_passed(score, options),
            right_answer=words,
            explanation=render_markdown(entry.explanation, picture_url),
        ),
    )
