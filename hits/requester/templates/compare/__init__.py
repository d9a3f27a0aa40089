"""Put 2 to 6 descriptions of one image in order, best first (with two: which is better)."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.options import pass_score

MIN_CANDIDATES, MAX_CANDIDATES = 2, 6
#: Candidate ids go into form field names and comma-separated answers: no commas, no spaces.
CANDIDATE_ID = r"[A-Za-z0-9_-]{1,40}"
LETTERS = "ABCDEF"
#: Default gold pass mark: at most a fifth of the candidate pairs out of order (see ``score_gold``).
GOLD_PASS_SCORE = 0.8
_RANK = re.compile(rf"rank-(\d+)-({CANDIDATE_ID})\Z")
_ID = re.compile(rf"{CANDIDATE_ID}\Z")


class _Identified(Protocol):
    id: str


_Listed = TypeVar("_Listed", bound=_Identified)


def unique_ids(candidates: list[_Listed]) -> list[_Listed]:
    """``candidates`` as they are when no two share an id, else a ValueError naming the repeated ids.

    Answers and gold keys name candidates by id, so two with one id could not be told apart.
    """
    ids = [c.id for c in candidates]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"candidate ids must be unique; repeated: {', '.join(twice)}")
    return candidates


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(
        pattern=rf"^{CANDIDATE_ID}$", description="unique within the item; letters, digits, _ and -"
    )
    text: str = Field(min_length=1, max_length=5000, description="the description workers read")
    system: str = Field(default="", max_length=128, description="who wrote it: never shown to workers")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a candidate description needs some text")
        return value

    @model_validator(mode="after")
    def _id_hides_system(self) -> Candidate:
        # The id is in the page's form fields; a system name in it would tell workers who wrote what.
        if len(self.system) >= 2 and self.system.casefold() in self.id.casefold():
            raise ValueError(
                f"candidate id {self.id!r} contains its system {self.system!r}, and ids are in the page's "
                "form; use a neutral id (c1, c2, ...) and keep the system in 'system'"
            )
        return self


class CompareItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    candidates: Annotated[list[Candidate], AfterValidator(unique_ids)] = Field(
        min_length=MIN_CANDIDATES, max_length=MAX_CANDIDATES
    )


class CompareKey(BaseModel):
    """The gold ordering: every candidate id of the item, best first."""

    model_config = ConfigDict(extra="forbid")
    order: list[str] = Field(
        min_length=MIN_CANDIDATES, max_length=MAX_CANDIDATES, description="candidate ids, best first"
    )

    @field_validator("order")
    @classmethod
    def _permutation(cls, value: list[str]) -> list[str]:
        if any(not _ID.match(i) for i in value):
            raise ValueError("candidate ids are letters, digits, _ and -")
        if len(set(value)) != len(value):
            raise ValueError("a candidate appears twice in the order")
        return value


def concordance(answer: Sequence[str], gold: Sequence[str]) -> float:
    """Share of candidate pairs that ``answer`` puts in the same order as ``gold``: (tau + 1) / 2.

    With no ties (orderings are permutations) Kendall's tau is (C - D) / (C + D)
    over the n(n-1)/2 pairs, so (tau + 1) / 2 = C / (C + D): 1 for the same
    order, 0 for the reverse. An answer that does not order exactly the gold's
    candidates scores 0.
    """
    if sorted(answer) != sorted(gold) or len(gold) < 2:
        return 0.0
    place = {c: k for k, c in enumerate(answer)}
    pairs = [(a, b) for i, a in enumerate(gold) for b in gold[i + 1 :]]
    return sum(place[a] < place[b] for a, b in pairs) / len(pairs)


def kendall_tau(answer: Sequence[str], gold: Sequence[str]) -> float:
    """Kendall's tau between two orderings of the same candidates (-1 to 1)."""
    return 2 * concordance(answer, gold) - 1


class CompareOptions(BaseModel):
    """The ``compare`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_pass_score: float = pass_score(
        GOLD_PASS_SCORE, "(Kendall's tau + 1) / 2 between the worker's order and the key's"
    )


class CompareTemplate(TaskTemplate):
    """Side-by-side comparison and ranking of image descriptions.

    With more than two candidates the page has one field ``rank-<slot>-<id>`` per
    candidate holding its place (1 is best); with two it has one radio group
    ``order-<slot>`` whose values are both orderings. The answer is the list of
    candidate ids, best first, stored in MTurk's answer as ``order-<slot>`` =
    ``"id1,id2,..."``.
    """

    name: ClassVar[str] = "compare"
    item_model: ClassVar[type[BaseModel]] = CompareItem
    answer_model: ClassVar[type[BaseModel]] = CompareKey
    options_model: ClassVar[type[BaseModel] | None] = CompareOptions
    aggregation: ClassVar[str] = "bradley_terry"
    agreement_level: ClassVar[str | None] = "rank"

    def page_context(self) -> dict[str, Any]:
        return {"letters": LETTERS}

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        """Candidates in an order of their own per assignment (no position favours a system), no systems."""
        view = dict(payload)
        candidates = [{"id": c["id"], "text": c["text"]} for c in payload.get("candidates", [])]
        random.Random(seed).shuffle(candidates)
        view["candidates"] = candidates
        return view

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        ids = sorted(c["id"] for c in item.get("candidates", []))
        if sorted(answer["order"]) != ids:
            raise ValueError(f"the order must list each of the item's candidates once: {', '.join(ids)}")

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        places: dict[int, dict[str, str]] = {}
        for name in form:
            match = _RANK.match(name)
            if match and int(match.group(1)) < slots:
                places.setdefault(int(match.group(1)), {})[match.group(2)] = (form.get(name) or "").strip()
        result = ParsedAnswers()
        for i in range(slots):
            if i in places:
                order, error = _order_from_places(places[i], i)
            else:
                order, error = _order_from_field((form.get(f"order-{i}") or "").strip(), i)
            if error:
                result.errors[f"order-{i}"] = error
            else:
                result.answers.append(order)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=False)):
            if sorted(answer) != sorted(c["id"] for c in item.get("candidates", [])):
                parsed.errors[f"order-{i}"] = (
                    f"Picture {i + 1}: the descriptions you ordered are not the ones on the page; "
                    "reload the page and order them again."
                )
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """Kendall's tau against the gold order, as (tau + 1) / 2: the share of pairs in the right order."""
        return concordance([str(a) for a in answer], [str(k) for k in key.get("order", [])])

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """At least ``gold_pass_score`` (default 0.8: one pair of four candidates out of order passes)."""
        return score >= float(options.get("gold_pass_score", GOLD_PASS_SCORE)) - 1e-9

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"order-{i}", ",".join(order)) for i, order in enumerate(answers)]


def _order_from_places(places: dict[str, str], slot: int) -> tuple[list[str], str]:
    """An ordering from each candidate's place (1 is best), or what is wrong with the places."""
    n, where = len(places), f"Picture {slot + 1}"
    if n < MIN_CANDIDATES:
        return [], f"{where}: the page lost some descriptions; reload the page and order them again."
    unset = sum(1 for v in places.values() if not v)
    if unset:
        return [], (
            f"{where}: {unset} description{'s have' if unset != 1 else ' has'} no place yet; "
            f"give each one a place from 1 (best) to {n} (worst)."
        )
    wrong = sorted({v for v in places.values() if v not in {str(p) for p in range(1, n + 1)}})
    if wrong:
        return [], f"{where}: {wrong[0]!r} is not a place from 1 to {n}."
    taken: dict[str, int] = {}
    for v in places.values():
        taken[v] = taken.get(v, 0) + 1
    shared = sorted((int(v) for v, count in taken.items() if count > 1))
    if shared:
        return [], (
            f"{where}: place {shared[0]} is given to {taken[str(shared[0])]} descriptions; "
            "each place goes to exactly one description."
        )
    return sorted(places, key=lambda c: int(places[c])), ""


def _order_from_field(raw: str, slot: int) -> tuple[list[str], str]:
    """An ordering from ``"id1,id2,..."`` (the two-candidate radio group, and MTurk's stored answer)."""
    where = f"Picture {slot + 1}"
    if not raw:
        return [], f"{where}: choose the better description."
    order = raw.split(",")
    if (
        not MIN_CANDIDATES <= len(order) <= MAX_CANDIDATES
        or len(set(order)) != len(order)
        or not all(_ID.match(c) for c in order)
    ):
        return [], f"{where}: {raw!r} is not an order of the descriptions; reload the page and answer again."
    return order, ""
