"""Improve a picture's description: one worker per round, each starting from the last round's text.

The page shows the picture and the current description in an editable box;
the worker corrects and completes it, or starts over. Who wrote the current
text (a model, a person, which round) is not in the item, the page, its URL
or the answer: the workflow keeps that in its own tables
(``hits.requester.workflows``). No gold (there is no single right description):
quality comes from the free-text signals, as for the ``write`` template.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from hits.requester.templates.base import ParsedAnswers, TaskTemplate, TemplateError
from hits.requester.templates.options import NoOptions

MAX_CHARS = 4000
MIN_WORDS = 5
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


class RefineItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    previous: str = Field(default="", max_length=MAX_CHARS, description="the description to improve")


class NoKey(BaseModel):
    """No gold: there is no single right description."""

    model_config = ConfigDict(extra="forbid")


def normalize(text: str) -> str:
    """Case- and spacing-insensitive form, to tell an unchanged text."""
    return " ".join(text.casefold().split())


class RefineTemplate(TaskTemplate):
    """One free-text description per slot (field ``text-<slot>``), improved from ``previous``."""

    name: ClassVar[str] = "refine"
    item_model: ClassVar[type[BaseModel]] = RefineItem
    answer_model: ClassVar[type[BaseModel]] = NoKey
    options_model: ClassVar[type[BaseModel] | None] = NoOptions
    aggregation: ClassVar[str] = "collect_all"
    agreement_level: ClassVar[str | None] = None
    has_gold: ClassVar[bool] = False

    def page_context(self) -> dict[str, Any]:
        return {"max_chars": MAX_CHARS, "min_words": MIN_WORDS}

    def validate_answer_key(self, answer: Any) -> Any:
        raise TemplateError("the refine template has no gold items: leave out the answer key")

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            field = f"text-{i}"
            # Paragraph breaks are kept as single newlines; other runs of spaces are one space.
            raw = (form.get(field) or "").replace("\r\n", "\n")
            text = "\n".join(" ".join(line.split()) for line in raw.split("\n") if line.strip())
            words = len(_WORD.findall(text))
            problem = None
            if not text:
                problem = "write a description of the picture."
            elif len(text) > MAX_CHARS:
                problem = f"the description is {len(text)} characters long; keep it under {MAX_CHARS}."
            elif words < MIN_WORDS:
                problem = f"the description needs at least {MIN_WORDS} words; it has {words}."
            if problem:
                result.errors[field] = f"Picture {i + 1}: {problem}"
            else:
                result.answers.append(text)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (text, item) in enumerate(zip(parsed.answers, items, strict=False)):
            if normalize(text) == normalize(str(item.get("previous") or "")):
                parsed.errors[f"text-{i}"] = (
                    f"Picture {i + 1}: the description is unchanged; correct or complete it, "
                    "or start from scratch."
                )
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        raise TemplateError("the refine template has no gold items to score")

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"text-{i}", str(a)) for i, a in enumerate(answers)]
