"""Tick every candidate sentence that describes an image, or say that none does."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.options import pass_score

MAX_CANDIDATES = 20
NONE = "none"
_CHOICE = re.compile(r"select-(\d+)-(\d+|none)\Z")


class SelectItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    sentences: list[str] = Field(min_length=2, max_length=MAX_CANDIDATES, description="candidate sentences")

    @field_validator("sentences")
    @classmethod
    def _not_blank(cls, value: list[str]) -> list[str]:
        if any(not s.strip() for s in value):
            raise ValueError("every candidate sentence needs some text")
        return value


class SelectKey(BaseModel):
    """Indices (from 0) of the candidate sentences that describe the image; empty: none does."""

    model_config = ConfigDict(extra="forbid")
    correct: list[int] = Field(default_factory=list, description="indices of the right sentences, from 0")

    @field_validator("correct")
    @classmethod
    def _indices(cls, value: list[int]) -> list[int]:
        if any(i < 0 or i >= MAX_CANDIDATES for i in value):
            raise ValueError(f"indices run from 0 to {MAX_CANDIDATES - 1}")
        if len(set(value)) != len(value):
            raise ValueError("an index appears twice")
        return sorted(value)


def jaccard(a: set[int], b: set[int]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets agree perfectly."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


#: Default: a gold item passes when the ticked and the right sentences overlap by half (Jaccard).
GOLD_PASS_SCORE = 0.5


class SelectOptions(BaseModel):
    """The ``select`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_pass_score: float = pass_score(
        GOLD_PASS_SCORE, "the Jaccard overlap of the ticked sentences with the right ones"
    )


class SelectTemplate(TaskTemplate):
    """Binary relevance judgements: which of the candidate sentences describe the image?

    A page field ``select-<slot>-<j>`` is a ticked sentence ``j``; ``select-<slot>-none``
    is "no caption is correct". An answer is the sorted list of ticked indices,
    ``[]`` meaning none is correct.
    """

    name: ClassVar[str] = "select"
    item_model: ClassVar[type[BaseModel]] = SelectItem
    answer_model: ClassVar[type[BaseModel]] = SelectKey
    options_model: ClassVar[type[BaseModel] | None] = SelectOptions
    aggregation: ClassVar[str] = "binary_relevance"
    agreement_level: ClassVar[str | None] = "binary"

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        ticked: dict[int, set[int]] = {i: set() for i in range(slots)}
        none: set[int] = set()
        for name in form:
            match = _CHOICE.match(name)
            if not match or not form.get(name):
                continue
            slot = int(match.group(1))
            if slot >= slots:
                continue
            if match.group(2) == NONE:
                none.add(slot)
            elif int(match.group(2)) < MAX_CANDIDATES:
                ticked[slot].add(int(match.group(2)))
        result = ParsedAnswers()
        for i in range(slots):
            field = f"select-{i}"
            if i in none and ticked[i]:
                count = len(ticked[i])
                result.errors[field] = (
                    f"Image {i + 1}: you ticked \u201cNo caption is correct\u201d and also {count} "
                    f"sentence{'s' if count != 1 else ''}; untick one or the other."
                )
            elif i not in none and not ticked[i]:
                result.errors[field] = (
                    f"Image {i + 1}: tick every sentence that describes the image, "
                    "or \u201cNo caption is correct\u201d if none does."
                )
            else:
                result.answers.append(sorted(ticked[i]))
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=False)):
            count = len(item.get("sentences", []))
            if any(j >= count for j in answer):
                parsed.errors[f"select-{i}"] = (
                    f"Image {i + 1}: a ticked sentence is not on the page; reload the page and tick again."
                )
        return parsed

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        count = len(item.get("sentences", []))
        beyond = [i for i in answer["correct"] if i >= count]
        if beyond:
            raise ValueError(
                f"index {beyond[0]} names no sentence: this item has {count}, numbered 0 to {count - 1}"
            )

    def key_words(self, key: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
        """The right sentences as the page numbers them (from 1), or that none is right."""
        sentences = payload.get("sentences", [])
        right = [
            f"{i + 1}. {sentences[i]}" if i < len(sentences) else str(i + 1) for i in key.get("correct", [])
        ]
        return "; ".join(right) if right else "No caption is correct"

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        return jaccard({int(j) for j in answer}, {int(j) for j in key.get("correct", [])})

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """A Jaccard score of at least ``gold_pass_score`` (default 0.5) counts as correct."""
        return score >= float(options.get("gold_pass_score", GOLD_PASS_SCORE))

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        fields = []
        for i, answer in enumerate(answers):
            if not answer:
                fields.append((f"select-{i}-{NONE}", "on"))
            fields.extend((f"select-{i}-{j}", "on") for j in sorted(answer))
        return fields
