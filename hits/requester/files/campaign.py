"""The campaign file: a YAML document plus JSONL files of items and gold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from hits.money import MoneyError, parse_amount
from hits.requester.fileerrors import (
    InputFileError,
    InputFileErrors,
    load_yaml,
    parse_model,
    read_jsonl,
    validation_errors,
)
from hits.requester.files.adaptive_gold import AdaptiveGold
from hits.requester.files.guidance import Guidance, check_guidance_files, scale_problem
from hits.requester.files.recruit import RecruitSpec
from hits.requester.files.training import MAX_TRAINING, TrainingItem, check_training
from hits.requester.files.workflow import WorkflowOptions, check_first_stage
from hits.requester.pages.gold import page_plans, pool_shortfall
from hits.requester.templates import TemplateError, get_template


def _money(value: Any) -> Decimal:
    try:
        return parse_amount(value)
    except MoneyError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from exc


#: How an amount of dollars is written, for the JSON Schema (``hits.requester.files.schema``): a string of
#: at most two decimals, or a whole number; never a float.
MONEY_JSON_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "pattern": r"^\s*[0-9]+(\.[0-9]{1,2})?\s*$"},
        {"type": "integer", "minimum": 0},
    ]
}
#: An amount of dollars, exact: "1.25" or 1; a float is refused (it cannot carry cents exactly).
Money = Annotated[Decimal, BeforeValidator(_money), WithJsonSchema(MONEY_JSON_SCHEMA)]
SignalName = Literal["speed", "straightline", "agreement", "copying"]
DEFAULT_SIGNALS: tuple[SignalName, ...] = ("straightline", "agreement", "copying")
#: The copying-pair test's defaults (hits.requester.quality.copying): the p-value at or below which a
#: pair is suspicious, the real items it must share first, and identical texts that suffice.
COPYING_FALSE_ALARM = 1e-6
COPYING_MIN_SHARED = 20
COPYING_MIN_IDENTICAL_TEXTS = 3


class BonusRule(BaseModel):
    """A bonus, once per worker and campaign, for gold accuracy at or above a level."""

    model_config = ConfigDict(extra="forbid")
    amount: Money = Field(description="The bonus paid once to each worker who qualifies, in dollars.")
    min_gold_accuracy: float = Field(
        0.9, gt=0, le=1, description="The share of gold answered correctly that earns the bonus."
    )
    min_gold: int = Field(5, ge=1, description="Gold answers a worker must have given before it is paid.")
    reason: str = Field(
        "Thank you: your answers to the check questions were excellent.",
        max_length=1024,
        description="The message sent with the bonus (SendBonus's Reason).",
    )


class SpotCheckRule(BaseModel):
    """Which automatically approved work a person looks at again (docs/quality.md, Spot checks)."""

    model_config = ConfigDict(extra="forbid")
    rate: float = Field(
        0.02,
        ge=0,
        le=1,
        description="The share of the model's approvals drawn for a check (a fixed draw per assignment); "
        "0: none.",
    )
    first_per_worker: int = Field(
        1,
        ge=0,
        le=1000,
        description="Each worker's first approvals in the campaign, always checked: where a misread "
        "guideline shows.",
    )
    flag_after: int = Field(
        2,
        ge=0,
        le=1000,
        description="Reviewers' disagreements that flag the worker for a person; 0: counted, never flagged.",
    )


class QualityPolicy(BaseModel):
    """How gold results turn into decisions."""

    model_config = ConfigDict(extra="forbid")
    accuracy_threshold: float = Field(
        0.6, gt=0, lt=1, description="The gold accuracy a worker must be shown to reach (or to miss)."
    )
    confidence: float = Field(
        0.9,
        ge=0.5,
        lt=1,
        description="How sure the model must be that a worker's accuracy is above (approve) or below "
        "(flag) the threshold before it decides.",
    )
    min_gold: int = Field(3, ge=1, description="Gold answers a worker must have given before being flagged.")
    recent_gold: int = Field(
        20,
        ge=0,
        description="The recent-work test: gold answers per block; a worker approved before whose latest "
        "block flags is flagged (a turn for the worse). 0 turns it off.",
    )
    worker_model: bool = Field(
        True,
        description="Judge workers on one posterior from gold and their agreement with the others on "
        "every other item, with a CUSUM test for a turn for the worse (docs/quality.md); false: gold "
        "alone, the recent-work blocks and the agreement signal (the rule before 2026-12).",
    )
    flagged_action: Literal["reject", "hold"] = Field(
        "reject",
        description="What happens to a flagged worker's undecided work: rejected, or held for a person "
        "(a flag on signals alone always holds).",
    )
    signals: list[SignalName] = Field(
        default_factory=lambda: list(DEFAULT_SIGNALS),
        description="Signals that may flag a worker whom gold leaves undecided (all are always recorded "
        'as evidence). "speed" is opt-in: it assumes human pacing, which scripted crowds lack.',
    )
    copying_false_alarm: float = Field(
        COPYING_FALSE_ALARM,
        gt=0,
        lt=0.5,
        description="The copying-pair test: the p-value at or below which a pair of workers is suspicious.",
    )
    copying_min_shared: int = Field(
        COPYING_MIN_SHARED,
        ge=1,
        description="Real items a pair must share before the copying test judges it.",
    )
    copying_min_identical_texts: int = Field(
        COPYING_MIN_IDENTICAL_TEXTS,
        ge=1,
        description="Identical free-text answers that are enough to call a pair copying.",
    )
    max_spelling_error_rate: float = Field(
        0.25,
        gt=0,
        lt=1,
        description="Templates without gold (free text): the highest tolerated share of misspelt words.",
    )
    min_words: int = Field(
        20, ge=1, description="Templates without gold: words a worker must have written before a verdict."
    )
    hold_on_authenticity: bool = Field(
        True,
        description="Hold an assignment for a person when its page's typing record says the text was "
        "mostly pasted or typed faster than people type, or its text nearly repeats another worker's "
        "(never rejects).",
    )
    flagged_worker: Literal["none", "soft_block", "hard_block"] = Field(
        "none",
        description="What else happens to a flagged worker: nothing more, a soft block (a qualification the "
        "campaign's HITs exclude), or a hard block (CreateWorkerBlock, every HIT of yours).",
    )
    block_reason: str = Field(
        "Too many check questions in this campaign were answered wrongly.",
        max_length=1024,
        description="The reason sent with a block.",
    )
    notify_flagged: str = Field(
        "",
        max_length=4096,
        description="A message sent to a flagged worker through NotifyWorkers (none when empty).",
    )
    repost_rejected: bool = Field(
        False,
        description="Give rejected work to someone else (CreateAdditionalAssignmentsForHIT), within budget.",
    )
    bonus: BonusRule | None = Field(
        None, description="A bonus for workers whose gold accuracy is high; none when absent."
    )
    spot_checks: SpotCheckRule = Field(
        default_factory=SpotCheckRule,
        description="After-the-fact checks of approved work by a person (never delays or undoes an "
        "approval).",
    )
    deadline_margin_seconds: int = Field(
        3600,
        ge=0,
        description="Decide every assignment at least this long before the marketplace would auto-approve "
        "it (at most a tenth of the auto-approval delay).",
    )
    rejection_feedback: str = Field(
        "Too many of the check questions in this task were answered incorrectly.",
        max_length=1024,
        description="The feedback a rejected worker reads (RejectAssignment's RequesterFeedback).",
    )


def stored_policy(spec: Mapping[str, Any]) -> QualityPolicy:
    """The quality policy of a stored campaign spec (the defaults where it names none)."""
    return QualityPolicy.model_validate(spec.get("quality", {}))


def stored_reward(spec: Mapping[str, Any]) -> Decimal:
    """The reward per assignment of a stored campaign spec ($0 where it names none)."""
    return Decimal(str(spec.get("reward") or "0"))


class CampaignSpec(BaseModel):
    """The YAML campaign file, validated."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="The campaign's unique name: letters, digits, '_', '.' and '-', starting with a letter "
        "or digit. Commands and the dashboard find the campaign by it.",
    )
    template: str = Field(description="The task template: what workers do and how answers are checked.")
    title: str = Field(
        min_length=1, max_length=128, description="The HIT's title, as workers see it in the list of HITs."
    )
    description: str = Field(
        min_length=1,
        max_length=2000,
        description="The HIT's description, shown to workers before they accept.",
    )
    keywords: str = Field(
        "", max_length=1000, description="Comma-separated words workers can search for (MTurk's Keywords)."
    )
    reward: Money = Field(
        description='What one assignment pays a worker, in dollars: a string such as "0.25" (or a whole '
        "number); a float is refused, it cannot carry cents exactly."
    )
    budget: Money = Field(
        description="The most the campaign may commit, in dollars, rewards and the marketplace's fees "
        "included; a launch whose planned cost is above it is refused."
    )
    assignments_per_hit: int = Field(
        3, ge=1, le=100, description="How many different workers do each HIT (MaxAssignments)."
    )
    items_per_hit: int = Field(
        4, ge=1, le=50, description="Items from the items file on one HIT page, gold not counted."
    )
    gold_per_hit: int = Field(
        1,
        ge=0,
        le=10,
        description="Gold items added to each HIT page, on top of items_per_hit; needs a gold file.",
    )
    lifetime_seconds: int = Field(
        86_400,
        ge=30,
        le=31_536_000,
        description="How long a HIT stays available to workers (LifetimeInSeconds).",
    )
    assignment_duration_seconds: int = Field(
        1_800,
        ge=30,
        le=31_536_000,
        description="How long a worker has for one assignment once accepted (AssignmentDurationInSeconds).",
    )
    auto_approval_delay_seconds: int = Field(
        259_200,
        ge=0,
        le=2_592_000,
        description="After this long the marketplace approves submitted work nobody decided "
        "(AutoApprovalDelayInSeconds).",
    )
    items: str = Field(description="The items file (JSON Lines), relative to the campaign file.")
    gold: str | None = Field(
        None,
        description="The gold file (JSON Lines: items with their right answers), relative to the "
        "campaign file.",
    )
    adaptive_gold: AdaptiveGold | None = Field(
        None,
        description="More gold on the HITs newcomers take, less on those only trusted workers may take; "
        "pages keep items_per_hit + gold_per_hit slots and the campaign's gold does not grow "
        "(docs/quality.md, Adaptive gold).",
    )
    allow_gold_reuse: bool = Field(
        False,
        description="Accept a gold pool smaller than HITs x gold_per_hit: gold items then recur across HITs, "
        "which tells a worker who takes several HITs which are gold.",
    )
    media_dir: str | None = Field(
        None,
        description="The folder of the pictures items name by a relative path, relative to the "
        "campaign file.",
    )
    template_options: dict[str, Any] = Field(
        default_factory=dict, description="Options of the template (each template's own, listed below)."
    )
    guidance: Guidance | None = Field(
        None,
        description="What workers read on the HIT page: instructions, good and bad examples, a FAQ and "
        "the scale's words, in Markdown (docs/templates.md, Guidance); none: the template's own text.",
    )
    training: list[TrainingItem] = Field(
        default_factory=list,
        max_length=MAX_TRAINING,
        description="Practice items workers may answer before the work, each shown with its right answer "
        "and why once answered; never stored, paid or graded (docs/templates.md, Training items).",
    )
    qualification_requirements: list[dict[str, Any]] = Field(
        default_factory=list,
        description="MTurk QualificationRequirements every HIT carries, as CreateHIT takes them.",
    )
    quality: QualityPolicy = Field(
        default_factory=QualityPolicy, description="How gold results and signals turn into decisions."
    )
    seed: int = Field(
        0,
        description="Seeds where gold goes on each HIT, so a plan can be reproduced; 0: the campaign's id.",
    )
    workflow: WorkflowOptions | None = Field(
        None,
        description="Stages fed by this campaign's output, and refinement rounds (launched with "
        "hitforge workflow launch).",
    )
    recruit: RecruitSpec | None = Field(
        None,
        description="Recruit workers on a platform (Prolific) into a study that sends them to these HITs "
        "(docs/recruiting.md).",
    )

    @field_validator("template")
    @classmethod
    def _known_template(cls, value: str) -> str:
        try:
            get_template(value)
        except TemplateError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @field_validator("gold_per_hit", "gold")
    @classmethod
    def _gold_only_where_it_exists(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.data.get("template")
        if value and name and not get_template(name).has_gold:
            raise ValueError(
                f"the {name!r} template has no right answers to check against, so it takes no gold; "
                "remove this field (quality is judged from other signals)"
            )
        return value

    @model_validator(mode="after")
    def _gold_file_if_gold(self) -> CampaignSpec:
        if not get_template(self.template).has_gold:
            self.gold_per_hit = 0  # the default of 1 does not apply to gold-less templates
        if self.gold_per_hit and not self.gold:
            raise ValueError("gold_per_hit is above 0, so a gold file is required")
        if self.adaptive_gold is not None:
            problem = self.adaptive_gold.problem(self.items_per_hit, self.gold_per_hit)
            if problem:
                raise ValueError(problem)
        if self.workflow is not None:
            check_first_stage(self)
        if self.guidance is not None and self.guidance.scale is not None:
            template = get_template(self.template)
            problem = scale_problem(self.template, template.scale_wording(), self.guidance.scale)
            if problem:
                raise ValueError(f"guidance.scale: {problem}")
        return self


@dataclass
class LoadedItem:
    external_id: str
    payload: dict[str, Any]
    answer: Any = None


@dataclass
class CampaignFile:
    """A campaign file with its items and gold, all validated."""

    path: Path
    spec: CampaignSpec
    items: list[LoadedItem] = field(default_factory=list)
    gold: list[LoadedItem] = field(default_factory=list)

    @property
    def media_dir(self) -> Path | None:
        if self.spec.media_dir is None:
            return None
        return (self.path.parent / self.spec.media_dir).resolve()


def _load_items(path: Path, template_name: str, *, gold: bool) -> list[LoadedItem]:
    template = get_template(template_name)
    out: list[LoadedItem] = []
    seen: set[str] = set()
    errors: list[InputFileError] = []
    for line, obj in read_jsonl(path):
        ident = str(obj.get("id", "")).strip()
        if not ident:
            errors.append(InputFileError(path, line, "id", "every line needs a non-empty id"))
            continue
        if ident in seen:
            errors.append(InputFileError(path, line, "id", f"duplicate id {ident!r}"))
            continue
        seen.add(ident)
        try:
            payload = template.validate_item(obj.get("item", {}))
        except ValidationError as exc:
            errors.extend(
                validation_errors(path, exc, None, line, prefix=("item",), model=template.item_model).errors
            )
            continue
        answer = None
        if gold:
            if "answer" not in obj:
                errors.append(InputFileError(path, line, "answer", "a gold item needs an answer"))
                continue
            try:
                answer = template.validate_answer_key(obj["answer"])
            except ValidationError as exc:
                errors.extend(
                    validation_errors(
                        path, exc, None, line, prefix=("answer",), model=template.answer_model
                    ).errors
                )
                continue
            try:
                template.check_answer_key(answer, payload)
            except ValueError as exc:
                errors.append(InputFileError(path, line, "answer", str(exc)))
                continue
        out.append(LoadedItem(ident, payload, answer))
    if errors:
        raise InputFileErrors(errors)
    if not out:
        raise InputFileError(path, None, None, "the file holds no items")
    return out


def load_items(path: str | Path, template_name: str) -> list[LoadedItem]:
    """The items of an items file (JSON Lines) for ``template_name``; errors name file, line and field."""
    return _load_items(Path(path), template_name, gold=False)


def hit_count_for(spec: CampaignSpec, item_count: int) -> int:
    """How many HITs ``item_count`` items make, ``spec.items_per_hit`` to a HIT (``adaptive_gold``
    moves items between pages, ``pages.gold.page_plans``)."""
    if spec.adaptive_gold is None:
        return -(-item_count // spec.items_per_hit)
    return len(page_plans(item_count, spec.items_per_hit, spec.gold_per_hit, spec.adaptive_gold.counts()))


def _check_gold_pool(loaded: CampaignFile, lines: dict[tuple[Any, ...], int]) -> None:
    """Refuse a gold pool that would show a worker gold twice, unless the file allows it."""
    spec = loaded.spec
    problem = pool_shortfall(len(loaded.gold), spec.gold_per_hit, hit_count_for(spec, len(loaded.items)))
    if problem and not spec.allow_gold_reuse:
        raise InputFileError(
            loaded.path,
            lines.get(("gold_per_hit",)) or lines.get(("gold",)),
            "gold_per_hit",
            # gold_per_hit and allow_gold_reuse are keys of this file; only the gold items live in spec.gold.
            f"{problem} (gold items go in {spec.gold}; gold_per_hit is a key of {loaded.path.name}), "
            f"or set allow_gold_reuse: true in {loaded.path.name} to accept that risk",
        )


def load_campaign_file(path: str | Path) -> CampaignFile:
    """Read and validate a campaign file and the item and gold files it names.

    Every problem raises ``InputFileError`` / ``InputFileErrors`` naming file,
    line and field.
    """
    path = Path(path)
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        raise InputFileError(path, 1, None, "a campaign file must be a YAML mapping")
    spec = parse_model(CampaignSpec, path, data, lines)
    options_model = get_template(spec.template).options_model
    if options_model is not None:
        # Checked, not stored: the stored spec keeps the options as written (defaults stay the template's).
        parse_model(options_model, path, spec.template_options, lines, prefix=("template_options",))
    items_path = (path.parent / spec.items).resolve()
    loaded = CampaignFile(path=path, spec=spec)
    loaded.items = _load_items(items_path, spec.template, gold=False)
    if spec.gold:
        loaded.gold = _load_items((path.parent / spec.gold).resolve(), spec.template, gold=True)
    _check_gold_pool(loaded, lines)
    media = loaded.media_dir
    if media is not None and not media.is_dir():
        raise InputFileError(path, lines.get(("media_dir",)), "media_dir", f"{media} is not a folder")
    if spec.guidance is not None:
        check_guidance_files(path, spec.guidance, media, lines)
    known = [(i.external_id, i.payload, spec.items) for i in loaded.items]
    known += [(g.external_id, g.payload, spec.gold or "") for g in loaded.gold]
    check_training(path, spec.template, spec.training, known, media, lines)
    try:
        get_template(spec.template).check_campaign(
            spec.template_options, [i.payload for i in loaded.items + loaded.gold], media
        )
    except ValueError as exc:
        raise InputFileError(path, lines.get(("template_options",)), "template_options", str(exc)) from exc
    return loaded
