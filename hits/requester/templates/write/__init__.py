"""Write one short sentence describing each image."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from hits.requester.templates.base import ParsedAnswers, TaskTemplate, TemplateError
from hits.requester.templates.options import NoOptions

MAX_CHARS = 99  # "under 100 characters"
#: How close (difflib ratio, 0 to 1) to the example a sentence may come before it counts as a copy.
COPY_RATIO = 0.9
#: Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "mt", "no", "approx"}
_TERMINAL = re.compile(r"[.!?]+")
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


class WriteItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    example: str = Field(default="", max_length=300, description="an optional sentence shown as an example")


class NoKey(BaseModel):
    """The write template has no gold: there is no single right sentence."""

    model_config = ConfigDict(extra="forbid")


def normalize(sentence: str) -> str:
    """Case-, space- and end-punctuation-insensitive form, for copy and duplicate checks."""
    return " ".join(sentence.casefold().split()).rstrip(".!? ")


def sentence_problem(sentence: str) -> str | None:
    """Why ``sentence`` is not one sentence (``None`` when it is)."""
    for match in _TERMINAL.finditer(sentence):
        if match.end() == len(sentence.rstrip()):
            break
        before = sentence[: match.start()].split()
        word = before[-1].casefold() if before else ""
        if match.group() == "." and (word in ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
            continue
        if match.group() == "." and sentence[match.end() : match.end() + 1].isdigit():
            continue  # a decimal number such as 2.5
        return "write a single sentence: end it with at most one full stop, and put nothing after it"
    if "\n" in sentence:
        return "keep the sentence on one line"
    return None


class WriteTemplate(TaskTemplate):
    """Free-text image descriptions (field ``sentence-<slot>``); no gold, quality from signals."""

    name: ClassVar[str] = "write"
    item_model: ClassVar[type[BaseModel]] = WriteItem
    answer_model: ClassVar[type[BaseModel]] = NoKey
    options_model: ClassVar[type[BaseModel] | None] = NoOptions
    aggregation: ClassVar[str] = "collect_all"  # free text: every sentence is kept
    agreement_level: ClassVar[str | None] = None
    has_gold: ClassVar[bool] = False

    def page_context(self) -> dict[str, Any]:
        return {"max_chars": MAX_CHARS}

    def validate_answer_key(self, answer: Any) -> Any:
        raise TemplateError("the write template has no gold items: leave out the answer key")

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        seen: dict[str, int] = {}
        for i in range(slots):
            field = f"sentence-{i}"
            text = " ".join((form.get(field) or "").split())
            problem = None
            if not text:
                problem = "write one sentence describing the picture."
            elif len(text) > MAX_CHARS:
                problem = f"the sentence is {len(text)} characters long; shorten it to under 100."
            elif not _WORD.search(text):
                problem = "the sentence needs words, not only numbers or symbols."
            elif why := sentence_problem(text):
                problem = why + "."
            elif normalize(text) in seen:
                problem = (
                    f"this is the same sentence as for picture {seen[normalize(text)] + 1}; "
                    "describe what is in this picture."
                )
            if problem:
                result.errors[field] = f"Picture {i + 1}: {problem}"
            else:
                seen[normalize(text)] = i
                result.answers.append(text)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (text, item) in enumerate(zip(parsed.answers, items, strict=False)):
            example = normalize(str(item.get("example") or ""))
            if example and SequenceMatcher(None, normalize(text), example).ratio() >= COPY_RATIO:
                parsed.errors[f"sentence-{i}"] = (
                    f"Picture {i + 1}: the sentence copies the example; "
                    "describe the picture in your own words."
                )
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        raise TemplateError("the write template has no gold items to score")

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"sentence-{i}", str(a)) for i, a in enumerate(answers)]


# --- quality signals ------------------------------------------------------------------------------


@cache
def _spell_checker() -> Any:
    """pyspellchecker's English dictionary (loaded once per process; about 0.1 s)."""
    from spellchecker import SpellChecker

    return SpellChecker(language="en")


def known_word(word: str) -> bool:
    """Whether ``word`` is an English word (or a common abbreviation)."""
    w = word.casefold()
    return w in ABBREVIATIONS or not _spell_checker().unknown([w])


def spelling_counts(sentence: str) -> tuple[int, int]:
    """(unknown words, words counted); capitalised words after the first are names, not counted."""
    tokens = [m.group() for m in _WORD.finditer(sentence)]
    counted = [t for k, t in enumerate(tokens) if k == 0 or not t[0].isupper()]
    return sum(not known_word(t) for t in counted), len(counted)


def spelling_error_rate(sentence: str) -> float:
    """Share of the sentence's words the word list does not know (0 for a sentence without words)."""
    unknown, counted = spelling_counts(sentence)
    return unknown / counted if counted else 0.0


@dataclass(frozen=True)
class WorkerSignals:
    """Quality signals for one worker's sentences."""

    sentences: int
    mean_length: float  # characters
    spelling_error_rate: float  # unknown words / words, over all the worker's sentences
    duplicate_rate: float  # share of sentences another worker wrote, identically, for the same item


def quality_signals(sentences: Mapping[str, Mapping[str, str]]) -> dict[str, WorkerSignals]:
    """Signals per worker from ``{item_id: {worker_id: sentence}}``.

    Duplicates compare the normalised sentence (case, spacing and end punctuation
    ignored) against the other workers' sentences for the same item.
    """
    texts: dict[str, list[str]] = {}
    duplicates: dict[str, int] = {}
    for by_worker in sentences.values():
        counts: dict[str, int] = {}
        for text in by_worker.values():
            counts[normalize(text)] = counts.get(normalize(text), 0) + 1
        for worker, text in by_worker.items():
            texts.setdefault(worker, []).append(text)
            duplicates[worker] = duplicates.get(worker, 0) + int(counts[normalize(text)] > 1)
    out = {}
    for worker, written in texts.items():
        spelled = [spelling_counts(t) for t in written]
        unknown, counted = sum(c[0] for c in spelled), sum(c[1] for c in spelled)
        out[worker] = WorkerSignals(
            sentences=len(written),
            mean_length=sum(len(t) for t in written) / len(written),
            spelling_error_rate=unknown / counted if counted else 0.0,
            duplicate_rate=duplicates[worker] / len(written),
        )
    return out
