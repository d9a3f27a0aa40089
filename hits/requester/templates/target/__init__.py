"""Does a generated referring expression name the type of the boxed object? One of A / O / M / F."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.options import pass_score

#: The four categories in the order the page offers them: (name, short hint, longer explanation).
CATEGORIES: dict[str, tuple[str, str, str]] = {
    "A": (
        "Adequate",
        "names what the marked object is",
        "The expression names what the marked object is, or a correct broader kind of it "
        "(a dog may be called dog, animal or pet).",
    ),
    "O": (
        "Omission",
        "names no kind of object at all",
        "The expression never says what kind of thing the object is: it only uses a pronoun, "
        "a vague word such as thing, or colour, size or position.",
    ),
    "M": (
        "Misaligned",
        "names another object inside the frame",
        "The expression names a different object that also lies, at least partly, inside the frame, "
        "instead of the object the frame is meant for.",
    ),
    "F": (
        "False",
        "names a kind that fits nothing in the frame",
        "The expression names a kind of thing that the marked object is not, and nothing else "
        "inside the frame is of that kind either.",
    ),
}
#: Pixels a box may stick out of its image (rounded annotation tools produce such boxes).
BOX_TOLERANCE = 1.0

Category = Literal["A", "O", "M", "F"]


class Box(BaseModel):
    """The target's bounding box in image pixels, from the image's top left corner."""

    model_config = ConfigDict(extra="forbid")
    x: float = Field(ge=0, description="left edge, pixels from the image's left side")
    y: float = Field(ge=0, description="top edge, pixels from the image's top")
    width: float = Field(gt=0, description="box width in pixels")
    height: float = Field(gt=0, description="box height in pixels")


class TargetItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    width: int = Field(gt=0, description="the image's width in pixels")
    height: int = Field(gt=0, description="the image's height in pixels")
    box: Box
    expression: str = Field(min_length=1, max_length=500, description="the generated referring expression")
    item_id: str = Field(min_length=1, max_length=128, description="the item's id in the system's file")
    system: str = Field(min_length=1, max_length=128, description="the system that produced the expression")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")

    @field_validator("expression", "item_id", "system")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("needs some text, not only spaces")
        return value

    @model_validator(mode="after")
    def _box_inside_image(self) -> TargetItem:
        box = self.box
        if box.x + box.width > self.width + BOX_TOLERANCE or box.y + box.height > self.height + BOX_TOLERANCE:
            raise ValueError(
                f"the box ({box.x:g}, {box.y:g}, {box.width:g} x {box.height:g}) reaches outside "
                f"the {self.width} x {self.height} image"
            )
        return self


class TargetKey(BaseModel):
    """A gold item's category."""

    model_config = ConfigDict(extra="forbid")
    category: Category = Field(description="A: adequate, O: omission, M: misaligned, F: false")


def _third(start: float, size: float, whole: float, names: tuple[str, str, str]) -> str:
    centre = (start + size / 2) / whole
    return names[0] if centre < 1 / 3 else names[1] if centre < 2 / 3 else names[2]


def describe_box(item: Mapping[str, Any]) -> str:
    """Where the box lies, in words, for people who cannot see the drawing."""
    box, width, height = item["box"], float(item["width"]), float(item["height"])
    across = _third(float(box["x"]), float(box["width"]), width, ("left", "centre", "right"))
    down = _third(float(box["y"]), float(box["height"]), height, ("top", "middle", "bottom"))
    place = "the centre" if (across, down) == ("centre", "middle") else f"the {down} {across}"
    wide = round(100 * float(box["width"]) / width)
    high = round(100 * float(box["height"]) / height)
    return (
        f"A frame marks the target object in {place} of the photo; it spans about {wide}% "
        f"of the photo's width and {high}% of its height."
    )


def _values(form: Mapping[str, str], field: str) -> list[str]:
    """Every value sent for ``field``: a hand-made request can repeat a radio's name."""
    getlist = getattr(form, "getlist", None)
    if getlist is not None:
        return [str(v) for v in getlist(field)]
    value = form.get(field)
    return [] if value is None else [value]


class TargetOptions(BaseModel):
    """The ``target`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    gold_pass_score: float = pass_score(1.0, "1 for the key's category, else 0")


class TargetTemplate(TaskTemplate):
    """Target-object identification: field ``category-<slot>`` holds one of A, O, M, F."""

    name: ClassVar[str] = "target"
    item_model: ClassVar[type[BaseModel]] = TargetItem
    answer_model: ClassVar[type[BaseModel]] = TargetKey
    options_model: ClassVar[type[BaseModel] | None] = TargetOptions
    aggregation: ClassVar[str] = "dawid_skene"

    def page_context(self) -> dict[str, Any]:
        return {
            "categories": [(letter, *texts) for letter, texts in CATEGORIES.items()],
            "describe_box": describe_box,
        }

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            field = f"category-{i}"
            chosen = {v.strip().upper() for v in _values(form, field) if v.strip()}
            raw = (form.get(field) or "").strip()
            if len(chosen) > 1:
                result.errors[field] = (
                    f"Item {i + 1}: {len(chosen)} categories arrived ({', '.join(sorted(chosen))}); "
                    "choose exactly one."
                )
            elif not raw:
                result.errors[field] = (
                    f"Item {i + 1}: choose one category: A (adequate), O (omission), "
                    "M (misaligned) or F (false)."
                )
            elif raw.upper() not in CATEGORIES:
                result.errors[field] = (
                    f"Item {i + 1}: {raw[:20]!r} is not one of the categories; choose A, O, M or F."
                )
            else:
                result.answers.append(raw.upper())
        return result

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """Exact match of the category: 1.0 or 0.0."""
        return 1.0 if str(answer) == str(key["category"]) else 0.0

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"category-{i}", str(a)) for i, a in enumerate(answers)]
