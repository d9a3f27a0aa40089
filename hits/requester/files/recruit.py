"""The campaign file's ``recruit:`` section: bringing a crowd from a recruiting platform.

A campaign's HITs live on hitforge's marketplace either way; ``recruit`` says
where its workers come from besides the worker site. Only Prolific is known
today (``platform: prolific``): launching such a campaign creates a Prolific
study whose participants are sent to hitforge's entry page
(``docs/recruiting.md``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Eligibility(BaseModel):
    """Who may take the study's places, as Prolific's study filters say it."""

    model_config = ConfigDict(extra="forbid")
    participant_groups: list[str] = Field(
        default_factory=list,
        description="Prolific participant-group ids: only their members see the study (an allowlist).",
    )
    exclude_studies: list[str] = Field(
        default_factory=list,
        description="Prolific study ids whose participants may not take this one (a blocklist).",
    )
    filters: list[dict[str, Any]] = Field(
        default_factory=list,
        description="More Prolific filters, passed through as written: each {filter_id, selected_values} "
        "or {filter_id, selected_range}.",
    )

    @field_validator("filters")
    @classmethod
    def _filters_have_ids(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for number, entry in enumerate(value, start=1):
            if not isinstance(entry.get("filter_id"), str) or not entry["filter_id"]:
                raise ValueError(f"filter {number} has no filter_id")
        return value


class RecruitSpec(BaseModel):
    """Where a campaign recruits its workers, and what the study offers them."""

    model_config = ConfigDict(extra="forbid")
    platform: Literal["prolific"] = Field(description="The recruiting platform: prolific.")
    title: str = Field(
        min_length=1, max_length=120, description="The study's title, as participants see it on Prolific."
    )
    description: str = Field(
        min_length=1,
        max_length=5000,
        description="What participants read on Prolific before they start the study.",
    )
    reward: int = Field(
        ge=1,
        description="What one place pays, in the smallest unit of the study's currency (cents or pence), "
        "as Prolific takes it.",
    )
    estimated_minutes: int = Field(
        ge=1, le=1440, description="How long a place takes, in minutes (estimated_completion_time)."
    )
    hits_per_participant: int = Field(
        1, ge=1, le=100, description="HITs one participant works in one place, one after another."
    )
    places: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="Places in the study; by default as many as the work needs: HITs x assignments_per_hit "
        "/ hits_per_participant, rounded up.",
    )
    eligibility: Eligibility = Field(
        default_factory=Eligibility, description="Who may take the study's places."
    )


def places_needed(recruit: RecruitSpec, hit_count: int, assignments_per_hit: int) -> int:
    """The study's places: the file's number, or enough for every assignment of every HIT."""
    if recruit.places is not None:
        return recruit.places
    return max(1, -(-(hit_count * assignments_per_hit) // recruit.hits_per_participant))


def study_filters(eligibility: Eligibility, block_group: str | None = None) -> list[dict[str, Any]]:
    """The Prolific ``filters`` of a study from the eligibility the campaign file gives.

    ``block_group``: the participant group of participants hitforge blocked (none may take a place).
    """
    filters: list[dict[str, Any]] = []
    if eligibility.participant_groups:
        filters.append(
            {"filter_id": "participant_group_allowlist", "selected_values": eligibility.participant_groups}
        )
    if eligibility.exclude_studies:
        filters.append(
            {"filter_id": "previous_studies_blocklist", "selected_values": eligibility.exclude_studies}
        )
    if block_group:
        filters.append({"filter_id": "participant_group_blocklist", "selected_values": [block_group]})
    return filters + [dict(f) for f in eligibility.filters]
