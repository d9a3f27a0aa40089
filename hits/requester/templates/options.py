"""Pieces the built-in templates' ``template_options`` models share.

Each template's options model (``TaskTemplate.options_model``) is checked
when the campaign file is read and documented in docs/campaigns.md; the
scoring code keeps reading the plain mapping, with the same defaults.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class NoOptions(BaseModel):
    """This template takes no options: ``template_options`` stays empty."""

    model_config = ConfigDict(extra="forbid")


def pass_score(default: float, scored: str) -> Any:
    """The ``gold_pass_score`` field: the score at or above which a gold item counts as answered right."""
    return Field(
        default,
        ge=0,
        le=1,
        description=f"A gold item counts as answered right at this score or above; the score is {scored}.",
    )
