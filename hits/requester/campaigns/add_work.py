"""Add work to a running campaign: more items, cut into more HITs, within its budget.

The new items are checked as a launch checks them (file, line and field), must
not reuse an id the campaign has, and their HITs (with the campaign's gold laid
out afresh) must fit in what the budget leaves once everything committed so far
is counted. Flushes, never commits: the caller owns the transaction, then
publishes the new HITs (``service.publish_campaign`` publishes exactly the HITs
not published yet, so an interrupted publication resumes like a launch).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.money import dollars
from hits.requester.campaigns.control import ControlRefused, log_change
from hits.requester.campaigns.service import plan_hits, planned_cost
from hits.requester.files.campaign import CampaignSpec, hit_count_for, load_items
from hits.requester.quality.followups import committed_cost
from hits.requester.tables.campaigns import Campaign, GoldItem, Item, PublishedHIT, next_item_position
from hits.requester.tables.workflows import Workflow, WorkflowStage

#: The ids of clashing items named in a refusal (the rest are counted).
_SHOWN_IDS = 5


@dataclass(frozen=True)
class AddedWork:
    """What was added: items, the HITs they make, and what those cost with fees."""

    items: int
    hits: int
    cost: Decimal

    def said(self, name: str) -> str:
        """The change in words."""
        return (
            f"Campaign {name}: {self.items} items added in {self.hits} new HITs, "
            f"{dollars(self.cost)} with fees"
        )


def add_work(
    session: Session, campaign: Campaign, items_file: str | Path, staff_id: int, note: str = ""
) -> AddedWork:
    """Store the items of ``items_file`` in ``campaign`` (locked here) and plan their HITs.

    Refused (``ControlRefused``) for a campaign that is not running, for a workflow's
    stage (its items come from the workflow), for ids it already has, and for work its
    budget cannot pay; a bad file raises the loader's ``InputFileError(s)``.
    """
    locked = session.scalar(
        select(Campaign)
        .where(Campaign.id == campaign.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    assert locked is not None
    if locked.status != "running":
        raise ControlRefused(
            f"campaign {locked.name!r} is {locked.status}: work is added only to a running campaign"
            + (" (resume it first)" if locked.status == "paused" else "")
        )
    stage = session.execute(
        select(WorkflowStage.name, Workflow.name)
        .join(Workflow, Workflow.id == WorkflowStage.workflow_id)
        .where(WorkflowStage.campaign_id == locked.id)
    ).first()
    if stage is not None:
        # A stage's items are made by its workflow (from the items file or an earlier stage's
        # results, a round at a time, under the workflow's lock): items added by hand would belong
        # to no chain, and would race the rounds for the campaign's next positions.
        raise ControlRefused(
            f"campaign {locked.name!r} is the {stage[0]!r} stage of workflow {stage[1]!r}: its items "
            "are made by the workflow, so work is not added to it by hand"
        )
    loaded = load_items(items_file, locked.template)
    wanted = [i.external_id for i in loaded]
    clashes = [
        external
        for start in range(0, len(wanted), 500)
        for external in session.scalars(
            select(Item.external_id).where(
                Item.campaign_id == locked.id, Item.external_id.in_(wanted[start : start + 500])
            )
        )
    ]
    if clashes:
        shown = ", ".join(repr(c) for c in sorted(clashes)[:_SHOWN_IDS])
        more = f" and {len(clashes) - _SHOWN_IDS} more" if len(clashes) > _SHOWN_IDS else ""
        raise ControlRefused(f"{items_file}: the campaign has items with these ids already: {shown}{more}")
    spec = CampaignSpec.model_validate({k: v for k, v in locked.spec.items() if k != "media_path"})
    hits = hit_count_for(spec, len(loaded))
    cost = planned_cost(spec, hits)
    committed = committed_cost(session, locked)
    if committed + cost > locked.budget:
        raise ControlRefused(
            f"{hits} more HITs cost {dollars(cost)} with fees, but the budget of {dollars(locked.budget)} "
            f"leaves {dollars(locked.budget - committed)} once {dollars(committed)} committed is counted: "
            f"raise it first (hitforge campaign budget {locked.name} AMOUNT)"
        )
    # After the campaign's last item: no other transaction adds to it while its row is locked above
    # (on SQLite, writers take turns anyway).
    first = next_item_position(session, locked.id)
    rows = [
        Item(campaign_id=locked.id, position=first + n, external_id=i.external_id, payload=i.payload)
        for n, i in enumerate(loaded)
    ]
    session.add_all(rows)
    session.flush()
    gold = list(
        session.scalars(select(GoldItem).where(GoldItem.campaign_id == locked.id).order_by(GoldItem.id))
    )
    earlier = int(
        session.scalar(
            select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == locked.id)
        )
        or 0
    )
    plan_hits(session, locked, spec, rows, gold, batch=earlier)
    added = AddedWork(len(rows), hits, cost)
    log_change(
        session,
        locked.id,
        staff_id,
        "add work",
        f"{len(rows)} items from {Path(items_file).name}; {note}".rstrip("; "),
    )
    session.flush()
    return added
