"""The campaign file's ``recruit:`` section: bringing a crowd from a recruiting platform.

A campaign's HITs live on hitforge's marketplace either way; ``recruit`` says
where its workers come from besides the worker site. ``platform: prolific``:
launching the campaign creates a Prolific study whose participants are sent
to hitforge's entry page. ``platform: panel`` (CloudResearch Connect, SONA,
a lab's mailing list): no API at all; the panel sends participants to an
entry link carrying their panel id, and hitforge sends them back to the
panel's completion URL with the campaign's code (``docs/recruiting.md``).
"""

from __future__ import annotations

import re
from decimal import Decimal
from string import Formatter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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
    platform: Literal["prolific", "panel"] = Field(
        description="The recruiting platform: prolific, or panel (any panel that sends participants to a "
        "link with their id and takes them back at a completion URL: CloudResearch Connect, SONA, a "
        "lab's mailing list)."
    )
    title: str = Field(
        min_length=1, max_length=120, description="The study's title, as participants see it on Prolific."
    )
    description: str = Field(
        min_length=1,
        max_length=5000,
        description="What participants read on Prolific before they start the study.",
    )
    reward: int | None = Field(
        None,
        ge=1,
        description="Prolific only, required there: what one place pays, in the smallest unit of the "
        "study's currency (cents or pence), as Prolific takes it.",
    )
    estimated_minutes: int | None = Field(
        None,
        ge=1,
        le=1440,
        description="Prolific only, required there: how long a place takes, in minutes "
        "(estimated_completion_time).",
    )
    panel: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$",
        description="Panel only: the panel's name in hitforge. A participant's account is bound to it and "
        "their panel id (panel:<name>:<id>), so the same person gets the same account in every campaign "
        "naming this panel; by default the campaign's name (an account per campaign).",
    )
    id_parameter: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,31}$",
        description="Panel only, required there: the entry link's URL parameter carrying the "
        "participant's panel id (participantId, id, survey_code...).",
    )
    completion_url: str | None = Field(
        None,
        max_length=2000,
        description="Panel only: where a participant who finished is sent, with {code} (the campaign's "
        "completion code) and optionally {id} (their panel id) filled in, e.g. "
        "https://connect.cloudresearch.com/participant/project/ABC/complete?code={code}.",
    )
    redirect_url: str | None = Field(
        None,
        max_length=2000,
        description="Panel only, instead of completion_url: a fixed page of the panel to go back to; a "
        "participant who finished is shown completion_code to enter there, and a link to it.",
    )
    completion_code: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_-]{1,32}$",
        description="Panel only: the code participants who finished are given (the panel's, when it "
        "issued one); by default one hitforge makes at launch. Required with redirect_url.",
    )
    signed_links: bool = Field(
        False,
        description="Panel only: each participant enters by a link made for their id (`hitforge recruit "
        "links`), signed with the server's secret; the open link, and a link with another id, are "
        "refused. For a lab that sends each person their own link; a panel that fills an id into one "
        "shared link (SONA, Connect) cannot sign it.",
    )
    per_participant_codes: bool = Field(
        False,
        description="Panel only: a participant who finished gets their own completion code, derived from "
        "their id with the server's secret, instead of one shared code; `hitforge recruit codes` lists "
        "them to check what participants entered on the panel. Not with completion_code.",
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
        default_factory=Eligibility, description="Prolific only: who may take the study's places."
    )
    mirror_qualifications: list[str] = Field(
        default_factory=list,
        max_length=10,
        description="Prolific only: qualifications this campaign grants that are mirrored to Prolific "
        "participant groups hitforge makes at launch (one each, named '<study's internal name> "
        "<qualification>'): a participant granted one with a score of 1 or more joins its group; one it "
        "is revoked from, or granted 0, leaves it. Each is a qualification test's name or a "
        "qualification type id among the campaign's qualification_requirements. `hitforge recruit "
        "status` prints each group's id, for a later study's eligibility.participant_groups.",
    )
    partial_payment: bool = Field(
        False,
        description="Prolific only: a place whose tasks were partly approved and partly rejected is paid "
        "in part instead of rejected: the share of its tasks approved, as a percentage of the reward "
        "(Prolific's DYNAMIC_PAYMENT, 8 to 99 percent; a share under 8 percent is rejected).",
    )
    currency: Literal["GBP", "USD"] | None = Field(
        None,
        description="Prolific only, required: the currency of the Prolific workspace the study runs in "
        "(Prolific pays rewards and bonuses in it). hitforge's budget is in US dollars: the study's cost "
        "and bonuses are counted in it converted, never as the same number in another currency.",
    )
    exchange_rate: Decimal | None = Field(
        None,
        gt=0,
        le=1000,
        description="Prolific only, required with currency GBP: how many units of the study's currency one "
        "US dollar is worth (0.79: $0.50 is paid as 0.40). The study's cost and bonuses are converted with "
        "it, and the budget counts what they cost in dollars.",
    )
    bonus_fee_rate: Decimal = Field(
        Decimal("0.3334"),
        ge=0,
        le=2,
        description="Prolific only: Prolific's fee on a bonus (with any VAT on it), as a fraction of the "
        "bonus, counted in the budget (default 0.3334, a third rounded up: Prolific's documented bonus "
        "set-up example charges fees of 283.34 on 850). Before paying, hitforge reads the set-up's "
        "total_amount and does not pay "
        "a bonus that would cost more than the budget counted.",
    )

    @model_validator(mode="after")
    def _fields_of_the_platform(self) -> RecruitSpec:
        prolific_only = ("reward", "estimated_minutes")
        prolific_optional = ("currency", "exchange_rate")
        panel_only = ("panel", "id_parameter", "completion_url", "redirect_url", "completion_code")
        if self.platform == "prolific":
            missing = [n for n in prolific_only if getattr(self, n) is None]
            if missing:
                raise ValueError(f"a Prolific study needs {' and '.join(missing)}")
            stray = [n for n in panel_only if getattr(self, n) is not None]
            stray += [n for n in ("signed_links", "per_participant_codes") if getattr(self, n)]
            if stray:
                raise ValueError(f"{', '.join(stray)}: only for platform: panel")
            if self.currency is None:
                raise ValueError(
                    "a Prolific study needs currency: its workspace's (USD or GBP); the study's rewards, "
                    "Prolific's fees and any bonus are counted in the budget, in dollars"
                )
            if self.currency != "USD" and self.exchange_rate is None:
                raise ValueError(
                    f"a study in {self.currency} needs exchange_rate: how many {self.currency} one US dollar "
                    "is worth, to count its rewards, fees and bonuses in the budget"
                )
            if self.currency == "USD" and self.exchange_rate not in (None, Decimal(1)):
                raise ValueError("exchange_rate: a study in USD pays dollars as they are (leave it out)")
            if len(set(self.mirror_qualifications)) != len(self.mirror_qualifications):
                raise ValueError("mirror_qualifications: each qualification once")
            return self
        stray = [n for n in prolific_only + prolific_optional if getattr(self, n) is not None]
        stray += [n for n in ("mirror_qualifications", "partial_payment") if getattr(self, n)]
        if stray or self.eligibility != Eligibility():
            raise ValueError(f"{', '.join(stray) or 'eligibility'}: only for platform: prolific")
        if self.id_parameter is None:
            raise ValueError("a panel needs id_parameter: the URL parameter carrying the participant's id")
        if (self.completion_url is None) == (self.redirect_url is None):
            raise ValueError(
                "a panel needs completion_url (with {code}), or redirect_url and completion_code"
            )
        if self.completion_url is not None:
            _check_url(self.completion_url, "completion_url")
            names = {name for _, name, _, _ in Formatter().parse(self.completion_url) if name is not None}
            if "code" not in names or names - {"code", "id"}:
                raise ValueError("completion_url takes {code} (required) and {id}, and no other {...}")
        else:
            assert self.redirect_url is not None
            _check_url(self.redirect_url, "redirect_url")
            if self.completion_code is None and not self.per_participant_codes:
                raise ValueError(
                    "redirect_url needs completion_code (the code participants enter there) or "
                    "per_participant_codes"
                )
        if self.per_participant_codes and self.completion_code is not None:
            raise ValueError("completion_code and per_participant_codes: one code for all, or one each")
        return self


_URL = re.compile(r"https://[^\s/?#]+(/[^\s]*)?")


def _check_url(url: str, what: str) -> None:
    # https only: a participant is sent there from hitforge's pages, never to a script or plain http.
    if not _URL.fullmatch(url.replace("{code}", "x").replace("{id}", "x")):
        raise ValueError(f"{what} must be an https:// URL")


def completion_target(recruit: RecruitSpec, code: str, participant_id: str) -> str | None:
    """A panel participant's completion URL with the code (and their id) filled in; None for redirect_url."""
    if recruit.completion_url is None:
        return None
    quoted = re.sub(r"[^A-Za-z0-9_.-]", "", participant_id)  # ids are checked at entry; kept URL-safe anyway
    return recruit.completion_url.format(code=code, id=quoted)


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
