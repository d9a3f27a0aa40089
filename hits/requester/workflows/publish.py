"""The workflow's API side: seeding chains and creating round HITs, each exactly once.

Run by a Celery task (or the CLI), never in a web request: seeders may be
slow models, and the marketplace is called with no transaction open.

A round's HIT is created with a UniqueRequestToken derived from its HIT row
(``hitforge-c<campaign>-h<row>``, as for every campaign): a retried or
concurrent publish of the same row gets ``HITAlreadyExists`` and records
the HIT the marketplace has. Its ExternalQuestion URL carries the round's
page token (``hits.requester.pages.urls``), so its page is served before its id is
recorded here. Before the HIT exists, everyone who has worked
on the picture is given the chain's exclusion qualification, and the HIT
requires that qualification not to exist (guarding discovery, preview and
accept): the marketplace itself keeps them out, however they accept.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.campaigns.service import create_external_hit
from hits.requester.files.campaign import CampaignSpec
from hits.requester.mturk import Marketplace, MarketplaceError
from hits.requester.pages.urls import question_url
from hits.requester.quality import pipeline, sync_queue
from hits.requester.seeders import Seeder, SeederError, make_seeder, seed_text
from hits.requester.tables.campaigns import Campaign, PublishedHIT
from hits.requester.tables.workflows import Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.workflows.engine import advance
from hits.requester.workflows.exposures import excluded_workers
from hits.requester.workflows.first_stage import (
    publish_first_stage,
    seed_first_stage,
    seeder_setup,
    seeds_from_json,
)

log = logging.getLogger(__name__)


@dataclass
class StepReport:
    """What one workflow step did."""

    seeded: int = 0
    created: int = 0
    published: int = 0
    errors: list[str] = field(default_factory=list)
    finished: bool = False
    #: Decisions made while syncing rounds' HITs, and redos of rejected work, to apply through the outbox.
    outbox: list[int] = field(default_factory=list)


def run_step(
    sessions: Callable[[], Session], market: Marketplace, workflow_id: int, hit_page_url: str
) -> StepReport:
    """Seed and publish Task 1, advance the workflow, seed what waits for seeds, advance again, publish."""
    report = StepReport()
    # Task 1's pictures first: its HITs go out once every picture has its seeded objects.
    report.seeded, errors = seed_first_stage(sessions, workflow_id)
    report.errors.extend(errors)
    report.published, errors = publish_first_stage(sessions, market, workflow_id, hit_page_url)
    report.errors.extend(errors)
    report.outbox = sync_reviewable_rounds(sessions, market, workflow_id)
    with session_scope(sessions) as session:
        first = advance(session, workflow_id)
    if first.need_seeds:
        seeded, errors = seed_chains(sessions, workflow_id, first.need_seeds)
        report.seeded += seeded
        report.errors.extend(errors)
        with session_scope(sessions) as session:
            again = advance(session, workflow_id)
        first.new_rounds += again.new_rounds
        first.outbox += again.outbox
        first.finished = again.finished
    report.outbox += first.outbox
    report.created = len(first.new_rounds)
    report.finished = first.finished
    published, errors = publish_rounds(sessions, market, workflow_id, hit_page_url)
    report.published += published
    report.errors.extend(errors)
    return report


def sync_reviewable_rounds(
    sessions: Callable[[], Session], market: Marketplace, workflow_id: int
) -> list[int]:
    """Sync the workflow's open rounds whose HITs the marketplace lists as reviewable; outbox ids.

    Each round's HIT has a HIT type of its own (its exclusion requirement), so
    the pipeline's per-type listing sees only the stage's latest type, and
    notices the others only when their HIT page stored the answer. Work that
    reached the marketplace another way (posted straight to externalSubmit) is
    found here: one listing of all the requester's reviewable HITs, paged.
    """
    with session_scope(sessions) as session:
        mine = set(
            session.scalars(
                select(PublishedHIT.mturk_hit_id)
                .join(ChainRound, ChainRound.published_hit_id == PublishedHIT.id)
                .join(Chain, Chain.id == ChainRound.chain_id)
                .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
                .where(
                    WorkflowStage.workflow_id == workflow_id,
                    ChainRound.status == "open",
                    PublishedHIT.status == "open",
                    PublishedHIT.mturk_hit_id.is_not(None),
                )
            )
        )
    if not mine:
        return []
    snapshots = {
        h["HITId"]: pipeline.hit_snapshot(h)
        for page in market.all_reviewable_hit_pages()
        for h in page
        if h["HITId"] in mine
    }
    if not snapshots:
        return []
    with session_scope(sessions) as session:
        # Marked as queued, so the pipeline's own sync of the same HITs waits its turn.
        targets = sync_queue.hits_to_sync(session, market.access_key_id, set(snapshots), unsynced_too=False)
    if not targets:
        return []
    fetched = pipeline.fetch_hits(market, targets, known=snapshots)
    with session_scope(sessions) as session:
        return pipeline.review_hits(session, fetched)


def seed_chains(
    sessions: Callable[[], Session], workflow_id: int, chain_ids: list[int]
) -> tuple[int, list[str]]:
    """Ask the workflow's seeder for each chain's seeds (no transaction open); store the first text.

    A chain seeded meanwhile by another task keeps its text. A seeder that
    fails every try leaves the chain waiting, with the error recorded on it,
    to be tried again on a later step.
    """
    with session_scope(sessions) as session:
        workflow = session.get(Workflow, workflow_id)
        assert workflow is not None
        setup = seeder_setup(workflow)
        todo = [
            (c.id, c.key, dict(c.image))
            for c in session.scalars(select(Chain).where(Chain.id.in_(chain_ids), Chain.seed_text.is_(None)))
        ]
    seeder: Seeder | None = None
    seeded: dict[int, tuple[str, str]] = {}
    errors: list[str] = []
    for chain_id, key, image in todo:
        kept = image.get("seeds")
        try:
            if isinstance(kept, dict):  # asked for already, when Task 1 was seeded: not asked again
                seeds, source = seeds_from_json(kept), str(image.get("seeds_from") or "seeder")
            else:
                seeder = seeder or make_seeder(setup.options, setup.base_dir)
                seeds, source = setup.call(seeder, setup.picture(key, image)), f"seeder {setup.options.kind}"
        except SeederError as exc:
            errors.append(str(exc))
            continue
        upstream = image.get("upstream")
        text = seed_text(seeds, upstream if isinstance(upstream, list) else None)
        seeded[chain_id] = (text or "A picture.", source + (" + upstream stage" if upstream else ""))
    with session_scope(sessions) as session:
        for chain in session.scalars(select(Chain).where(Chain.id.in_(list(seeded)))):
            if chain.seed_text is None:
                chain.seed_text, chain.seed_source = seeded[chain.id]
        for chain_id, _key, _image in todo:
            if chain_id not in seeded:
                failed = session.get(Chain, chain_id)
                if failed is not None:
                    failed.stop_reason = f"waiting for seeds: {errors[-1] if errors else 'no seeds'}"[:2000]
    return len(seeded), errors


@dataclass(frozen=True)
class PendingRound:
    """A round whose HIT is not recorded yet: what creating it needs."""

    round_id: int
    chain_id: int
    published_id: int
    campaign_id: int
    spec: dict[str, Any]
    qualification_id: str | None
    workers: list[str]
    label: str
    request_token: str
    page_token: str | None


def pending_rounds(session: Session, workflow_id: int) -> list[PendingRound]:
    """Rounds whose HIT is not on the marketplace yet, with whom each must exclude."""
    rows = session.execute(
        select(ChainRound, Chain, WorkflowStage, PublishedHIT)
        .join(Chain, Chain.id == ChainRound.chain_id)
        .join(WorkflowStage, WorkflowStage.id == Chain.stage_id)
        .join(PublishedHIT, PublishedHIT.id == ChainRound.published_hit_id)
        .where(WorkflowStage.workflow_id == workflow_id, PublishedHIT.mturk_hit_id.is_(None))
        .order_by(ChainRound.id)
    ).all()
    out = []
    for rnd, chain, stage, published in rows:
        campaign = session.get(Campaign, stage.campaign_id)
        assert campaign is not None
        out.append(
            PendingRound(
                rnd.id,
                chain.id,
                published.id,
                campaign.id,
                dict(campaign.spec),
                chain.exclusion_qualification_id,
                excluded_workers(session, chain),
                f"{campaign.name} picture {chain.id}",
                published.unique_request_token,
                published.page_token,
            )
        )
    return out


def publish_rounds(
    sessions: Callable[[], Session], market: Marketplace, workflow_id: int, hit_page_url: str
) -> tuple[int, list[str]]:
    """Create every pending round HIT of the workflow through the API; (created or found, errors)."""
    with session_scope(sessions) as session:
        pending = pending_rounds(session, workflow_id)
    done, errors = 0, []
    for p in pending:
        try:
            hit = create_round_hit(sessions, market, p, hit_page_url)
        except MarketplaceError as exc:
            errors.append(f"round {p.round_id}: {exc}")
            log.warning("publishing round %s failed: %s", p.round_id, exc)
            continue
        record_round_hit(sessions, p, hit, market.access_key_id)
        done += 1
    return done, errors


def record_round_hit(
    sessions: Callable[[], Session], p: PendingRound, hit: dict[str, Any], access_key_id: str
) -> None:
    """Record a created round HIT's id on its row (the page is served before this too: ``pages``)."""
    with session_scope(sessions) as session:
        row = session.get(PublishedHIT, p.published_id)
        campaign = session.get(Campaign, p.campaign_id)
        assert row is not None and campaign is not None
        row.mturk_hit_id, row.status = hit["HITId"], "open"
        campaign.hit_type_id = hit["HITTypeId"]
        campaign.access_key_id = access_key_id
        if campaign.status != "running":
            campaign.status = "running"  # new work: the stage campaign is reviewed again


def create_round_hit(
    sessions: Callable[[], Session], market: Marketplace, p: PendingRound, hit_page_url: str
) -> dict[str, Any]:
    """Exclude the picture's earlier workers, then create the round's HIT (once, by its token).

    Its ExternalQuestion URL carries the round's page token, so the page is
    served from the moment the HIT exists, before :func:`record_round_hit`
    (the stage campaign's access key, which vouches for the HIT then, is
    recorded first).
    """
    qualification_id = p.qualification_id
    if qualification_id is None:
        # Named by the chain's row only: it says nothing of who wrote the text a worker will see.
        qualification_id = market.ensure_qualification_type(
            f"hitforge {p.label}: worked on",
            "Workers who have already worked on this picture (each sees it once).",
        )
    with session_scope(sessions) as session:
        chain = session.get(Chain, p.chain_id)
        campaign = session.get(Campaign, p.campaign_id)
        assert chain is not None and campaign is not None
        chain.exclusion_qualification_id = qualification_id
        campaign.access_key_id = market.access_key_id
    for worker_id in p.workers:
        market.associate_qualification(qualification_id, worker_id, 1)  # idempotent on the marketplace
    spec = CampaignSpec.model_validate({k: v for k, v in p.spec.items() if k != "media_path"})
    requirements = [
        *spec.qualification_requirements,
        {
            "QualificationTypeId": qualification_id,
            "Comparator": "DoesNotExist",
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
    ]
    url = question_url(hit_page_url, p.page_token)
    hit, _created = create_external_hit(market, spec, p.request_token, url, 1, requirements, frame_height=900)
    return hit


def running_workflows(session: Session, access_key_id: str) -> list[int]:
    """Ids of the running workflows launched with ``access_key_id`` (only its holder may act on them)."""
    return list(
        session.scalars(
            select(Workflow.id)
            .where(Workflow.status == "running", Workflow.access_key_id == access_key_id)
            .order_by(Workflow.id)
        )
    )
