"""The ``workflow:`` block of a campaign file: stages, where their items come from, and rounds.

The campaign file's own fields describe the first stage (its template, its
items file, the budget of the whole workflow). ``workflow.stages`` adds
stages fed by an earlier stage's approved output; a stage with ``rounds``
refines one text per picture, one worker per round, until it stops changing::

    workflow:
      first_stage: objects
      seeder: {kind: file, path: seeds.jsonl}
      stages:
        - name: describe
          template: refine
          from: objects
          reward: "0.25"
          rounds: {max_rounds: 5, jaccard_threshold: 0.8, ngram: 2}
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from hits.money import MoneyError, parse_amount
from hits.requester.seeders import SeederOptions
from hits.requester.text_metrics import tagger_names

#: Templates whose stage runs in rounds (one worker per round, each improving the last text).
ROUNDS_TEMPLATES = ("refine",)
#: First-stage templates whose items show a seeder's objects (Task 1): the workflow seeds them
#: in a Celery step before the stage is published (``hits.requester.workflows.first_stage``).
SEEDED_TEMPLATES = ("objects",)
STAGE_NAME = r"^[a-z][a-z0-9_-]{0,31}$"


def _money(value: Any) -> Decimal:
    try:
        return parse_amount(value)
    except MoneyError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from exc


Money = Annotated[
    Decimal,
    BeforeValidator(_money),
    # As hits.requester.files.campaign.MONEY_JSON_SCHEMA (which imports this module): never a float.
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": r"^\s*[0-9]+(\.[0-9]{1,2})?\s*$"},
                {"type": "integer", "minimum": 0},
            ]
        }
    ),
]


class RoundsPolicy(BaseModel):
    """When a picture's refinement stops: the text stopped changing, or enough rounds were run."""

    model_config = ConfigDict(extra="forbid")
    max_rounds: int = Field(5, ge=1, le=50, description="The most rounds one picture's text is refined.")
    jaccard_threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Stop once a round's word n-gram Jaccard similarity with the previous text reaches this.",
    )
    ngram: int = Field(2, ge=1, le=5, description="The n of the word n-grams the similarity compares.")
    max_attempts: int = Field(
        5,
        ge=1,
        le=50,
        description="Attempts at one round (a rejected attempt is redone by another worker) before the "
        "chain stops.",
    )
    pos_tagger: str = Field(
        "nltk",
        min_length=1,
        max_length=100,
        description="The part-of-speech tagger of the per-round record: nltk, none, or a hitforge.taggers "
        "entry point.",
    )

    @field_validator("pos_tagger")
    @classmethod
    def _known_tagger(cls, value: str) -> str:
        names = tagger_names()
        if value not in names:
            raise ValueError(f"unknown part-of-speech tagger {value!r}; choose one of: {', '.join(names)}")
        return value


class StageSpec(BaseModel):
    """A stage after the first: its template, what feeds it, and what it changes of the campaign's fields."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str = Field(
        pattern=STAGE_NAME, description="The stage's name: lower-case letters, digits, _ and -."
    )
    template: str = Field(description="The stage's template (a rounds template such as refine).")
    source: str = Field(
        alias="from",
        min_length=1,
        max_length=64,
        description="The earlier stage whose approved output feeds it.",
    )
    title: str | None = Field(
        None, min_length=1, max_length=128, description="The HITs' title; default: the file's."
    )
    description: str | None = Field(
        None, min_length=1, max_length=2000, description="The HITs' description; default: the file's."
    )
    keywords: str | None = Field(
        None, max_length=1000, description="The HITs' keywords; default: the file's."
    )
    reward: Money | None = Field(None, description="The reward per assignment; default: the file's.")
    assignment_duration_seconds: int | None = Field(
        None, ge=30, le=31_536_000, description="Default: the file's assignment_duration_seconds."
    )
    lifetime_seconds: int | None = Field(
        None, ge=30, le=31_536_000, description="Default: the file's lifetime_seconds."
    )
    template_options: dict[str, Any] = Field(
        default_factory=dict, description="The stage template's options."
    )
    qualification_requirements: list[dict[str, Any]] | None = Field(
        None, description="Default: the file's qualification_requirements."
    )
    quality: dict[str, Any] | None = Field(
        None, description="Keys of quality that differ from the file's (merged over them)."
    )
    rounds: RoundsPolicy | None = Field(
        None, description="When the stage's refinement stops (rounds templates)."
    )

    @model_validator(mode="after")
    def _rounds_where_refining(self) -> StageSpec:
        if self.template not in ROUNDS_TEMPLATES:
            raise ValueError(
                f"stage {self.name!r}: only a rounds template ({', '.join(ROUNDS_TEMPLATES)}) can take "
                f"its items from another stage; {self.template!r} takes them from the items file "
                "(make it the first stage)"
            )
        if self.rounds is None:
            self.rounds = RoundsPolicy()
        return self


class WorkflowOptions(BaseModel):
    """The ``workflow:`` block."""

    model_config = ConfigDict(extra="forbid")
    first_stage: str = Field("first", pattern=STAGE_NAME, description="The name of the file's own stage.")
    rounds: RoundsPolicy | None = Field(
        None, description="Rounds of the first stage, when its template is a rounds template."
    )
    seeder: SeederOptions = Field(
        default_factory=SeederOptions,
        description="Where a seeded first stage's (objects) proposals come from.",
    )
    stages: list[StageSpec] = Field(
        default_factory=list, max_length=10, description="The stages after the first, in order."
    )

    @model_validator(mode="after")
    def _graph(self) -> WorkflowOptions:
        known = [self.first_stage]
        for stage in self.stages:
            if stage.name in known:
                raise ValueError(f"two stages are named {stage.name!r}")
            if stage.source not in known:
                raise ValueError(
                    f"stage {stage.name!r} takes its items from {stage.source!r}, which is not an "
                    f"earlier stage; choose one of: {', '.join(known)}"
                )
            known.append(stage.name)
        return self


def check_first_stage(spec: Any) -> None:
    """Checks of a campaign spec that declares a workflow (called by its validator); ``ValueError``."""
    workflow: WorkflowOptions = spec.workflow
    rounds_first = spec.template in ROUNDS_TEMPLATES
    if rounds_first:
        if workflow.rounds is None:
            workflow.rounds = RoundsPolicy()
        if spec.assignments_per_hit != 1 or spec.items_per_hit != 1:
            raise ValueError(
                "a rounds stage shows one picture to one worker per round: "
                "set assignments_per_hit and items_per_hit to 1"
            )
    elif workflow.rounds is not None:
        raise ValueError(f"workflow.rounds applies to a rounds template; {spec.template!r} is not one")
    if redo_money_fields(spec.quality):
        raise ValueError(f"{REDO_MONEY_REFUSED}: remove quality.repost_rejected and quality.bonus")
    for index, stage in enumerate(workflow.stages):
        _check_stage_quality(spec.quality, stage, f"workflow.stages.{index}.quality")


#: Why a workflow refuses reposts and bonuses: money beyond the HITs is counted per campaign,
#: and a workflow's budget spans its stages (a repost would also redo a round the engine redoes).
REDO_MONEY_REFUSED = (
    "a workflow redoes rejected work itself (rounds, and each rejected assignment of its first "
    "stage once, within the workflow's budget) and pays no bonuses yet"
)


def redo_money_fields(quality: Any) -> list[str]:
    """The fields of a quality policy that a workflow refuses that it sets."""
    fields = (("repost_rejected", quality.repost_rejected), ("bonus", quality.bonus is not None))
    return [name for name, on in fields if on]


def _check_stage_quality(base: Any, stage: StageSpec, where: str) -> None:
    """Validate a stage's quality merged over the file's, as its campaign gets it; ``ValueError``.

    A stage's ``quality`` is a plain mapping until its campaign is made: checking the merged
    policy here refuses a typo, and a repost or bonus, at load rather than at launch.
    """
    merged = {**base.model_dump(mode="json"), **(stage.quality or {})}
    try:
        quality = type(base).model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join([where, *map(str, err['loc'])])}: {err['msg']}" for err in exc.errors()
        )
        raise ValueError(f"stage {stage.name!r}: {problems}") from exc
    refused = redo_money_fields(quality)
    if refused:
        fields = " and ".join(f"{where}.{name}" for name in refused)
        raise ValueError(f"stage {stage.name!r}: {REDO_MONEY_REFUSED}: remove {fields}")
