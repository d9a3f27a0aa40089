"""Rate image-sentence pairs from 1 to 4: how well does the sentence describe the image?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.options import pass_score

if TYPE_CHECKING:
    from hits.requester.templates.base import ScaleWording

SCALE = {
    4: "Describes the image: no errors, everything it mentions is in the picture.",
    3: "Almost describes the image: one moderate slip or a few small ones.",
    2: "Barely describes the image: a serious error, or many smaller ones.",
    1: "Does not describe the image at all.",
}


class RatingItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    sentence: str = Field(min_length=1, max_length=500, description="the sentence to rate against the image")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")


class RatingKey(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rating: int = Field(ge=1, le=4, description="4: describes the image .. 1: does not describe it at all")


#: Default: a gold rating counts only when it is the key's.
GOLD_TOLERANCE = 0


class RatingOptions(BaseModel):
    """The ``rating`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_tolerance: int = Field(
        GOLD_TOLERANCE, ge=0, le=3, description="A gold rating counts as right this many points from the key."
    )
    gold_pass_score: float = pass_score(1.0, "1 for a rating within gold_tolerance, else 0")


class RatingTemplate(TaskTemplate):
    """The fine-grained 1-to-4 evaluation of image descriptions."""

    name: ClassVar[str] = "rating"
    item_model: ClassVar[type[BaseModel]] = RatingItem
    answer_model: ClassVar[type[BaseModel]] = RatingKey
    options_model: ClassVar[type[BaseModel] | None] = RatingOptions
    aggregation: ClassVar[str] = "dawid_skene"
    agreement_level: ClassVar[str | None] = "ordinal"
    straightlining_suspicious: ClassVar[bool] = True

    def page_context(self) -> dict[str, Any]:
        return {"scale": sorted(SCALE.items(), reverse=True)}

    def scale_wording(self) -> ScaleWording:
        """The four ratings' words, from 4 down to 1 as the page lists them."""
        return [text for _, text in sorted(SCALE.items(), reverse=True)]

    def reworded_scale(self, wording: ScaleWording) -> dict[str, Any]:
        """The scale list with the campaign's words (the values stay 4 down to 1)."""
        return {"scale": list(zip(sorted(SCALE, reverse=True), wording, strict=True))}

    def key_words(self, key: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
        """The right rating with its words ("2: Barely describes the image: ..."), not a bare number."""
        rating = key.get("rating")
        return f"{rating}: {SCALE[rating]}" if rating in SCALE else super().key_words(key, payload)

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            raw = (form.get(f"rating-{i}") or "").strip()
            if not raw:
                result.errors[f"rating-{i}"] = f"Pair {i + 1}: choose a rating from 1 to 4."
            elif raw not in {"1", "2", "3", "4"}:
                result.errors[f"rating-{i}"] = f"Pair {i + 1}: {raw!r} is not a rating from 1 to 4."
            else:
                result.answers.append(int(raw))
        return result

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        tolerance = int(options.get("gold_tolerance", GOLD_TOLERANCE))
        return 1.0 if abs(int(answer) - int(key["rating"])) <= tolerance else 0.0

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"rating-{i}", str(a)) for i, a in enumerate(answers)]
