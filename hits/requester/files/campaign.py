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
from hits.requester.files.workflow import WorkflowOptions, check_first_stage
from hits.requester.pages.gold import pool_shortfall
from hits.requester.templates import TemplateError, get_template


def _money(value: Any) -> Decimal:
    try:
        return parse_amount(value)
    except MoneyError as exc:
        raise ValueError(str(exc).split(": ", 1)[-1]) from exc


#: An amount of dollars, exact: "1.25" or 1; a float is refused (it cannot carry cents exactly).
Money = Annotated[Decimal, BeforeValidator(_money)]
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
    amount: Money
    min_gold_accuracy: float = Field(0.9, gt=0, le=1)
    min_gold: int = Field(5, ge=1)
    reason: str = Field("Thank you: your answers to the check questions were excellent.", max_length=1024)


class QualityPolicy(BaseModel):
    """How gold results turn into decisions."""

    model_config = ConfigDict(extra="forbid")
    accuracy_threshold: float = Field(0.6, gt=0, lt=1)
    confidence: float = Field(0.9, ge=0.5, lt=1)
    min_gold: int = Field(3, ge=1)
    #: The recent-work test: gold answers per block; a worker gold approved before their latest
    #: block and the block flags is flagged (a turn for the worse). 0 turns it off.
    recent_gold: int = Field(20, ge=0)
    flagged_action: Literal["reject", "hold"] = "reject"
    #: For templates without gold (free text): the highest tolerated share of misspelt
    #: words, and how many words a worker must have written before a verdict.
    #: Signals that may flag a worker whom gold leaves undecided (all are always recorded as
    #: evidence). "speed" is opt-in: it assumes human pacing, which scripted crowds lack.
    signals: list[SignalName] = Field(default_factory=lambda: list(DEFAULT_SIGNALS))
    #: The copying-pair signal (docs/quality.md): p-value bound per pair, shared real items
    #: needed, identical free-text answers that suffice.
    copying_false_alarm: float = Field(COPYING_FALSE_ALARM, gt=0, lt=0.5)
    copying_min_shared: int = Field(COPYING_MIN_SHARED, ge=1)
    copying_min_identical_texts: int = Field(COPYING_MIN_IDENTICAL_TEXTS, ge=1)
    max_spelling_error_rate: float = Field(0.25, gt=0, lt=1)
    min_words: int = Field(20, ge=1)
    #: What else happens to a flagged worker: nothing more, a soft block (a qualification
    #: the campaign's HITs exclude), or a hard block (CreateWorkerBlock, every HIT of yours).
    flagged_worker: Literal["none", "soft_block", "hard_block"] = "none"
    block_reason: str = Field(
        "Too many check questions in this campaign were answered wrongly.", max_length=1024
    )
    #: A message sent to a flagged worker through NotifyWorkers (none when empty).
    notify_flagged: str = Field("", max_length=4096)
    #: Give rejected work to someone else (CreateAdditionalAssignmentsForHIT), within budget.
    repost_rejected: bool = False
    bonus: BonusRule | None = None
    #: Decide every assignment at least this long before the marketplace would auto-approve it
    #: (at most a tenth of the auto-approval delay).
    deadline_margin_seconds: int = Field(3600, ge=0)
    rejection_feedback: str = Field(
        "Too many of the check questions in this task were answered incorrectly.", max_length=1024
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
    name: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    template: str
    title: str = Field(min_length=1, max_length=128)
    description: str = Field(min_length=1, max_length=2000)
    keywords: str = Field("", max_length=1000)
    reward: Money
    budget: Money
    assignments_per_hit: int = Field(3, ge=1, le=100)
    items_per_hit: int = Field(4, ge=1, le=50)
    gold_per_hit: int = Field(1, ge=0, le=10)
    lifetime_seconds: int = Field(86_400, ge=30, le=31_536_000)
    assignment_duration_seconds: int = Field(1_800, ge=30, le=31_536_000)
    auto_approval_delay_seconds: int = Field(259_200, ge=0, le=2_592_000)
    items: str
    gold: str | None = None
    #: Accept a gold pool smaller than HITs x gold_per_hit (``hits.requester.pages.gold.pool_shortfall``):
    #: gold items then recur across HITs, which tells a worker who takes several HITs which are gold.
    allow_gold_reuse: bool = False
    media_dir: str | None = None
    template_options: dict[str, Any] = Field(default_factory=dict)
    qualification_requirements: list[dict[str, Any]] = Field(default_factory=list)
    quality: QualityPolicy = Field(default_factory=QualityPolicy)
    seed: int = 0
    #: Stages fed by this campaign's output and refinement rounds (``hits.requester.files.workflow``).
    workflow: WorkflowOptions | None = None

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
        if self.workflow is not None:
            check_first_stage(self)
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
            errors.extend(validation_errors(path, exc, None, line, prefix=("item",)).errors)
            continue
        answer = None
        if gold:
            if "answer" not in obj:
                errors.append(InputFileError(path, line, "answer", "a gold item needs an answer"))
                continue
            try:
                answer = template.validate_answer_key(obj["answer"])
            except ValidationError as exc:
                errors.extend(validation_errors(path, exc, None, line, prefix=("answer",)).errors)
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


def hit_count_for(spec: CampaignSpec, item_count: int) -> int:
    """How many HITs ``item_count`` items make, ``spec.items_per_hit`` to a HIT."""
    return -(-item_count // spec.items_per_hit)


def _check_gold_pool(loaded: CampaignFile, lines: dict[tuple[Any, ...], int]) -> None:
    """Refuse a gold pool that would show a worker gold twice, unless the file allows it."""
    spec = loaded.spec
    problem = pool_shortfall(len(loaded.gold), spec.gold_per_hit, hit_count_for(spec, len(loaded.items)))
    if problem and not spec.allow_gold_reuse:
        raise InputFileError(
            loaded.path,
            lines.get(("gold_per_hit",)) or lines.get(("gold",)),
            "gold_per_hit",
            f"{problem} (in {spec.gold}), or set allow_gold_reuse: true to accept that risk",
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
    items_path = (path.parent / spec.items).resolve()
    loaded = CampaignFile(path=path, spec=spec)
    loaded.items = _load_items(items_path, spec.template, gold=False)
    if spec.gold:
        loaded.gold = _load_items((path.parent / spec.gold).resolve(), spec.template, gold=True)
    _check_gold_pool(loaded, lines)
    media = loaded.media_dir
    if media is not None and not media.is_dir():
        raise InputFileError(path, lines.get(("media_dir",)), "media_dir", f"{media} is not a folder")
    try:
        get_template(spec.template).check_campaign(
            spec.template_options, [i.payload for i in loaded.items + loaded.gold], media
        )
    except ValueError as exc:
        raise InputFileError(path, lines.get(("template_options",)), "template_options", str(exc)) from exc
    return loaded
