"""Item banks: the YAML file format, its validation, and the loaded ``Bank``.

A bank file has three top-level keys::

    title: Image description qualification
    overall_pass: 80            # minimum overall score (0..100) to pass
    sections:
      - id: spelling
        kind: spelling          # spelling | grammar | judgment
        instructions: "Is every word spelled and used correctly?"
        sample: 10              # items drawn per attempt
        pass_threshold: 8       # minimum correct of those drawn
    items:
      - id: sp-001
        section: spelling
        sentence: "A dog chases a red ball across the lawn."
        answer: correct         # a choice id
        explanation: "Every word is spelled and used correctly."

Spelling and grammar items get the choices ``correct`` / ``incorrect`` unless
they list their own. Judgment items list ``choices`` (``id`` and ``text``, the
candidate sentences) and what to judge them against: an ``image`` path
relative to the bank file, a ``sentence``, a ``prompt``, or several of these.
The whole format, with how scores round and the qualification value, is in
``docs/qualification.md``.

Loading reports every problem at once, each naming the file, the line, the
field and, for items, the item id.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hits.requester.fileerrors import InputFileError, InputFileErrors, load_yaml
from qualification.media import image_problem, served_name

DEFAULT_BANK = Path(__file__).resolve().parent / "banks" / "default.yaml"

SectionKind = Literal["spelling", "grammar", "judgment"]
YES_NO_KINDS = ("spelling", "grammar")


class Choice(BaseModel):
    """One selectable answer: a stable id (the SelectionIdentifier) and its text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    text: str = Field(min_length=1, max_length=500)


DEFAULT_CHOICES = (Choice(id="correct", text="Correct"), Choice(id="incorrect", text="Incorrect"))


class Section(BaseModel):
    """A section of the test: what kind of items, how many are drawn, how many must be right."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    kind: SectionKind
    title: str = ""
    instructions: str = Field(min_length=1)
    sample: int = Field(ge=1, le=200)
    pass_threshold: int = Field(ge=0)


class Item(BaseModel):
    """One question of the bank, with its answer key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    section: str = Field(min_length=1)
    sentence: str | None = Field(default=None, min_length=1, max_length=1000)
    prompt: str | None = Field(default=None, min_length=1, max_length=1000)
    choices: tuple[Choice, ...] = Field(default=(), max_length=10)
    answer: str = Field(min_length=1)
    image: str | None = None
    alt: str | None = None
    explanation: str | None = None


class BankHeader(BaseModel):
    """The bank's top-level settings (sections and items are validated one by one)."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    # At least 1, so that the value 0 a failed attempt earns is always below the pass mark.
    overall_pass: int = Field(ge=1, le=100)
    sections: list[Any] = Field(min_length=1)
    items: list[Any] = Field(min_length=1)


@dataclass(frozen=True)
class Bank:
    """A validated item bank. Sections keep file order; items are looked up by id."""

    path: Path
    title: str
    overall_pass: int
    sections: tuple[Section, ...]
    items: dict[str, Item]
    #: Served name (content hash and file type) -> picture file: the only files a test serves.
    media: dict[str, Path] = field(default_factory=dict)
    #: Item id -> served name of its picture.
    image_names: dict[str, str] = field(default_factory=dict)

    def section(self, section_id: str) -> Section:
        return next(s for s in self.sections if s.id == section_id)

    def items_in(self, section_id: str) -> list[Item]:
        return [item for item in self.items.values() if item.section == section_id]

    def choices(self, item: Item) -> tuple[Choice, ...]:
        """The item's choices, the yes/no defaults for spelling and grammar items."""
        return item.choices or DEFAULT_CHOICES

    def image_path(self, item: Item) -> Path | None:
        """The item's picture file, or None for an item without one."""
        return self.path.parent / item.image if item.image else None

    def image_name(self, item: Item) -> str | None:
        """The name the item's picture is served by (see ``qualification.media``)."""
        return self.image_names.get(item.id)


def _where(raw: Any, index: int) -> str:
    ident = raw.get("id") if isinstance(raw, dict) else None
    return f"item '{ident}'" if isinstance(ident, str) and ident else f"item #{index + 1} (no id)"


def _line(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    probe = loc
    while probe and probe not in lines:
        probe = probe[:-1]
    return lines.get(probe, lines.get(()))


def load_bank(path: Path | str) -> Bank:
    """Load and validate a bank file; raise ``InputFileErrors`` listing every problem."""
    path = Path(path)
    try:
        data, lines = load_yaml(path)
    except InputFileError as exc:
        raise InputFileErrors([exc]) from exc
    errors: list[InputFileError] = []

    def err(loc: tuple[Any, ...], message: str) -> None:
        field = ".".join(str(part) for part in loc) or None
        errors.append(InputFileError(path, _line(lines, loc), field, message))

    try:
        header = BankHeader.model_validate(data)
    except ValidationError as exc:
        for e in exc.errors():
            err(tuple(e["loc"]), e["msg"])
        raise InputFileErrors(errors) from exc

    sections: list[Section] = []
    for index, raw in enumerate(header.sections):
        try:
            sections.append(Section.model_validate(raw))
        except ValidationError as exc:
            for e in exc.errors():
                err(("sections", index, *e["loc"]), e["msg"])
    for index, count in _duplicates([s.id for s in sections]):
        err(("sections", index, "id"), f"duplicate section id '{sections[index].id}' ({count} times)")
    by_id = {s.id: s for s in sections}

    items: dict[str, Item] = {}
    raw_ids = [raw.get("id") if isinstance(raw, dict) else None for raw in header.items]
    id_counts = Counter(i for i in raw_ids if isinstance(i, str))
    for index, raw in enumerate(header.items):
        who = _where(raw, index)
        here = ("items", index)
        if isinstance(raw, dict) and isinstance(raw.get("id"), str) and id_counts[raw["id"]] > 1:
            err((*here, "id"), f"{who}: duplicate item id (used {id_counts[raw['id']]} times)")
        try:
            item = Item.model_validate(raw)
        except ValidationError as exc:
            for e in exc.errors():
                err((*here, *e["loc"]), f"{who}: {e['msg']}")
            continue
        section = by_id.get(item.section)
        if section is None:
            known = ", ".join(sorted(by_id)) or "none"
            err((*here, "section"), f"{who}: unknown section '{item.section}' (known: {known})")
            continue
        for loc, message in _item_problems(path, section, item):
            err((*here, *loc), f"{who}: {message}")
        items.setdefault(item.id, item)

    for index, section in enumerate(sections):
        # Count items that name the section even if they have other problems: one error per cause.
        count = sum(1 for raw in header.items if isinstance(raw, dict) and raw.get("section") == section.id)
        if section.sample > count:
            err(
                ("sections", index, "sample"),
                f"section '{section.id}' draws {section.sample} items but has {count}",
            )
        if section.pass_threshold > section.sample:
            err(
                ("sections", index, "pass_threshold"),
                f"section '{section.id}': pass_threshold {section.pass_threshold} "
                f"exceeds sample {section.sample}",
            )
    if errors:
        raise InputFileErrors(errors)
    media: dict[str, Path] = {}
    image_names: dict[str, str] = {}
    for item in items.values():
        if item.image:
            file = path.parent / item.image
            image_names[item.id] = served_name(file)
            media[image_names[item.id]] = file
    return Bank(path, header.title, header.overall_pass, tuple(sections), items, media, image_names)


def _duplicates(values: list[str]) -> list[tuple[int, int]]:
    counts = Counter(values)
    return [(i, counts[v]) for i, v in enumerate(values) if counts[v] > 1]


def _item_problems(path: Path, section: Section, item: Item) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    choices = item.choices or (DEFAULT_CHOICES if section.kind in YES_NO_KINDS else ())
    ids = [c.id for c in choices]
    if section.kind in YES_NO_KINDS and not item.sentence:
        out.append((("sentence",), f"a {section.kind} item needs a sentence"))
    if section.kind == "judgment":
        if len(choices) < 2:
            out.append((("choices",), "a judgment item needs at least two choices"))
        # Text-only judgment items (no picture) are fine: judging descriptions of a text.
        if not (item.image or item.sentence or item.prompt):
            out.append((("prompt",), "a judgment item needs a prompt, a sentence or an image"))
    if item.image:
        problem = image_problem(path.parent, item.image)
        if problem:
            out.append((("image",), problem))
        if not item.alt:
            out.append((("alt",), "an item with an image needs alt text"))
    if len(set(ids)) != len(ids):
        out.append((("choices",), "choice ids must be unique"))
    if len({c.text for c in choices}) != len(choices):
        out.append((("choices",), "choice texts must be unique"))
    if ids and item.answer not in ids:
        out.append((("answer",), f"answer '{item.answer}' is not one of the choices ({', '.join(ids)})"))
    return out
