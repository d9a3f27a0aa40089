"""Object-level annotation: fix a seeder's (label, box) list for an image and describe each object.

An item is an image with seeded objects (from a detector, a file, or another
stage). The worker edits labels and boxes, deletes what is not a real object,
draws what is missing, merges fragments of one object and writes a
description per object. The form sends one field per picture,
``objects-<slot>``: a JSON list of ``{label, box: [x, y, w, h], description}``
in image pixels, which is also the stored answer. Gold keys are object lists
scored by box overlap and label (:mod:`hits.requester.templates.objects.geometry`);
answers are aggregated by clustering boxes across workers
(:mod:`hits.requester.templates.objects.consensus`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hits.requester.templates.base import ParsedAnswers, TaskTemplate
from hits.requester.templates.objects.geometry import IOU_THRESHOLD, match_objects
from hits.requester.templates.objects.validation import (
    DESCRIPTION_MAX,
    DESCRIPTION_MIN,
    LABEL_MAX,
    MAX_OBJECTS,
    MIN_SIZE,
    box_problem,
    object_problems,
    parse_objects,
)
from hits.requester.templates.options import pass_score

#: Default pass mark: the F1 of the answer's objects against the key's.
GOLD_PASS_SCORE = 0.75


class SeededObject(BaseModel):
    """One object as the seeder proposes it (the description may be missing)."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1, max_length=LABEL_MAX, description="what the object is, in a few words")
    box: list[float] = Field(min_length=4, max_length=4, description="[x, y, width, height] in image pixels")
    description: str = Field(default="", max_length=DESCRIPTION_MAX, description="a seeded description")

    @field_validator("label")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("needs some text, not only spaces")
        return value.strip()


class ObjectsItem(BaseModel):
    """An image, its size in pixels and the seeded objects on it."""

    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    width: int = Field(gt=0, le=20000, description="the image's width in pixels")
    height: int = Field(gt=0, le=20000, description="the image's height in pixels")
    alt: str = Field(default="", max_length=300, description="a short neutral text alternative for the image")
    objects: list[SeededObject] = Field(default_factory=list, max_length=MAX_OBJECTS)

    @model_validator(mode="after")
    def _boxes_inside_image(self) -> ObjectsItem:
        for n, obj in enumerate(self.objects, start=1):
            problem = box_problem(obj.box, self.width, self.height)
            if problem:
                raise ValueError(f"seeded object {n} ({obj.label!r}): {problem}")
        return self


class KeyObject(BaseModel):
    """A gold object: its label (and other names that count), and its true box."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1, max_length=LABEL_MAX, description="what the object is")
    box: list[float] = Field(min_length=4, max_length=4, description="[x, y, width, height] in image pixels")
    aliases: list[str] = Field(
        default_factory=list, max_length=20, description="other labels that count as right"
    )


class ObjectsKey(BaseModel):
    """A gold item's true objects."""

    model_config = ConfigDict(extra="forbid")
    objects: list[KeyObject] = Field(min_length=1, max_length=MAX_OBJECTS)


class ObjectsOptions(BaseModel):
    """The ``objects`` template's ``template_options``."""

    model_config = ConfigDict(extra="forbid")
    iou_threshold: float = Field(
        IOU_THRESHOLD,
        gt=0,
        le=1,
        description="A worker's box matches a key box when their intersection over union reaches this.",
    )
    match_labels: bool = Field(
        True, description="Whether a matched object's label must agree with the key's too."
    )
    gold_pass_score: float = pass_score(GOLD_PASS_SCORE, "the F1 of the matched objects")


class ObjectsTemplate(TaskTemplate):
    """Seeded object annotation: field ``objects-<slot>`` holds the JSON list of the picture's objects."""

    name: ClassVar[str] = "objects"
    item_model: ClassVar[type[BaseModel]] = ObjectsItem
    answer_model: ClassVar[type[BaseModel]] = ObjectsKey
    options_model: ClassVar[type[BaseModel] | None] = ObjectsOptions
    aggregation: ClassVar[str] = "object_clusters"
    # Object lists have no fixed questions to put in a workers x units matrix, so Krippendorff's
    # alpha does not apply; each aggregated item carries the workers' mean pairwise F1 instead.
    agreement_level: ClassVar[str | None] = None
    straightlining_suspicious: ClassVar[bool] = False

    def page_context(self) -> dict[str, Any]:
        return {
            "initial_objects": initial_objects,
            "limits": {
                "label_max": LABEL_MAX,
                "description_min": DESCRIPTION_MIN,
                "description_max": DESCRIPTION_MAX,
                "max_objects": MAX_OBJECTS,
                "min_size": MIN_SIZE,
            },
        }

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        # Everything in an item is for the page; the model behind the seeds is not named in it.
        return dict(payload)

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        """Every key box lies inside its item's image."""
        for n, obj in enumerate(answer["objects"], start=1):
            problem = box_problem(obj["box"], int(item["width"]), int(item["height"]))
            if problem:
                raise ValueError(f"key object {n} ({obj['label']!r}): {problem}")

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            objects, problems = parse_objects(form.get(f"objects-{i}"))
            if problems:
                result.errors[f"objects-{i}"] = f"Picture {i + 1}: " + " ".join(problems)
            else:
                result.answers.append(objects)
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        """Boxes inside their picture (parse_answers does not know the pictures' sizes)."""
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=True)):
            problems = object_problems(answer, int(item["width"]), int(item["height"]))
            if problems:
                parsed.errors[f"objects-{i}"] = f"Picture {i + 1}: " + " ".join(problems)
        if not parsed.ok:
            parsed.answers = []
        return parsed

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """F1 of the answer's objects against the key's: boxes matched one to one by IoU, labels agreeing.

        Options: ``iou_threshold`` (default 0.5) and ``match_labels`` (default true).
        Descriptions are free text and not scored.
        """
        if not isinstance(answer, list):
            return 0.0
        match = match_objects(
            answer,
            key["objects"],
            threshold=float(options.get("iou_threshold", IOU_THRESHOLD)),
            check_labels=bool(options.get("match_labels", True)),
        )
        return match.f1

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """At least ``gold_pass_score`` (default 0.75: e.g. four of five objects right, nothing extra)."""
        return score >= float(options.get("gold_pass_score", GOLD_PASS_SCORE)) - 1e-9

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        return [(f"objects-{i}", json.dumps(a, separators=(",", ":"))) for i, a in enumerate(answers)]


def initial_objects(slot: Mapping[str, Any], submitted: str | None) -> list[dict[str, Any]]:
    """What the page starts from: the worker's own list after a refused submit, else the seeds."""
    if submitted:
        try:
            given = json.loads(submitted)
        except (ValueError, RecursionError):
            given = None
        if isinstance(given, list):
            kept = []
            for obj in given[:MAX_OBJECTS]:
                if isinstance(obj, Mapping):
                    box = obj.get("box")
                    kept.append(
                        {
                            "label": str(obj.get("label", ""))[: LABEL_MAX * 2],
                            "box": [_number(v) for v in box[:4]] if isinstance(box, list) else [0, 0, 0, 0],
                            "description": str(obj.get("description", ""))[: DESCRIPTION_MAX * 2],
                        }
                    )
            return kept
    return [
        {"label": o["label"], "box": list(o["box"]), "description": o.get("description", "")}
        for o in slot.get("objects", [])
    ]


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if number == number and abs(number) < 1e9 else 0.0
