"""Creating a workflow from a campaign file: its stage campaigns, chains and budget check."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.campaigns.service import BudgetExceeded, CampaignExists, create_campaign, planned_cost
from hits.requester.files.campaign import CampaignFile, CampaignSpec
from hits.requester.files.workflow import (
    REDO_MONEY_REFUSED,
    ROUNDS_TEMPLATES,
    SEEDED_TEMPLATES,
    RoundsPolicy,
    StageSpec,
    WorkflowOptions,
    redo_money_fields,
)
from hits.requester.seeders import SeederError, make_seeder
from hits.requester.tables.campaigns import Campaign
from hits.requester.tables.workflows import Chain, Workflow, WorkflowStage
from hits.requester.templates.refine import MIN_WORDS
from hits.requester.workflows.first_stage import add_picture_rows

#: Stage campaigns are named ``<workflow>.<stage>`` (the first stage takes the workflow's name).
STAGE_SEPARATOR = "."


def stage_spec(spec: CampaignSpec, stage: StageSpec) -> dict[str, Any]:
    """The campaign spec (JSON) of a later stage: the file's fields, with the stage's changes."""
    data = spec.model_dump(mode="json", exclude={"workflow"})
    data.update(
        name=f"{spec.name}{STAGE_SEPARATOR}{stage.name}"[:128],
        template=stage.template,
        assignments_per_hit=1,
        items_per_hit=1,
        gold_per_hit=0,
        gold=None,
        template_options=stage.template_options,
        # Practice items are the first stage's template's items and answers, and its guidance speaks
        # of that template's task and scale: a stage of another template could show neither.
        training=[],
        guidance=None,
    )
    for key in ("title", "description", "keywords", "assignment_duration_seconds", "lifetime_seconds"):
        if getattr(stage, key) is not None:
            data[key] = getattr(stage, key)
    if stage.reward is not None:
        data["reward"] = str(stage.reward)
    if stage.qualification_requirements is not None:
        data["qualification_requirements"] = stage.qualification_requirements
    # One round is judged on its own: a short clean text is enough evidence (see the docs).
    quality = {**data["quality"], **(stage.quality or {})}
    if "min_words" not in (stage.quality or {}) and "min_words" not in spec.quality.model_fields_set:
        quality["min_words"] = MIN_WORDS
    data["quality"] = quality
    child = CampaignSpec.model_validate(data)
    refused = redo_money_fields(child.quality)
    if refused:  # the file's check refuses these; a spec built in code must not slip past it
        raise ValueError(f"stage {stage.name!r}: {REDO_MONEY_REFUSED}: remove quality.{refused[0]}")
    return child.model_dump(mode="json")


def round_cost(spec_json: dict[str, Any]) -> Decimal:
    """What one round's HIT commits: one assignment's reward and fee."""
    spec = CampaignSpec.model_validate({k: v for k, v in spec_json.items() if k != "media_path"})
    return planned_cost(spec, 1)


def create_workflow(session: Session, loaded: CampaignFile) -> Workflow:
    """Store a campaign file that declares a workflow: every stage's campaign and every chain.

    The first stage's HITs are planned as for any campaign when its template
    is not a rounds template (an object-annotation one also gets a row per
    picture, for its seeds: ``hits.requester.workflows.first_stage``); rounds HITs are
    made by the pipeline as chains
    advance. Refused (:class:`BudgetExceeded`) when the budget cannot pay the
    first stage and one round of every picture in every rounds stage.
    """
    spec = loaded.spec
    options = spec.workflow
    assert options is not None
    if session.scalar(select(Workflow.id).where(Workflow.name == spec.name)) is not None:
        raise CampaignExists(f"a workflow named {spec.name!r} already exists", resumable=False)
    _check_seeder(options, loaded.path.parent.resolve())
    media_path = str(loaded.media_dir) if loaded.media_dir else None
    stored = spec.model_dump(mode="json")
    stored["base_dir"] = str(loaded.path.parent.resolve())
    workflow = Workflow(name=spec.name, spec=stored, budget=spec.budget, status="running")
    session.add(workflow)
    session.flush()
    rounds_first = spec.template in ROUNDS_TEMPLATES
    if rounds_first:
        first_json = spec.model_dump(mode="json", exclude={"workflow"})
        if "min_words" not in spec.quality.model_fields_set:
            first_json["quality"]["min_words"] = MIN_WORDS  # one round is judged on its own
        first = _bare_campaign(session, spec.name, first_json, media_path)
        first_cost = Decimal("0")
    else:
        single = loaded.spec.model_copy(update={"workflow": None})
        first = create_campaign(session, CampaignFile(loaded.path, single, loaded.items, loaded.gold))
        first_cost = planned_cost(single, -(-len(loaded.items) // single.items_per_hit))
    stages = [
        WorkflowStage(
            workflow_id=workflow.id,
            name=options.first_stage,
            position=0,
            campaign_id=first.id,
            source="items",
            kind="rounds" if rounds_first else "single",
        )
    ]
    minimum = first_cost
    for position, stage in enumerate(options.stages, start=1):
        child_spec = stage_spec(spec, stage)
        campaign = _bare_campaign(session, child_spec["name"], child_spec, media_path)
        stages.append(
            WorkflowStage(
                workflow_id=workflow.id,
                name=stage.name,
                position=position,
                campaign_id=campaign.id,
                source=stage.source,
                kind="rounds",
            )
        )
        minimum += round_cost(child_spec) * len(loaded.items)
    if rounds_first:
        minimum += round_cost(first.spec) * len(loaded.items)
    if minimum > spec.budget:
        raise BudgetExceeded(
            f"workflow {spec.name!r} needs at least {minimum} (the first stage and one round of each "
            f"of its {len(loaded.items)} pictures in every rounds stage), but its budget is {spec.budget}"
        )
    session.add_all(stages)
    session.flush()
    if not rounds_first and spec.template in SEEDED_TEMPLATES:
        add_picture_rows(session, stages[0], loaded.items)
    for stage_row in stages:
        if stage_row.kind != "rounds":
            continue
        for item in loaded.items:
            image = {"image": item.payload.get("image", ""), "alt": item.payload.get("alt", "")}
            chain = Chain(stage_id=stage_row.id, key=item.external_id, image=image, status="waiting")
            if stage_row.source == "items" and item.payload.get("previous"):
                chain.seed_text, chain.seed_source = str(item.payload["previous"]), "items file"
            session.add(chain)
    session.flush()
    return workflow


def _check_seeder(options: WorkflowOptions, base_dir: Path) -> None:
    """Refuse (``ValueError``) a seeder that cannot work: unknown kind, missing file, refused address."""
    try:
        make_seeder(options.seeder, base_dir)
    except SeederError as exc:
        raise ValueError(f"workflow.seeder: {exc}") from exc
    if options.seeder.kind == "file" and options.seeder.path:
        seeds = (base_dir / options.seeder.path).resolve()
        if not seeds.is_file():
            raise ValueError(f"workflow.seeder: the seeds file {seeds} does not exist")


def _bare_campaign(
    session: Session, name: str, spec_json: dict[str, Any], media_path: str | None
) -> Campaign:
    """A stage campaign with no HITs planned: its rounds' HITs come as its chains advance."""
    if session.scalar(select(Campaign.id).where(Campaign.name == name)) is not None:
        raise CampaignExists(f"a campaign named {name!r} already exists", resumable=False)
    campaign = Campaign(
        name=name,
        template=spec_json["template"],
        spec={**spec_json, "media_path": media_path},
        budget=Decimal(str(spec_json["budget"])),
        status="draft",
    )
    session.add(campaign)
    session.flush()
    return campaign


def rounds_policy(workflow: Workflow, stage: WorkflowStage) -> RoundsPolicy:
    """The stopping rule of a rounds stage."""
    options = WorkflowOptions.model_validate(workflow.spec["workflow"])
    if stage.position == 0:
        return options.rounds or RoundsPolicy()
    return options.stages[stage.position - 1].rounds or RoundsPolicy()
