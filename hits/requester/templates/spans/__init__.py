"""Mark the mistakes in a generated image description and what it leaves out of a correct one."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate, TemplateError
from hits.requester.templates.options import pass_score

KINDS = ("mistakes", "missing")
#: Which text each kind of span is marked in.
TEXT_OF = {"mistakes": "generated", "missing": "correct"}
MAX_SPANS = 200
_TOKEN = re.compile(r"\w+(?:'\w+)?")

Span = tuple[int, int]


class SpansItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    correct: str = Field(min_length=1, max_length=5000, description="the CORRECT (reference) description")
    generated: str = Field(min_length=1, max_length=5000, description="the GENERATED description to check")


def check_spans(spans: Any, length: int | None = None) -> list[list[int]]:
    """``spans`` as sorted ``[start, end]`` pairs; raises ValueError with a reason when invalid.

    Offsets count characters (Unicode code points) of the text, ``end`` exclusive.
    """
    if not isinstance(spans, list):
        raise ValueError("expected a list of [start, end] pairs")
    if len(spans) > MAX_SPANS:
        raise ValueError(f"at most {MAX_SPANS} marks")
    out: list[list[int]] = []
    for span in spans:
        if (
            not isinstance(span, list | tuple)
            or len(span) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)
        ):
            raise ValueError(f"{span!r} is not a [start, end] pair of whole numbers")
        start, end = span
        if start < 0 or start >= end:
            raise ValueError(f"mark [{start}, {end}] must start before it ends, at 0 or later")
        if length is not None and end > length:
            raise ValueError(f"mark [{start}, {end}] runs past the end of the text ({length} characters)")
        out.append([start, end])
    out.sort()
    for (s1, e1), (s2, e2) in zip(out, out[1:], strict=False):
        if s2 < e1:
            raise ValueError(f"marks [{s1}, {e1}] and [{s2}, {e2}] overlap")
    return out


class SpansKey(BaseModel):
    """The gold marks, as character offsets into the item's texts."""

    model_config = ConfigDict(extra="forbid")
    mistakes: list[list[int]] = Field(default_factory=list, description="spans of GENERATED that are wrong")
    missing: list[list[int]] = Field(
        default_factory=list, description="spans of CORRECT that GENERATED lacks"
    )

    @model_validator(mode="after")
    def _spans(self) -> SpansKey:
        self.mistakes = check_spans(self.mistakes)
        self.missing = check_spans(self.missing)
        return self


def marked_tokens(text: str, spans: Sequence[Sequence[int]]) -> set[int]:
    """Indices of the word tokens of ``text`` that any span touches."""
    out = set()
    for k, match in enumerate(_TOKEN.finditer(text)):
        if any(start < match.end() and match.start() < end for start, end in spans):
            out.add(k)
    return out


def f1(predicted: set[int], gold: set[int]) -> float:
    """F1 of two token sets; both empty agree perfectly."""
    if not predicted and not gold:
        return 1.0
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


#: Default: a gold item passes at a token-level F1 of one half.
GOLD_PASS_SCORE = 0.5


class SpansOptions(BaseModel):
    """The ``spans`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_pass_score: float = pass_score(
        GOLD_PASS_SCORE, "the token-level F1 of the marks, the mean of mistakes and missing details"
    )


class SpansTemplate(TaskTemplate):
    """Span marking (field ``spans-<slot>``: JSON ``{"mistakes": [[s, e], ...], "missing": [...]}``)."""

    name: ClassVar[str] = "spans"
    item_model: ClassVar[type[BaseModel]] = SpansItem
    answer_model: ClassVar[type[BaseModel]] = SpansKey
    options_model: ClassVar[type[BaseModel] | None] = SpansOptions
    aggregation: ClassVar[str] = "token_majority"
    agreement_level: ClassVar[str | None] = None

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            field = f"spans-{i}"
            raw = (form.get(field) or "").strip()
            if not raw:
                result.errors[field] = (
                    f"Description {i + 1}: your marks did not arrive. This page needs JavaScript; "
                    "turn it on, reload the page and mark the text again."
                )
                continue
            try:
                data = json.loads(raw)
                if not isinstance(data, dict) or set(data) != set(KINDS):
                    raise ValueError('expected an object with "mistakes" and "missing"')
                answer = {kind: check_spans(data[kind]) for kind in KINDS}
            except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
                result.errors[field] = (
                    f"Description {i + 1}: the marks could not be read ({exc}); reload the page."
                )
                continue
            result.answers.append(answer)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=False)):
            for kind in KINDS:
                try:
                    check_spans(answer[kind], len(str(item.get(TEXT_OF[kind], ""))))
                except ValueError as exc:
                    parsed.errors[f"spans-{i}"] = f"Description {i + 1}: {exc}; reload the page."
                    break
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        raise TemplateError("spans gold is scored on the item's tokens: call score_gold_item")

    def score_gold_item(
        self, answer: Any, key: Mapping[str, Any], item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> float:
        """Mean of the token-level F1 of the mistakes and of the missing marks."""
        scores = [
            f1(
                marked_tokens(item[TEXT_OF[kind]], answer.get(kind, [])),
                marked_tokens(item[TEXT_OF[kind]], key.get(kind, [])),
            )
            for kind in KINDS
        ]
        return sum(scores) / len(scores)

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """Token F1 rarely reaches 1 between careful people: the default pass mark is 0.5."""
        return score >= float(options.get("gold_pass_score", GOLD_PASS_SCORE))

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [
            (f"spans-{i}", json.dumps({kind: a[kind] for kind in KINDS}, separators=(",", ":")))
            for i, a in enumerate(answers)
        ]
