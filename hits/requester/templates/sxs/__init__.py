"""Blinded side by side: two long descriptions of one image, judged on five metrics.

Each metric is a five-point choice from "left is much better" through "about
the same" to "right is much better". Which candidate is on the left is drawn
per assignment and kept on the server (``hits.requester.templates.arrangements``); the
page shows only the two texts. Answers are stored in the item's own terms:
per metric an integer from -2 to 2, negative when the item's first candidate
is better, positive when its second is, 0 for neutral.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.compare import Candidate
from hits.requester.templates.options import pass_score

if TYPE_CHECKING:
    from hits.requester.templates.base import ScaleWording

#: Metric id -> (short name, what a worker weighs). Ids name form fields and result columns.
METRICS: dict[str, tuple[str, str]] = {
    "comprehensiveness": (
        "Comprehensiveness",
        "Which one covers more of what matters in the picture: the objects, people, places, actions "
        "and how things relate?",
    ),
    "specificity": (
        "Specificity",
        "Which one is more precise and less vague? (\u201cthree apples\u201d says more than "
        "\u201csome fruit\u201d.)",
    ),
    "hallucinations": (
        "Hallucinations",
        "Which one sticks to what the picture shows, with fewer wrong statements and unsupported guesses? "
        "Better here means fewer hallucinations.",
    ),
    "tldr": (
        "First sentences as a summary",
        "Read only the first sentence or two of each: which gives the better short overview of the picture?",
    ),
    "human_likeness": (
        "Human-likeness",
        "Which one reads more like a careful person wrote it, without repeated facts, stutters or "
        "garbled reasoning?",
    ),
}
#: The scale in page terms: value -> label. Negative favours the left text.
SCALE: tuple[tuple[int, str], ...] = (
    (-2, "Left is substantially better"),
    (-1, "Left is marginally better"),
    (0, "Neutral: about the same"),
    (1, "Right is marginally better"),
    (2, "Right is substantially better"),
)
VALUES = {str(v) for v, _ in SCALE}
#: Default: a gold metric passes within one step of its key, and a gold item passes when all do.
GOLD_TOLERANCE = 1
GOLD_PASS_SCORE = 1.0


class SxsItem(BaseModel):
    """Two descriptions of one image; ``system`` (who wrote each) never reaches the page."""

    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    candidates: list[Candidate] = Field(min_length=2, max_length=2)

    @field_validator("candidates")
    @classmethod
    def _distinct(cls, value: list[Candidate]) -> list[Candidate]:
        if value[0].id == value[1].id:
            raise ValueError("the two candidates need different ids")
        return value


class SxsKey(BaseModel):
    """Known preferences, in the item's terms (-2: first much better .. 2: second much better)."""

    model_config = ConfigDict(extra="forbid")
    preferences: dict[str, int] = Field(
        min_length=1,
        description="metric (comprehensiveness, specificity, hallucinations, tldr, human_likeness) -> "
        "-2 .. 2; any non-empty subset",
    )

    @field_validator("preferences")
    @classmethod
    def _known_metrics(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(METRICS))
        if unknown:
            raise ValueError(f"unknown metrics {', '.join(unknown)}; use {', '.join(METRICS)}")
        if any(not -2 <= v <= 2 for v in value.values()):
            raise ValueError("preferences go from -2 (first much better) to 2 (second much better)")
        return value


class SxsOptions(BaseModel):
    """The ``sxs`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_tolerance: int = Field(
        GOLD_TOLERANCE, ge=0, le=4, description="A known metric counts as right this many steps from the key."
    )
    gold_pass_score: float = pass_score(
        GOLD_PASS_SCORE, "the share of the key's metrics within gold_tolerance"
    )


class SxsTemplate(TaskTemplate):
    """Blinded side-by-side judgement of two descriptions on five metrics.

    Form fields ``sxs-<slot>-<metric>`` hold -2..2 in page terms (negative:
    left better); the stored answer is ``{metric: -2..2}`` in item terms
    (negative: the item's first candidate better).
    """

    name: ClassVar[str] = "sxs"
    item_model: ClassVar[type[BaseModel]] = SxsItem
    answer_model: ClassVar[type[BaseModel]] = SxsKey
    options_model: ClassVar[type[BaseModel] | None] = SxsOptions
    aggregation: ClassVar[str] = "median_per_key"
    agreement_level: ClassVar[str | None] = "ordinal_per_key"
    arranged: ClassVar[bool] = True
    # Honest judges often see "about the same" or "A wins" on item after item: no straight-lining flag.
    straightlining_suspicious: ClassVar[bool] = False

    def page_context(self) -> dict[str, Any]:
        return {"metrics": METRICS, "scale": SCALE}

    def scale_wording(self) -> ScaleWording:
        """The five preferences' words, from the left text's strong win to the right text's."""
        return [text for _, text in SCALE]

    def reworded_scale(self, wording: ScaleWording) -> dict[str, Any]:
        """The preferences with the campaign's words (the values, -2 to 2, stay)."""
        return {"scale": tuple(zip((value for value, _ in SCALE), wording, strict=True))}

    def arrange(self, payload: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
        """Which candidate goes on the left: either, with equal chance."""
        ids = [c["id"] for c in payload.get("candidates", [])]
        return {"left": rng.choice(ids)} if ids else {}

    def arranged_view(self, payload: Mapping[str, Any], arrangement: Mapping[str, Any]) -> dict[str, Any]:
        """The image and the two texts, left then right; no ids, no systems."""
        candidates = list(payload.get("candidates", []))
        if candidates and candidates[0]["id"] != arrangement.get("left"):
            candidates.reverse()
        view = {k: v for k, v in payload.items() if k != "candidates"}
        view["texts"] = [c["text"] for c in candidates]
        return view

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        # Never used by the page (it calls ``arranged_view``); without an arrangement, item order, no ids.
        return self.arranged_view(payload, {})

    def item_order(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The item's first candidate on the left."""
        candidates = payload.get("candidates") or []
        return {"left": candidates[0]["id"]} if candidates else {}

    def key_words(self, key: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
        """Each known metric's preference in the scale's words (the item's first text on the left)."""
        words = dict(SCALE)
        return "; ".join(
            f"{METRICS[metric][0]}: {words.get(int(value), value)}"
            for metric, value in key.get("preferences", {}).items()
            if metric in METRICS
        )

    def unscramble(self, answer: Any, arrangement: Mapping[str, Any], payload: Mapping[str, Any]) -> Any:
        """Page terms (negative: left better) to item terms (negative: first candidate better)."""
        first = payload["candidates"][0]["id"]
        sign = 1 if arrangement.get("left") == first else -1
        return {metric: sign * int(value) for metric, value in answer.items()}

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        # One error per picture, keyed ``sxs-<slot>``: the page's error summary links to it.
        result = ParsedAnswers()
        for i in range(slots):
            answer: dict[str, int] = {}
            missing, wrong = [], []
            for metric, (label, _) in METRICS.items():
                raw = (form.get(f"sxs-{i}-{metric}") or "").strip()
                if not raw:
                    missing.append(label)
                elif raw not in VALUES:
                    wrong.append(label)
                else:
                    answer[metric] = int(raw)
            problems = []
            if missing:
                problems.append(
                    f"choose for {', '.join(missing)} ({len(missing)} of {len(METRICS)} still open)"
                )
            if wrong:
                problems.append(f"{', '.join(wrong)}: not one of the five choices; choose again")
            if problems:
                result.errors[f"sxs-{i}"] = f"Picture {i + 1}: " + "; ".join(problems) + "."
            else:
                result.answers.append(answer)
        return result

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """Share of the key's metrics the answer gets within ``gold_tolerance`` steps (default 1)."""
        tolerance = int(options.get("gold_tolerance", GOLD_TOLERANCE))
        known = key.get("preferences", {})
        if not known or not isinstance(answer, Mapping):
            return 0.0
        close = sum(
            1
            for metric, value in known.items()
            if metric in answer and abs(int(answer[metric]) - int(value)) <= tolerance
        )
        return close / len(known)

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """At least ``gold_pass_score`` (default 1.0: every known metric within tolerance)."""
        return score >= float(options.get("gold_pass_score", GOLD_PASS_SCORE)) - 1e-9

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        """Page terms (negative: left better), as the page names them: what the marketplace gets."""
        return [
            (f"sxs-{i}-{metric}", str(answer[metric]))
            for i, answer in enumerate(answers)
            for metric in METRICS
            if metric in answer
        ]

    def export_fields(self, answers: list[Any], items: list[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """Stored item terms, named apart from the page's fields: ``pref-<slot>-<metric>`` (negative: the
        item's first candidate better) and ``pref-<slot>-first`` / ``-second``, the two candidates' systems
        (their ids when a candidate has no system)."""
        fields: list[tuple[str, str]] = []
        for i, (answer, item) in enumerate(zip(answers, items, strict=False)):
            if not isinstance(answer, Mapping):
                continue
            first, second = (str(c.get("system") or c["id"]) for c in item.get("candidates", []))
            fields += [(f"pref-{i}-first", first), (f"pref-{i}-second", second)]
            fields += [(f"pref-{i}-{metric}", str(answer[metric])) for metric in METRICS if metric in answer]
        return fields
