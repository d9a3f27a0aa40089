"""Rank candidate pictures by how closely each one resembles a reference picture; ties allowed.

A worker sees a reference picture and K candidate pictures (images a model
made, say, from descriptions of the reference) and gives every candidate a
rank from 1 (most like the reference) to K. Candidates that look equally
close may share a rank. The order the candidates are shown in is drawn per
assignment and kept on the server (``hits.requester.templates.arrangements``): the page
knows them only by their place on it, never by id or system.

Only the order a worker gives counts, so the numbers are normalised to
standard competition ranking ("1224"): a candidate's rank is one more than
the number of candidates ranked strictly better. 1,1,2 and 1,1,3 and 2,2,3
all mean "the first two tied, the third behind them" and are stored as
1,1,3. The stored answer is ``{candidate id: rank}`` in the item's terms.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.compare import CANDIDATE_ID, unique_ids

MIN_CANDIDATES, MAX_CANDIDATES = 2, 8
LETTERS = "ABCDEFGH"
#: Default gold pass mark, in Kendall's tau-b. With 3 candidates: one tie the key does not make
#: passes (0.82); one swapped pair (0.33) or a tie moved to the other pair (0.5) does not, and
#: random ranks pass about a fifth of the time. With 4, one swapped neighbour pair passes (0.67).
GOLD_MIN_TAU = 0.6
_RANK_FIELD = re.compile(r"rank-(\d+)-(\d+)\Z")


def _is_local(image: str) -> bool:
    return bool(image) and not image.startswith(("http://", "https://", "/")) and "://" not in image


class RankCandidate(BaseModel):
    """One candidate picture; ``system`` (which model made it) never reaches the page."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=rf"^{CANDIDATE_ID}$", description="unique within the item; letters, digits, _ -")
    image: str = Field(min_length=1, description="a file in the campaign's media folder")
    system: str = Field(default="", max_length=128, description="who made it: never shown to workers")

    @field_validator("image")
    @classmethod
    def _local(cls, value: str) -> str:
        # A requester's URL could name the model (".../model-b/17.png"); a media file is served
        # under an opaque URL instead.
        if not _is_local(value):
            raise ValueError(
                "a candidate picture must be a file in the campaign's media folder (its URL on the page "
                "names nothing); copy it there and give its path relative to media_dir"
            )
        return value


class RankItem(BaseModel):
    """A reference picture and 2 to 8 candidates to rank against it."""

    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="the reference picture: URL or path in the media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for it")
    candidates: Annotated[list[RankCandidate], AfterValidator(unique_ids)] = Field(
        min_length=MIN_CANDIDATES, max_length=MAX_CANDIDATES
    )
    condition: str = Field(
        default="",
        max_length=80,
        description="the study condition this item belongs to (a column of the results table); not shown",
    )


class RankKey(BaseModel):
    """The gold ranking: every candidate id of the item with its rank (1 is closest; ties allowed)."""

    model_config = ConfigDict(extra="forbid")
    ranks: dict[str, int] = Field(
        min_length=MIN_CANDIDATES, max_length=MAX_CANDIDATES, description="candidate id -> rank, 1 closest"
    )

    @model_validator(mode="after")
    def _ordered(self) -> RankKey:
        if any(r < 1 for r in self.ranks.values()):
            raise ValueError("ranks start at 1 (the closest)")
        if len(set(self.ranks.values())) < 2:
            # Kendall's tau-b against a key that ties everything is undefined: it grades nothing.
            raise ValueError("a gold ranking that ties every candidate cannot grade anyone; rank some apart")
        self.ranks = normalised(self.ranks)
        return self


def normalised(ranks: Mapping[str, int]) -> dict[str, int]:
    """Standard competition ranks ("1224") for the same order: 1 + how many rank strictly better."""
    values = list(ranks.values())
    return {c: 1 + sum(v < r for v in values) for c, r in ranks.items()}


def tau_b(answer: Mapping[str, int], key: Mapping[str, int]) -> float:
    """Kendall's tau-b between two rankings of the same candidates (-1 to 1, ties allowed).

    Undefined (NaN in scipy) when either side ties every candidate: -1 here, so an answer
    that ties everything never passes gold.
    """
    from scipy.stats import kendalltau

    ids = sorted(key)
    if sorted(answer) != ids or len(ids) < 2:
        return -1.0
    tau = kendalltau([answer[c] for c in ids], [key[c] for c in ids], variant="b").statistic
    return -1.0 if math.isnan(tau) else float(tau)


class RankOptions(BaseModel):
    """The ``rank`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_min_tau: float = Field(
        GOLD_MIN_TAU,
        ge=-1,
        le=1,
        description="A gold ranking counts as right when Kendall's tau-b with the key reaches this.",
    )
    gold_pass_score: float | None = Field(
        None,
        ge=0,
        le=1,
        description="When given, replaces gold_min_tau: the pass mark on (tau-b + 1) / 2.",
    )


class RankTemplate(TaskTemplate):
    """Rank K candidate pictures by resemblance to a reference; equal ranks allowed.

    Form fields ``rank-<slot>-<place>`` (``place``: the candidate's position on
    this assignment's page, 0-based) hold a rank 1..K. The answer in page terms
    is the list of normalised ranks by place; it is stored as ``{candidate id:
    rank}`` after unscrambling.
    """

    name: ClassVar[str] = "rank"
    item_model: ClassVar[type[BaseModel]] = RankItem
    answer_model: ClassVar[type[BaseModel]] = RankKey
    options_model: ClassVar[type[BaseModel] | None] = RankOptions
    aggregation: ClassVar[str] = "davidson"
    # One ordinal unit per (item, candidate): workers agree when they give a candidate the same rank.
    agreement_level: ClassVar[str | None] = "ordinal_per_key"
    arranged: ClassVar[bool] = True

    def page_context(self) -> dict[str, Any]:
        return {"letters": LETTERS}

    def arrange(self, payload: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
        """The candidates' order on this assignment's page: a uniform random permutation."""
        ids = [str(c["id"]) for c in payload.get("candidates", [])]
        rng.shuffle(ids)
        return {"order": ids}

    def _page_order(self, payload: Mapping[str, Any], arrangement: Mapping[str, Any]) -> list[dict[str, Any]]:
        by_id = {str(c["id"]): c for c in payload.get("candidates", [])}
        order = [i for i in arrangement.get("order", []) if i in by_id]
        if sorted(order) != sorted(by_id):  # no (or a stale) arrangement: the item's own order
            order = list(by_id)
        return [by_id[i] for i in order]

    def arranged_view(self, payload: Mapping[str, Any], arrangement: Mapping[str, Any]) -> dict[str, Any]:
        """The reference picture and the candidates' pictures in page order; no ids, systems or condition.

        Each candidate's ``image`` is turned into an opaque URL by the page server
        (``server/requester/hit_pages``), which is also handed ``source`` (the candidate's index
        in the item) and drops it before the page sees it.
        """
        view: dict[str, Any] = {"image": payload.get("image", ""), "alt": payload.get("alt", "")}
        index = {str(c["id"]): k for k, c in enumerate(payload.get("candidates", []))}
        view["candidates"] = [
            {"image": c["image"], "source": index[str(c["id"])]}
            for c in self._page_order(payload, arrangement)
        ]
        return view

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        # Never used by the page (it calls ``arranged_view``); without an arrangement, item order.
        return self.arranged_view(payload, {})

    def item_order(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The candidates in the item's own order."""
        return {"order": [str(c["id"]) for c in payload.get("candidates", [])]}

    def key_words(self, key: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
        """The key's ranks by the candidates' letters on a page in the item's order (A: rank 1, ...)."""
        ranks = key.get("ranks", {})
        ids = [str(c["id"]) for c in payload.get("candidates", [])]
        return ", ".join(f"{LETTERS[k]}: rank {ranks[i]}" for k, i in enumerate(ids) if i in ranks)

    def unscramble(self, answer: Any, arrangement: Mapping[str, Any], payload: Mapping[str, Any]) -> Any:
        """Ranks by page place to ``{candidate id: rank}``."""
        shown = self._page_order(payload, arrangement)
        return {str(c["id"]): int(r) for c, r in zip(shown, answer, strict=True)}

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        ids = sorted(str(c["id"]) for c in item.get("candidates", []))
        if sorted(answer["ranks"]) != ids:
            raise ValueError(
                f"the gold ranking must rank each of the item's candidates once: {', '.join(ids)}"
            )

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        # One error per picture, keyed ``rank-<slot>``: the page's error summary links to it.
        places: dict[int, dict[int, str]] = {}
        for name in form:
            match = _RANK_FIELD.match(name)
            if match and int(match.group(1)) < slots and int(match.group(2)) < MAX_CANDIDATES:
                places.setdefault(int(match.group(1)), {})[int(match.group(2))] = (
                    form.get(name) or ""
                ).strip()
        result = ParsedAnswers()
        for i in range(slots):
            ranks, error = _ranks_from_places(places.get(i, {}), i)
            if error:
                result.errors[f"rank-{i}"] = error
            else:
                result.answers.append(ranks)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=False)):
            if len(answer) != len(item.get("candidates", [])):
                parsed.errors[f"rank-{i}"] = (
                    f"Task {i + 1}: the ranks sent are not for the candidates on the page; "
                    "reload the page and rank them again."
                )
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """Kendall's tau-b against the gold ranking, as (tau-b + 1) / 2 (0 to 1)."""
        if not isinstance(answer, Mapping):
            return 0.0
        return (tau_b({str(c): int(r) for c, r in answer.items()}, key.get("ranks", {})) + 1) / 2

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """Tau-b at least ``gold_min_tau`` (default 0.6); or, if given, the score at ``gold_pass_score``."""
        if "gold_pass_score" in options:
            return score >= float(options["gold_pass_score"]) - 1e-9
        return 2 * score - 1 >= float(options.get("gold_min_tau", GOLD_MIN_TAU)) - 1e-9

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        """Page terms only (the marketplace never learns which candidate is which)."""
        return [
            (f"rank-{i}-{place}", str(r)) for i, ranks in enumerate(answers) for place, r in enumerate(ranks)
        ]

    def export_fields(self, answers: list[Any], items: list[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """Stored ``{candidate id: rank}`` as ``rank-<slot>-<id>`` and ``system-<slot>-<id>`` fields.

        Named by candidate, not by page place: the export is the requester's, in the item's terms.
        """
        fields: list[tuple[str, str]] = []
        for i, (ranks, item) in enumerate(zip(answers, items, strict=False)):
            if not isinstance(ranks, Mapping):
                continue
            system_of = {str(c["id"]): str(c.get("system", "")) for c in item.get("candidates", [])}
            for candidate, rank in ranks.items():
                fields += [
                    (f"rank-{i}-{candidate}", str(rank)),
                    (f"system-{i}-{candidate}", system_of.get(candidate, "")),
                ]
        return fields


def _ranks_from_places(places: Mapping[int, str], slot: int) -> tuple[list[int], str]:
    """Normalised ranks by page place, or what is wrong with them."""
    where, n = f"Task {slot + 1}", len(places)
    if n < MIN_CANDIDATES or sorted(places) != list(range(n)):
        return [], f"{where}: the page lost some of its candidates; reload the page and rank them again."
    unset = sum(1 for v in places.values() if not v)
    if unset:
        return [], (
            f"{where}: {unset} of {n} candidates {'have' if unset != 1 else 'has'} no rank yet; "
            f"give each one a rank from 1 (closest to the reference) to {n}."
        )
    allowed = {str(r) for r in range(1, n + 1)}
    wrong = sorted({v for v in places.values() if v not in allowed})
    if wrong:
        return [], f"{where}: {wrong[0][:20]!r} is not a rank from 1 to {n}."
    given = {place: int(places[place]) for place in range(n)}
    ranks = normalised({str(p): r for p, r in given.items()})
    return [ranks[str(p)] for p in range(n)], ""
