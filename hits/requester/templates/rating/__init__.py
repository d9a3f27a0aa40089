"""Rate image-sentence pairs from 1 to 4: how well does the sentence describe the image?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from hits.requester.templates.base import ParsedAnswers, TaskTemplate

SCALE = {
    4: "Describes the image: no errors, everything it mentions is in the picture.",
    3: "Almost describes the image: one moderate slip or a few small ones.",
    2: "Barely describes the image: a serious error, or many smaller ones.",
    1: "Does not describe the image at all.",
}


class RatingItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    sentence: str = Field(min_length=1, max_length=500)
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")


class RatingKey(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rating: int = Field(ge=1, le=4)


class RatingTemplate(TaskTemplate):
    """The fine-grained 1-to-4 evaluation of image descriptions."""

    name: ClassVar[str] = "rating"
    item_model: ClassVar[type[BaseModel]] = RatingItem
    answer_model: ClassVar[type[BaseModel]] = RatingKey
    aggregation: ClassVar[str] = "dawid_skene"
    agreement_level: ClassVar[str | None] = "ordinal"
    straightlining_suspicious: ClassVar[bool] = True

    def page_context(self) -> dict[str, Any]:
        return {"scale": sorted(SCALE.items(), reverse=True)}

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
        tolerance = int(options.get("gold_tolerance", 0))
        return 1.0 if abs(int(answer) - int(key["rating"])) <= tolerance else 0.0

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"rating-{i}", str(a)) for i, a in enumerate(answers)]
