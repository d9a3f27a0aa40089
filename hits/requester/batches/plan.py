"""A batch's settings and plan: validated inputs stored as rows, ready to publish."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.money import MoneyError, mturk_fee, parse_amount
from hits.requester.batches.inputs import CsvTable, decode_utf8, read_csv
from hits.requester.fileerrors import InputFileError, InputFileErrors, load_yaml
from hits.requester.files.campaign import QualityPolicy
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import BATCH_STATUS, Campaign, GoldItem, HITSlot, Item, PublishedHIT
from hits.requester.templates.batch import BATCH_TEMPLATE
from hits.requester.templates.batch.gold import (
    GOLD_PREFIX,
    expected_answers,
    json_cell_problems,
    split_columns,
)
from hits.requester.templates.batch.matching import FieldTolerance
from hits.wire.layout import missing_columns, placeholders


def _money(value: Any) -> Decimal:
    try:
        return parse_amount(value, field="reward")
    except MoneyError as exc:
        raise ValueError(str(exc)) from exc


class BatchSettings(BaseModel):
    """What MTurk's project page asked for: the HITType's properties and the HITs' timings."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=128)
    description: str = Field(min_length=1, max_length=2000)
    keywords: str = Field(default="", max_length=1000)
    reward: Annotated[Decimal, BeforeValidator(_money)]
    assignments: int = Field(default=1, ge=1, le=1_000_000)
    lifetime_seconds: int = Field(default=3 * 86_400, ge=30, le=365 * 86_400)
    assignment_duration_seconds: int = Field(default=3600, ge=30, le=365 * 86_400)
    auto_approval_delay_seconds: int = Field(default=3 * 86_400, ge=0, le=30 * 86_400)
    frame_height: int = Field(default=0, ge=0)
    qualification_requirements: list[dict[str, Any]] = Field(default_factory=list)
    #: What the batch may spend in all (default: its rewards and fees). Bonuses and re-posts
    #: the quality policy grants come out of what is left above the planned cost.
    budget: Annotated[Decimal, BeforeValidator(_money)] | None = None
    #: Gold rows (``Gold.<field>`` columns): how far a number may be from the expected one.
    gold_tolerance: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    #: Gold rows: a field's own tolerance, by its ``Gold.<field>`` name (or a dotted parent's):
    #: ``{count: 1, boundingBox: {iou: 0.6}, points: {distance: 5}}`` (templates/batch/matching.py).
    gold_field_tolerance: dict[str, FieldTolerance] = Field(default_factory=dict)
    #: Gold rows: compare text with whitespace collapsed and case ignored (default: exactly).
    gold_normalise_text: bool = False
    #: Gold rows: the share of a row's checked fields that must be right for the row to pass
    #: (default 1: all of them, one pass or fail per row as MTurk requesters judged gold).
    gold_pass_share: float = Field(default=1.0, gt=0, le=1)
    #: How gold decides (the campaign file's ``quality``). A batch consults no other signal
    #: unless it lists some: agreement over whole forms that mix free text means little.
    quality: QualityPolicy = Field(default_factory=lambda: QualityPolicy(signals=[]))

    @field_validator("gold_field_tolerance", mode="before")
    @classmethod
    def _named_fields(cls, value: Any) -> Any:
        if isinstance(value, dict) and any(not str(k).strip() for k in value):
            raise ValueError("a field name is empty: write the field of a Gold.<field> column")
        return value

    @field_validator("quality", mode="before")
    @classmethod
    def _no_signals_unless_listed(cls, value: Any) -> Any:
        if isinstance(value, dict) and "signals" not in value:
            return {**value, "signals": []}
        return value


def load_settings_file(path: Path | None, overrides: dict[str, Any]) -> BatchSettings:
    """Settings from a small YAML file (optional), each flag given overriding it.

    Errors name the file, the line and the field; a flag's error names the flag.
    """
    data: dict[str, Any] = {}
    lines: dict[tuple[Any, ...], int] = {}
    if path is not None:
        loaded, lines = load_yaml(path)
        if loaded is not None and not isinstance(loaded, dict):
            raise InputFileError(path, 1, None, "the settings file must be a mapping of field: value")
        data = dict(loaded or {})
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return BatchSettings.model_validate({**data, **given})
    except ValidationError as exc:
        errors = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            field = str(loc[0]) if loc else ""
            if field in given or path is None:
                errors.append(
                    InputFileError("command line", None, f"--{field.replace('_', '-')}", err["msg"])
                )
                continue
            probe = loc
            while probe and probe not in lines:
                probe = probe[:-1]
            errors.append(InputFileError(path, lines.get(probe), ".".join(map(str, loc)), err["msg"]))
        raise InputFileErrors(errors) from exc


def check_inputs(layout_path: Path | str, layout: str, table: CsvTable) -> None:
    """Refuse a CSV with no rows, or that lacks a column the layout's markup uses.

    A layout that names a ``Gold.*`` column is refused too: gold answers never reach a page.
    """
    try:
        inputs = split_columns(table.columns).inputs
    except ValueError as exc:
        raise InputFileError(table.path, 1, None, str(exc)) from exc
    leaks = [p for p in placeholders(layout) if p.name.startswith(GOLD_PREFIX)]
    if leaks:
        raise InputFileErrors(
            [
                InputFileError(
                    layout_path,
                    p.line,
                    p.name,
                    f"the layout uses ${{{p.name}}}: gold answers are never shown to workers; "
                    "remove it from the layout",
                )
                for p in leaks
            ]
        )
    missing = missing_columns(layout, inputs)
    if missing:
        raise InputFileErrors(
            [
                InputFileError(
                    table.path,
                    1,
                    p.name,
                    f"the layout {layout_path} uses ${{{p.name}}} (its line {p.line}) "
                    "but the CSV has no such column",
                )
                for p in missing
            ]
        )
    if not table.rows:
        raise InputFileError(table.path, None, None, "the CSV has a header but no rows")


def check_gold(table: CsvTable, settings: BatchSettings, settings_path: Path | None = None) -> None:
    """Refuse a gold cell that starts like JSON but is not, and a ``gold_field_tolerance`` entry
    that names no ``Gold.*`` column (nor a dotted parent of one): a typo would go unnoticed."""
    fields = split_columns(table.columns).fields
    errors = [
        InputFileError(table.path, row.line, column, problem)
        for row in table.rows
        for column, problem in json_cell_problems(row.cells, fields)
    ]
    for name in settings.gold_field_tolerance:
        if not any(f == name or f.startswith(name + ".") for f in fields):
            known = ", ".join(fields) or "none"
            errors.append(
                InputFileError(
                    settings_path or "the batch settings",
                    None,
                    f"gold_field_tolerance.{name}",
                    f"no column Gold.{name} (or Gold.{name}.*) in {table.path}; its gold fields: {known}",
                )
            )
    if errors:
        raise InputFileErrors(errors)


def planned_cost(settings: BatchSettings, hit_count: int) -> Decimal:
    """Rewards plus MTurk fees for every assignment of the batch."""
    fee = mturk_fee(settings.reward, max_assignments=settings.assignments)
    return (settings.reward + fee) * settings.assignments * hit_count


def create_batch(
    session: Session,
    name: str,
    layout_path: Path,
    csv_path: Path,
    settings: BatchSettings,
    settings_path: Path | None = None,
) -> Batch:
    """Read and check the layout and CSV, then store the batch and one row per CSV row.

    ``settings_path``: the YAML the settings came from, named in errors about them.
    """
    try:
        layout = layout_path.read_bytes()
    except OSError as exc:
        raise InputFileError(layout_path, None, None, f"cannot read file: {exc.strerror}") from exc
    layout_text = decode_utf8(layout_path, layout)
    table = read_csv(csv_path)
    check_inputs(layout_path, layout_text, table)
    check_gold(table, settings, settings_path)
    return store_batch(session, name, layout_text, table, settings)


def store_batch(session: Session, name: str, layout: str, table: CsvTable, settings: BatchSettings) -> Batch:
    """Store a checked batch; its campaign row carries the outbox, the access key and the policy.

    Each row gets a published HIT of one slot, holding the row as an item or,
    when it has ``Gold.*`` answers, as a gold item (the answers kept apart from
    the inputs the layout is filled with).
    """
    if session.scalar(select(Batch.id).where(Batch.name == name)) is not None:
        raise ValueError(f"a batch named {name!r} already exists")
    campaign_name = f"batch: {name}"
    if session.scalar(select(Campaign.id).where(Campaign.name == campaign_name)) is not None:
        raise ValueError(f"a campaign named {campaign_name!r} already exists")
    columns = split_columns(table.columns)
    gold = [expected_answers(row.cells, columns.fields) for row in table.rows]
    budget = planned_cost(settings, len(table.rows))
    if settings.budget is not None:
        if settings.budget < budget:
            raise ValueError(
                f"the budget {settings.budget} is below the batch's planned cost {budget} "
                f"({len(table.rows)} HITs x {settings.assignments} assignments, fees included)"
            )
        budget = settings.budget
    campaign = Campaign(
        name=campaign_name,
        template=BATCH_TEMPLATE,
        spec=campaign_spec_of(name, settings, budget, gold_rows=sum(1 for g in gold if g)),
        status=BATCH_STATUS,
        budget=budget,
    )
    session.add(campaign)
    session.flush()
    stored = settings.model_dump(mode="json")
    batch = Batch(campaign_id=campaign.id, name=name, layout=layout, columns=columns.inputs, settings=stored)
    session.add(batch)
    session.flush()
    items = 0  # the rows stored as items so far: the next one's position in the campaign
    for position, (row, expected) in enumerate(zip(table.rows, gold, strict=True)):
        inputs = {c: row.cells[c] for c in columns.inputs}
        external_id = f"row-{position + 1}"
        item: Item | GoldItem = (
            GoldItem(campaign_id=campaign.id, external_id=external_id, payload=inputs, answer=expected)
            if expected
            else Item(campaign_id=campaign.id, position=items, external_id=external_id, payload=inputs)
        )
        if isinstance(item, Item):
            items += 1
        published = PublishedHIT(campaign_id=campaign.id)
        session.add_all([item, published])
        session.flush()
        session.add(
            HITSlot(
                published_hit_id=published.id,
                position=0,
                item_id=item.id if isinstance(item, Item) else None,
                gold_item_id=item.id if isinstance(item, GoldItem) else None,
            )
        )
        session.add(
            BatchRow(
                batch_id=batch.id,
                position=position,
                line=row.line,
                inputs=inputs,
                published_hit_id=published.id,
            )
        )
    session.flush()
    return batch


#: What a campaign file's name may look like (``CampaignSpec.name``).
_SPEC_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def campaign_spec_of(name: str, settings: BatchSettings, budget: Decimal, gold_rows: int) -> dict[str, Any]:
    """The batch as a campaign file would state it, for the pipeline's follow-ups (bonus, re-post,
    block, message), which read the campaign's settings and policy from it."""
    return {
        "name": "b" + _SPEC_NAME.sub("-", name)[:127],
        "template": BATCH_TEMPLATE,
        "title": settings.title,
        "description": settings.description,
        "keywords": settings.keywords,
        "reward": str(settings.reward),
        "budget": str(budget),
        # A campaign file allows at most 100; only the fee tier (the same above 10) reads it. The
        # budget checks of bonuses and re-posts count the batch's own number (followups.committed_cost).
        "assignments_per_hit": min(settings.assignments, 100),
        "items_per_hit": 1,
        "gold_per_hit": 1 if gold_rows else 0,
        "lifetime_seconds": settings.lifetime_seconds,
        "assignment_duration_seconds": settings.assignment_duration_seconds,
        "auto_approval_delay_seconds": settings.auto_approval_delay_seconds,
        "items": "(batch CSV)",
        "gold": "(batch CSV: Gold.* columns)" if gold_rows else None,
        "template_options": {
            "gold_tolerance": settings.gold_tolerance,
            "gold_normalise_text": settings.gold_normalise_text,
            "gold_field_tolerance": {
                f: t.model_dump(exclude_none=True) for f, t in settings.gold_field_tolerance.items()
            },
            "gold_pass_score": settings.gold_pass_share,
        },
        "qualification_requirements": settings.qualification_requirements,
        "quality": settings.quality.model_dump(mode="json"),
    }


def batch_settings(batch: Batch) -> BatchSettings:
    """The stored settings of a batch."""
    return BatchSettings.model_validate(batch.settings)
