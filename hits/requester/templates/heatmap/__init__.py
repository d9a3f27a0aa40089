"""Heatmap alignment rating: how well does each model's heatmap point at what a text talks about?

Each item is an image, its report sentences (some with ground-truth boxes)
and the models whose heatmaps are compared. The worker works in two rounds:

1. **Report sentence.** Pick one sentence before seeing any heatmap, then
   rate every model's heatmap for it on three five-way questions (see
   :data:`QUESTIONS`).
2. **Own prompt.** Write a sentence about the image; the models make their
   heatmaps for it live (``hits.requester.heatmaps``), and the worker rates them the
   same way. A model whose heatmap could not be made is marked as such.

Models are blinded: per assignment and slot each gets an alias and an
opaque token drawn from the operating system's randomness and kept on the
server (``hits.requester.templates.arrangements``); the page, its fields and every
response name tokens only. Answers are stored in the item's terms (model
names) and results are computed per model.

Answer (item terms)::

    {"sentence": 2, "report": {"model-a": {"coverage": 4, "share": 3, "intuitive": 4}, ...},
     "prompt": "the worker's text", "custom": {"model-a": {...}, "model-b": None}}

``None`` for a model: the worker's page said no heatmap came for it (results check that against
the log of heatmap requests).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hits.requester.heatmaps.arrays import ARRAY_SUFFIXES, PICTURE_SUFFIXES
from hits.requester.templates.base import ParsedAnswers, TaskTemplate, TemplateAgreement
from hits.requester.templates.heatmap.options import MODEL_NAME, HeatmapOptions, check_campaign, parse_options
from hits.requester.templates.heatmap.questions import QUESTIONS, ROUNDS, SCALE
from hits.requester.templates.heatmap.report import study_agreement

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from hits.requester.templates.base import ScaleWording

#: Aliases the models appear under (one drawn per model, per assignment and slot).
ALIAS_WORDS = (
    "Amber", "Birch", "Cobalt", "Dune", "Ember", "Fern", "Garnet", "Harbor", "Indigo", "Juniper",
    "Kestrel", "Lumen", "Maple", "Nimbus", "Onyx", "Pebble", "Quartz", "Rowan", "Sable", "Thistle",
)  # fmt: skip
TOKEN = re.compile(r"^[0-9a-f]{12}$")


class Box(BaseModel):
    """A ground-truth region in image pixels from the top left corner."""

    model_config = ConfigDict(extra="forbid")
    x: float = Field(ge=0)
    y: float = Field(ge=0)
    width: float = Field(gt=0)
    height: float = Field(gt=0)


class Sentence(BaseModel):
    """A report sentence; ``heatmaps``: model -> precomputed file in the media folder (never shown)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=1000, description="the sentence, as workers read it")
    boxes: list[Box] = Field(
        default_factory=list,
        max_length=20,
        description="the regions the sentence is about (drawn on request)",
    )
    heatmaps: dict[str, str] = Field(
        default_factory=dict, description="model -> precomputed heatmap file in the media folder"
    )

    @field_validator("heatmaps")
    @classmethod
    def _files(cls, value: dict[str, str]) -> dict[str, str]:
        for model, path in value.items():
            parts = Path(path).parts
            if path.startswith(("/", "\\")) or ".." in parts or "://" in path or not parts:
                raise ValueError(f"heatmap of {model!r}: a path inside the campaign's media folder")
            if Path(path).suffix.lower() not in ARRAY_SUFFIXES + PICTURE_SUFFIXES:
                raise ValueError(f"heatmap of {model!r}: a .npy array or a picture, not {path!r}")
        return value


class HeatmapItem(BaseModel):
    """An image, its report sentences and the models to compare on it."""

    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="image URL or path relative to the campaign's media folder")
    alt: str = Field(default="", max_length=300)
    #: The image's size in pixels: needed to draw boxes over it at any display size.
    width: int | None = Field(None, gt=0, le=100_000)
    height: int | None = Field(None, gt=0, le=100_000)
    models: list[str] = Field(min_length=1, max_length=len(ALIAS_WORDS))
    sentences: list[Sentence] = Field(min_length=1, max_length=30)

    @field_validator("models")
    @classmethod
    def _model_names(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each model once")
        for name in value:
            if not MODEL_NAME.match(name):
                raise ValueError(f"model name {name!r}: 1 to 64 letters, digits, '_', '.' or '-'")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> HeatmapItem:
        for k, sentence in enumerate(self.sentences, start=1):
            unknown = sorted(set(sentence.heatmaps) - set(self.models))
            if unknown:
                raise ValueError(f"sentence {k}: heatmaps of models not in models: {', '.join(unknown)}")
            if sentence.boxes and not (self.width and self.height):
                raise ValueError("boxes need the image's width and height")
            for box in sentence.boxes:
                assert self.width and self.height
                if box.x + box.width > self.width + 1 or box.y + box.height > self.height + 1:
                    raise ValueError(
                        f"sentence {k}: a box reaches outside the {self.width}x{self.height} image"
                    )
        return self


Ratings = dict[str, int]


class HeatmapKey(BaseModel):
    """Known report-round answers: sentence index -> model -> question -> 1..5 (any non-empty subset)."""

    model_config = ConfigDict(extra="forbid")
    sentences: dict[int, dict[str, Ratings]] = Field(min_length=1)

    @field_validator("sentences")
    @classmethod
    def _values(cls, value: dict[int, dict[str, Ratings]]) -> dict[int, dict[str, Ratings]]:
        for models in value.values():
            for ratings in models.values():
                if not ratings or set(ratings) - set(QUESTIONS):
                    raise ValueError(f"ratings name questions among {', '.join(QUESTIONS)}")
                if any(v not in SCALE for v in ratings.values()):
                    raise ValueError("answers go from 1 to 5")
        return value


def _ratings(form: Mapping[str, str], prefix: str) -> tuple[Ratings | None, bool]:
    """The three answers under ``prefix`` (None if any is missing) and whether a value was wrong."""
    got: Ratings = {}
    wrong = False
    for q in QUESTIONS:
        raw = (form.get(f"{prefix}-{q}") or "").strip()
        if raw in {str(v) for v in SCALE}:
            got[q] = int(raw)
        elif raw:
            wrong = True
    return (got if len(got) == len(QUESTIONS) else None), wrong


class HeatmapTemplate(TaskTemplate):
    """Blinded rating of models' heatmaps for a chosen report sentence and for the worker's own prompt."""

    name: ClassVar[str] = "heatmap"
    item_model: ClassVar[type[BaseModel]] = HeatmapItem
    answer_model: ClassVar[type[BaseModel]] = HeatmapKey
    options_model: ClassVar[type[BaseModel] | None] = HeatmapOptions
    # The answers are per model and question: ``hitforge results heatmap`` tabulates them and
    # measures agreement per question (``own_agreement``, which the dashboard shows too); the
    # generic label of an item is the list of answers.
    aggregation: ClassVar[str] = "collect_all"
    agreement_level: ClassVar[str | None] = None
    arranged: ClassVar[bool] = True
    straightlining_suspicious: ClassVar[bool] = False
    no_training_reason: ClassVar[str | None] = (
        "its pages make heatmaps from the models while the worker works, and a practice page makes none; "
        "show good and bad answers with guidance.examples instead"
    )

    def page_context(self) -> dict[str, Any]:
        return {"questions": QUESTIONS}

    def scale_wording(self) -> ScaleWording:
        """Each question's five answers, from 1 to 5, by question id."""
        return {q: list(answers) for q, (_, _, answers) in QUESTIONS.items()}

    def reworded_scale(self, wording: ScaleWording) -> dict[str, Any]:
        """The questions with the campaign's answers where it words them (a mapping, checked)."""
        assert isinstance(wording, dict)  # noqa: S101 - checked against scale_wording when the file was read
        return {
            "questions": {
                q: (label, question, tuple(wording.get(q, answers)))
                for q, (label, question, answers) in QUESTIONS.items()
            }
        }

    def page_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The prompt box's length cap: the campaign's ``max_prompt``."""
        return {"max_prompt": parse_options(options).max_prompt}

    def own_agreement(self, session: Session, campaign_id: int) -> TemplateAgreement:
        """Krippendorff's alpha (ordinal) of the study's judgements: pooled, and per round and question."""
        return study_agreement(session, campaign_id)

    def check_campaign(
        self, options: Mapping[str, Any], items: Sequence[Mapping[str, Any]], media: Path | None
    ) -> None:
        """Every model of every item has a precomputed heatmap per sentence or a live provider."""
        check_campaign(options, items, media)

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        """The key covers every sentence (the worker picks one) and names only the item's models."""
        sentences = answer.get("sentences", {})
        missing = [str(k) for k in range(len(item.get("sentences", []))) if k not in sentences]
        if missing:
            raise ValueError(f"a gold key needs answers for every sentence; missing {', '.join(missing)}")
        extra = sorted(str(k) for k in sentences if not 0 <= int(k) < len(item.get("sentences", [])))
        if extra:
            raise ValueError(f"sentences {', '.join(extra)} are not in the item")
        for models in sentences.values():
            unknown = sorted(set(models) - set(item.get("models", [])))
            if unknown:
                raise ValueError(f"models {', '.join(unknown)} are not in the item")

    def arrange(self, payload: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
        """An alias and a token per model, in an order of this assignment's own."""
        models = list(payload.get("models", []))
        rng.shuffle(models)
        words = rng.sample(ALIAS_WORDS, len(models))
        tokens: set[str] = set()
        while len(tokens) < len(models):
            tokens.add(f"{rng.getrandbits(48):012x}")
        return {
            "aliases": [
                {"model": m, "label": f"Model {w}", "token": t}
                for m, w, t in zip(models, words, sorted(tokens, key=lambda _: rng.random()), strict=True)
            ]
        }

    def arranged_view(self, payload: Mapping[str, Any], arrangement: Mapping[str, Any]) -> dict[str, Any]:
        """The image, the sentences (texts, whether they have boxes) and the aliases; no model, no file."""
        return {
            "image": payload.get("image", ""),
            "alt": payload.get("alt", ""),
            "width": payload.get("width"),
            "height": payload.get("height"),
            "sentences": [
                {"text": s["text"], "has_boxes": bool(s.get("boxes"))} for s in payload.get("sentences", [])
            ],
            "aliases": [{"label": a["label"], "token": a["token"]} for a in arrangement.get("aliases", [])],
        }

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        # Never used by the page (it calls ``arranged_view``): without an arrangement, no models at all.
        return self.arranged_view(payload, {})

    def unscramble(self, answer: Any, arrangement: Mapping[str, Any], payload: Mapping[str, Any]) -> Any:
        """Tokens to model names; a token this assignment was not given is dropped."""
        model_of = {a["token"]: a["model"] for a in arrangement.get("aliases", [])}
        out = dict(answer)
        for part in ROUNDS:
            out[part] = {model_of[t]: r for t, r in answer.get(part, {}).items() if t in model_of}
        return out

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        result = ParsedAnswers()
        for i in range(slots):
            problems: list[str] = []
            tokens = [t for t in (form.get(f"heatmap-{i}-models") or "").split(",") if TOKEN.match(t)]
            raw_sentence = (form.get(f"heatmap-{i}-sentence") or "").strip()
            sentence = int(raw_sentence) if re.fullmatch(r"[0-9]{1,3}", raw_sentence) else None
            if sentence is None:
                problems.append("choose a report sentence and show its heatmaps")
            rated: dict[str, dict[str, Ratings | None]] = {part: {} for part in ROUNDS}
            still_open = dict.fromkeys(ROUNDS, 0)
            wrong = False
            for part in ROUNDS:
                for token in tokens:
                    if (form.get(f"heatmap-{i}-{part}-{token}-missing") or "") == "1":
                        rated[part][token] = None  # no heatmap came: checked against the log in results
                        continue
                    got, bad = _ratings(form, f"heatmap-{i}-{part}-{token}")
                    wrong |= bad
                    if got is None:
                        still_open[part] += 1
                    else:
                        rated[part][token] = got
            if not tokens:
                problems.append("the page's list of heatmaps is missing; reload the page")
            if sentence is not None and still_open["report"]:
                problems.append(f"rate every heatmap for the sentence ({still_open['report']} still open)")
            prompt = " ".join((form.get(f"heatmap-{i}-prompt") or "").split())
            if not prompt:
                problems.append("write your own sentence and make its heatmaps")
            elif still_open["custom"]:
                problems.append(
                    f"rate every heatmap for your own sentence ({still_open['custom']} still open)"
                )
            if wrong:
                problems.append("an answer is not one of the five choices; choose again")
            if problems:
                result.errors[f"heatmap-{i}"] = f"Image {i + 1}: " + "; ".join(problems) + "."
            else:
                result.answers.append(
                    {
                        "sentence": sentence,
                        "report": rated["report"],
                        "prompt": prompt,
                        "custom": rated["custom"],
                    }
                )
        return result

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        """The chosen sentence exists on the item."""
        if not parsed.ok:
            return parsed
        for i, (answer, item) in enumerate(zip(parsed.answers, items, strict=False)):
            if not 0 <= answer["sentence"] < len(item.get("sentences", [])):
                parsed.errors[f"heatmap-{i}"] = f"Image {i + 1}: choose one of the report sentences shown."
        if not parsed.ok:
            parsed.answers = []
        return parsed

    def check_submission(
        self, session: Session, campaign_id: int, assignment_id: str, parsed: ParsedAnswers
    ) -> ParsedAnswers:
        """Every alias rated, the sentence and prompt the ones shown, "missing" only where one failed."""
        from hits.requester.templates.heatmap.checks import check_against_log

        return check_against_log(session, campaign_id, assignment_id, parsed)

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """Share of the chosen sentence's known answers given within ``gold_tolerance`` (default 1)."""
        tolerance = int(options.get("gold_tolerance", 1))
        if not isinstance(answer, Mapping):
            return 0.0
        sentences = key.get("sentences", {})
        known = sentences.get(answer.get("sentence"), sentences.get(str(answer.get("sentence")), {}))
        checks = [
            abs(int((answer.get("report", {}).get(model) or {}).get(q, -99)) - int(v)) <= tolerance
            for model, ratings in known.items()
            for q, v in ratings.items()
        ]
        return sum(checks) / len(checks) if checks else 0.0

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        return score >= float(options.get("gold_pass_score", 1.0)) - 1e-9

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        fields: list[tuple[str, str]] = []
        for i, answer in enumerate(answers):
            tokens = sorted(set(answer.get("report", {})) | set(answer.get("custom", {})))
            fields.append((f"heatmap-{i}-models", ",".join(tokens)))
            fields.append((f"heatmap-{i}-sentence", str(answer["sentence"])))
            fields.append((f"heatmap-{i}-prompt", answer["prompt"]))
            for part in ROUNDS:
                for token, ratings in answer.get(part, {}).items():
                    if ratings is None:
                        fields.append((f"heatmap-{i}-{part}-{token}-missing", "1"))
                    else:
                        fields += [(f"heatmap-{i}-{part}-{token}-{q}", str(v)) for q, v in ratings.items()]
        return fields
