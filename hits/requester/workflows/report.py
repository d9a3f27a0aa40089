"""What a workflow looks like now: its stage graph, each picture's state, and the per-round record."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.quality.pipeline import VOID
from hits.requester.tables.campaigns import Campaign, HITSlot, Item, OutboxEntry, PublishedHIT, Submission
from hits.requester.tables.workflows import Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.workflows.engine import stages_of, workflow_committed
from hits.requester.workflows.exposures import excluded_workers
from hits.requester.workflows.upstream import unfinished_keys


@dataclass
class StageView:
    name: str
    template: str
    source: str
    kind: str
    campaign: str
    campaign_status: str
    hits: int
    chains: dict[str, int] = field(default_factory=dict)


@dataclass
class ChainView:
    id: int
    stage: str
    key: str
    status: str
    rounds_approved: int
    attempts: int
    waiting_on: str
    stop_reason: str | None
    last_jaccard: float | None


@dataclass
class ItemView:
    """A picture of a single (non-rounds) stage such as Task 1: seeds, assignments, what it waits on."""

    stage: str
    key: str
    state: str
    assignments: int
    submitted: int
    approved: int
    rejected: int
    held: int
    waiting_on: str
    note: str = ""


@dataclass
class WorkflowView:
    id: int
    name: str
    status: str
    budget: str
    committed: str
    stages: list[StageView]
    chains: list[ChainView]
    items: list[ItemView] = field(default_factory=list)


def find_workflow(session: Session, name: str) -> Workflow | None:
    return session.scalar(select(Workflow).where(Workflow.name == name))


def workflow_view(session: Session, workflow: Workflow) -> WorkflowView:
    """The stage graph, with counts, and every chain's state and what it waits on."""
    stages = stages_of(session, workflow.id)
    views = []
    for stage in stages:
        campaign = session.get(Campaign, stage.campaign_id)
        assert campaign is not None
        hits = session.scalar(
            select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == campaign.id)
        )
        counts = dict(
            session.execute(
                select(Chain.status, func.count()).where(Chain.stage_id == stage.id).group_by(Chain.status)
            ).all()
        )
        views.append(
            StageView(
                stage.name,
                campaign.template,
                stage.source,
                stage.kind,
                campaign.name,
                campaign.status,
                int(hits or 0),
                {k: int(v) for k, v in counts.items()},
            )
        )
    return WorkflowView(
        workflow.id,
        workflow.name,
        workflow.status,
        str(workflow.budget),
        str(workflow_committed(session, workflow)),
        views,
        chain_views(session, [s for s in stages if s.kind == "rounds"]),
        [v for s in stages if s.kind == "single" for v in item_views(session, s)],
    )


def item_views(session: Session, stage: WorkflowStage) -> list[ItemView]:
    """Per picture of a single stage: seeding, then assignments in and decided, and what it waits on."""
    campaign = session.get(Campaign, stage.campaign_id)
    assert campaign is not None
    per_hit = int(campaign.spec.get("assignments_per_hit") or 1)
    rows = {c.key: c for c in session.scalars(select(Chain).where(Chain.stage_id == stage.id))}
    # A rejected assignment the workflow offered again adds one to what its HIT asks for.
    reposted = set(
        session.scalars(
            select(OutboxEntry.target).where(
                OutboxEntry.campaign_id == campaign.id, OutboxEntry.action == "repost"
            )
        )
    )
    expected: dict[int, int] = defaultdict(lambda: per_hit)
    decisions: dict[int, list[str]] = defaultdict(list)
    for item_id, assignment_id, decision in session.execute(
        select(HITSlot.item_id, Submission.assignment_id, Submission.decision)
        .join(PublishedHIT, PublishedHIT.id == HITSlot.published_hit_id)
        .join(Submission, Submission.published_hit_id == PublishedHIT.id)
        .where(PublishedHIT.campaign_id == campaign.id, HITSlot.item_id.is_not(None))
    ).all():
        if item_id is None or decision == VOID:
            continue  # VOID: answers the marketplace never confirmed, not work
        decisions[item_id].append(decision or "undecided")
        expected[item_id] += assignment_id in reposted
    out = []
    for item in session.scalars(select(Item).where(Item.campaign_id == campaign.id).order_by(Item.id)):
        row = rows.get(item.external_id)
        mine = decisions.get(item.id, [])
        n = {d: mine.count(d) for d in ("approve", "reject", "held", "undecided")}
        view = ItemView(
            stage.name, item.external_id, "", expected[item.id], len(mine),
            n["approve"], n["reject"], n["held"], "-",
        )  # fmt: skip
        if row is not None and row.status in ("waiting", "seeding"):
            view.state, view.waiting_on, view.note = (
                "waiting for seeds" if row.status == "waiting" else "seeding",
                "seeder",
                row.stop_reason or "",
            )
        elif campaign.status == "draft":
            view.state, view.waiting_on = "not published", "the next step of the pipeline"
        else:
            view.state = f"{len(mine)} of {view.assignments} in, {n['approve']} approved"
            if n["held"]:
                view.waiting_on = "a QA reviewer"
            elif n["undecided"]:
                view.waiting_on = "review of the work in"
            elif len(mine) < view.assignments and campaign.status in ("publishing", "running"):
                view.waiting_on = "workers"
        if row is not None and row.seed_source:
            view.note = view.note or f"seeds: {row.seed_source}"
        out.append(view)
    return out


def chain_views(session: Session, stages: list[WorkflowStage]) -> list[ChainView]:
    names = {s.id: s for s in stages}
    chains = list(
        session.scalars(
            select(Chain).where(Chain.stage_id.in_(list(names))).order_by(Chain.stage_id, Chain.id)
        )
    )
    rounds: dict[int, list[ChainRound]] = defaultdict(list)
    for r in session.scalars(
        select(ChainRound)
        .where(ChainRound.chain_id.in_([c.id for c in chains]))
        .order_by(ChainRound.round, ChainRound.attempt)
    ):
        rounds[r.chain_id].append(r)
    published: dict[int, str | None] = dict(
        session.execute(
            select(PublishedHIT.id, PublishedHIT.mturk_hit_id).where(
                PublishedHIT.id.in_([r.published_hit_id for rs in rounds.values() for r in rs])
            )
        ).all()
    )
    # Pictures whose next round waits for their source stage: a HIT of it still open, or a redo
    # to come (the engine's rule, ``unfinished_keys``), so the status names that, not "the pipeline".
    by_name = {s.name: s for s in stages}
    upstream_busy: dict[int, set[str]] = {}
    for stage in stages:
        source = by_name.get(stage.source)
        keys = [c.key for c in chains if c.stage_id == stage.id]
        upstream_busy[stage.id] = unfinished_keys(session, source, keys) if source is not None else set()
    out = []
    for chain in chains:
        stage = names[chain.stage_id]
        mine = rounds[chain.id]
        approved = [r for r in mine if r.status == "approved"]
        out.append(
            ChainView(
                chain.id,
                stage.name,
                chain.key,
                chain.status,
                len(approved),
                len(mine),
                _waiting_on(
                    chain,
                    stage,
                    mine[-1] if mine else None,
                    published,
                    chain.key in upstream_busy[stage.id],
                    # For an open round: how many the exclusion keeps out. A pool no larger
                    # than this never works the round (MTurk cannot say how many workers there are).
                    len(excluded_workers(session, chain)) if mine and mine[-1].status == "open" else None,
                ),
                chain.stop_reason,
                (approved[-1].metrics or {}).get("jaccard") if approved else None,
            )
        )
    return out


def _waiting_on(
    chain: Chain,
    stage: WorkflowStage,
    latest: ChainRound | None,
    published: dict[int, str | None],
    upstream_busy: bool = False,
    kept_out: int | None = None,
) -> str:
    if chain.status in ("done", "stopped"):
        return "-"
    if chain.status == "waiting":
        if stage.source != "items" and "upstream" not in chain.image:
            return f"stage {stage.source}: approved work on this picture (or its QA review)"
        return "seeder" if chain.seed_text is None else "the next step of the pipeline"
    if latest is None:
        return "the next step of the pipeline"
    where = f"round {latest.round}" + (f" (attempt {latest.attempt})" if latest.attempt > 1 else "")
    if latest.status == "held":
        return f"{where}: a QA reviewer"
    if published.get(latest.published_hit_id) is None:
        return f"{where}: its HIT being created"
    if latest.status in ("approved", "rejected", "expired") and upstream_busy:
        return f"{where}: stage {stage.source}'s open HIT or redo of this picture"
    if latest.status in ("approved", "rejected"):
        return f"{where}: the next step of the pipeline"
    if kept_out:
        return f"{where}: a worker new to the picture ({kept_out} kept out, having seen it)"
    return f"{where}: a worker"


def round_records(session: Session, workflow_id: int, *, all_attempts: bool = False) -> list[dict[str, Any]]:
    """One row per approved round (and, with ``all_attempts``, per rejected or open attempt too)."""
    query = (
        select(ChainRound, Chain.key, WorkflowStage.name)
        .join(Chain, Chain.id == ChainRound.chain_id)
        .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
        .where(WorkflowStage.workflow_id == workflow_id)
        .order_by(WorkflowStage.position, Chain.id, ChainRound.round, ChainRound.attempt)
    )
    if not all_attempts:
        query = query.where(ChainRound.status == "approved")
    out = []
    for rnd, key, stage in session.execute(query).all():
        metrics = rnd.metrics or {}
        pos = metrics.get("pos") or {}
        out.append(
            {
                "stage": stage,
                "item": key,
                "round": rnd.round,
                "attempt": rnd.attempt,
                "status": rnd.status,
                "worker": rnd.worker_id or "",
                "seconds": None if rnd.work_seconds is None else round(rnd.work_seconds, 1),
                "tokens": metrics.get("tokens"),
                "jaccard": metrics.get("jaccard"),
                "edit_distance": metrics.get("edit_distance"),
                **{f"pos_{k}": v for k, v in pos.items()},
            }
        )
    return out


def round_summary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per stage and round number: pictures, and the mean of each figure (how they evolve)."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r["status"] == "approved":
            groups[(r["stage"], r["round"])].append(r)
    out = []
    for (stage, number), rows in sorted(groups.items()):
        row: dict[str, Any] = {"stage": stage, "round": number, "pictures": len(rows)}
        for name in (
            "seconds",
            "tokens",
            "jaccard",
            "edit_distance",
            *sorted({k for r in rows for k in r if k.startswith("pos_")}),
        ):
            values = [float(r[name]) for r in rows if r.get(name) is not None]
            row[name] = round(mean(values), 3) if values else None
        out.append(row)
    return out
