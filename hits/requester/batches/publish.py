"""Publishing a batch: one HITType, then one HTMLQuestion HIT per stored row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.requester.batches.plan import batch_settings
from hits.requester.mturk import HITAlreadyExists, Marketplace
from hits.requester.tables.batches import Batch, BatchRow
from hits.requester.tables.campaigns import Campaign, GoldItem, PublishedHIT
from hits.wire.layout import html_question, substitute


@dataclass
class PublishReport:
    """HITs created by this run, and those a previous, interrupted run had created."""

    published: int
    already_there: int


def publish_batch(
    sessions: Callable[[], Session],
    market: Marketplace,
    batch_id: int,
    progress: Callable[[int, int], None] | None = None,
) -> PublishReport:
    """Create the batch's HITType (once) and a HIT for every row that has none yet.

    One transaction per HIT, none open during a call. Safe to run again after
    a failure half way: each row's token derives from its id, and a HIT the
    marketplace made but whose id was never recorded is found by its
    annotation (the same token) and recorded.
    """
    with session_scope(sessions) as session:
        batch = session.get(Batch, batch_id)
        if batch is None:
            raise ValueError(f"batch {batch_id} does not exist")
        campaign = session.get(Campaign, batch.campaign_id)
        assert campaign is not None
        if campaign.access_key_id not in (None, market.access_key_id):
            raise ValueError(f"batch {batch.name!r} was published with another access key")
        settings = batch_settings(batch)
        layout, hit_type_id = batch.layout, batch.hit_type_id
        # Without gold rows the review pipeline has nothing to judge by: the requester reviews
        # the results file, as on MTurk, and the HITs are left out of the pipeline's syncs.
        reviewed = session.scalar(select(GoldItem.id).where(GoldItem.campaign_id == campaign.id).limit(1))
        pending = [
            (row.id, dict(row.inputs))
            for row in session.scalars(
                select(BatchRow)
                .where(BatchRow.batch_id == batch_id, BatchRow.mturk_hit_id.is_(None))
                .order_by(BatchRow.position)
            )
        ]
    if hit_type_id is None:
        hit_type_id = market.create_hit_type(
            reward=settings.reward,
            Title=settings.title,
            Description=settings.description,
            Keywords=settings.keywords,
            AssignmentDurationInSeconds=settings.assignment_duration_seconds,
            AutoApprovalDelayInSeconds=settings.auto_approval_delay_seconds,
            QualificationRequirements=settings.qualification_requirements,
        )
        with session_scope(sessions) as session:
            batch = session.get(Batch, batch_id)
            campaign = session.get(Campaign, batch.campaign_id) if batch else None
            assert batch is not None and campaign is not None
            batch.hit_type_id = campaign.hit_type_id = hit_type_id
            # Recorded before any HIT exists: the outbox applies decisions only with this key.
            campaign.access_key_id = market.access_key_id
    report = PublishReport(0, 0)
    for done, (row_id, inputs) in enumerate(pending, start=1):
        token = f"hitforge-b{batch_id}-r{row_id}"
        try:
            hit = market.create_hit_with_hit_type(
                unique_request_token=token,
                HITTypeId=hit_type_id,
                MaxAssignments=settings.assignments,
                LifetimeInSeconds=settings.lifetime_seconds,
                Question=html_question(substitute(layout, inputs), settings.frame_height),
                RequesterAnnotation=token,
            )
            report.published += 1
        except HITAlreadyExists:
            found = market.find_hit_by_annotation(token)
            if found is None:
                raise
            hit = found
            report.already_there += 1
        with session_scope(sessions) as session:
            row = session.get(BatchRow, row_id)
            assert row is not None
            row.mturk_hit_id = hit["HITId"]
            published = session.get(PublishedHIT, row.published_hit_id) if row.published_hit_id else None
            if published is not None:
                published.mturk_hit_id = hit["HITId"]
                if reviewed is not None:
                    # Open: the review pipeline syncs, grades and decides its work from now on.
                    published.status = "open"
        if progress:
            progress(done, len(pending))
    return report
