"""A batch's settings and plan: validated inputs stored as rows, ready to publish."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.batches.inputs import CsvTable, decode_utf8, read_csv
from hits.batches.layout import missing_columns
from hits.batches.models import Batch, BatchRow
from hits.campaigns.fileerrors import InputFileError, InputFileErrors, load_yaml
from hits.campaigns.models import BATCH_STATUS, Campaign
from hits.money import MoneyError, mturk_fee, parse_amount


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
    """Refuse a CSV with no rows, or that lacks a column the layout's markup uses."""
    missing = missing_columns(layout, table.columns)
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


def planned_cost(settings: BatchSettings, hit_count: int) -> Decimal:
    """Rewards plus MTurk fees for every assignment of the batch."""
    fee = mturk_fee(settings.reward, max_assignments=settings.assignments)
    return (settings.reward + fee) * settings.assignments * hit_count


def create_batch(
    session: Session, name: str, layout_path: Path, csv_path: Path, settings: BatchSettings
) -> Batch:
    """Read and check the layout and CSV, then store the batch and one row per CSV row."""
    try:
        layout = layout_path.read_bytes()
    except OSError as exc:
        raise InputFileError(layout_path, None, None, f"cannot read file: {exc.strerror}") from exc
    layout_text = decode_utf8(layout_path, layout)
    table = read_csv(csv_path)
    check_inputs(layout_path, layout_text, table)
    return store_batch(session, name, layout_text, table, settings)


def store_batch(session: Session, name: str, layout: str, table: CsvTable, settings: BatchSettings) -> Batch:
    """Store a checked batch; its campaign row carries the outbox and the access key."""
    if session.scalar(select(Batch.id).where(Batch.name == name)) is not None:
        raise ValueError(f"a batch named {name!r} already exists")
    campaign_name = f"batch: {name}"
    if session.scalar(select(Campaign.id).where(Campaign.name == campaign_name)) is not None:
        raise ValueError(f"a campaign named {campaign_name!r} already exists")
    stored = settings.model_dump(mode="json")
    campaign = Campaign(
        name=campaign_name,
        template="batch",
        spec={"title": settings.title, "reward": str(settings.reward), "batch": True},
        status=BATCH_STATUS,
        budget=planned_cost(settings, len(table.rows)),
    )
    session.add(campaign)
    session.flush()
    batch = Batch(campaign_id=campaign.id, name=name, layout=layout, columns=table.columns, settings=stored)
    session.add(batch)
    session.flush()
    session.add_all(
        BatchRow(batch_id=batch.id, position=i, line=row.line, inputs=row.cells)
        for i, row in enumerate(table.rows)
    )
    session.flush()
    return batch


def batch_settings(batch: Batch) -> BatchSettings:
    """The stored settings of a batch."""
    return BatchSettings.model_validate(batch.settings)
