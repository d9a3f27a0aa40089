"""A heatmap campaign's ``template_options``: its models and the limits of live heatmaps."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hits.requester.heatmaps.providers import ModelSpec

MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class HeatmapOptions(BaseModel):
    """``models``: name -> provider of its live heatmaps; limits on what a page may ask for."""

    model_config = ConfigDict(extra="forbid")
    models: dict[str, ModelSpec] = Field(
        default_factory=dict,
        description="Model name -> the provider of its live heatmaps (a model with precomputed heatmaps "
        "for every sentence needs none).",
    )
    time_limit: float = Field(
        8.0, gt=0, le=30, description="Seconds a worker waits at most for a request's heatmaps (every model)."
    )
    live_requests: int = Field(
        12,
        ge=1,
        le=200,
        description="Requests (a sentence's or a prompt's heatmaps) one assignment may make per picture.",
    )
    min_interval: float = Field(
        1.0,
        ge=0,
        le=60,
        description="Shortest pause between two requests of one assignment for one picture, in seconds.",
    )
    max_prompt: int = Field(200, ge=10, le=1000, description="The longest custom prompt, in characters.")
    gold_tolerance: int = Field(
        1, ge=0, le=4, description="A known answer counts as right this many points from the key."
    )
    gold_pass_score: float = Field(
        1.0,
        ge=0,
        le=1,
        description="A gold item counts as answered right at this score or above; the score is the share "
        "of the chosen sentence's known answers within gold_tolerance.",
    )

    @field_validator("models")
    @classmethod
    def _names(cls, value: dict[str, ModelSpec]) -> dict[str, ModelSpec]:
        for name in value:
            if not MODEL_NAME.match(name):
                raise ValueError(f"model name {name!r}: 1 to 64 letters, digits, '_', '.' or '-'")
        return value


def parse_options(options: Mapping[str, Any]) -> HeatmapOptions:
    """The campaign's options, checked (``ValueError`` with pydantic's message)."""
    try:
        return HeatmapOptions.model_validate(dict(options))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'template_options'}: {e['msg']}" for e in exc.errors()
        )
        raise ValueError(problems) from exc


def check_campaign(
    options: Mapping[str, Any], items: Sequence[Mapping[str, Any]], media: Path | None
) -> None:
    """Every item's models can be shown: a precomputed map for each sentence or a live provider.

    Raises ``ValueError`` naming the first item, sentence and model that cannot,
    and precomputed files missing from the media folder.
    """
    parsed = parse_options(options)
    for n, item in enumerate(items, start=1):
        for model in item.get("models", []):
            spec = parsed.models.get(model)
            live = spec is not None and spec.provider != "none"
            for k, sentence in enumerate(item.get("sentences", []), start=1):
                path = sentence.get("heatmaps", {}).get(model)
                if path is None and not live:
                    raise ValueError(
                        f"item {n}, sentence {k}: model {model!r} has no precomputed heatmap and no live "
                        "provider in template_options.models"
                    )
                if path is not None and media is not None and not (media / path).is_file():
                    raise ValueError(f"item {n}, sentence {k}: heatmap file {path!r} is not in media_dir")
