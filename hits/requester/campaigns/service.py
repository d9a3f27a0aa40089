"""Creating campaigns from their files, planning HITs and publishing them."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any
from xml.sax.saxutils import escape

from pydantic_core import to_jsonable_python
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.db import session_scope
from hits.money import mturk_fee
from hits.requester.files.campaign import CampaignFile, CampaignSpec, hit_count_for
from hits.requester.files.recruit import places_needed
from hits.requester.mturk import Marketplace, MarketplaceError
from hits.requester.pages.gold import page_plans, pool_shortfall
from hits.requester.pages.urls import question_url
from hits.requester.tables.campaigns import Campaign, GoldItem, HITSlot, Item, PublishedHIT

EXTERNAL_QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL>'
    "<FrameHeight>{height}</FrameHeight></ExternalQuestion>"
)


class BudgetExceeded(ValueError):
    """Launching would commit more money than the campaign's budget."""


#: Campaign states in which some HITs may still be unpublished: a launch can be resumed.
RESUMABLE = ("draft", "publishing")


class CampaignExists(ValueError):
    """A campaign of that name exists already (``resumable`` if publishing it stopped half way)."""

    def __init__(self, message: str, *, resumable: bool):
        super().__init__(message)
        self.resumable = resumable


class PublishInterrupted(Exception):
    """Publishing stopped on a marketplace error; what is published stays recorded."""

    def __init__(self, campaign_name: str, published: int, total: int, cause: MarketplaceError):
        self.campaign_name, self.published, self.total, self.cause = campaign_name, published, total, cause
        super().__init__(
            f"publishing campaign {campaign_name!r} stopped with {published} of {total} HITs "
            f"published: {cause}"
        )


def unpublished_count(session: Session, campaign_id: int) -> int:
    """HITs of a campaign planned but not yet created on the marketplace."""
    return int(
        session.scalar(
            select(func.count())
            .select_from(PublishedHIT)
            .where(PublishedHIT.campaign_id == campaign_id, PublishedHIT.mturk_hit_id.is_(None))
        )
        or 0
    )


def campaign_to_resume(session: Session, name: str) -> Campaign:
    """The campaign ``name`` whose launch stopped half way, to publish the rest of its HITs.

    Raises ``ValueError`` naming the campaign's state when there is nothing to resume.
    """
    campaign = session.scalar(select(Campaign).where(Campaign.name == name))
    if campaign is None:
        raise ValueError(f"there is no campaign named {name!r} to resume")
    if campaign.status not in RESUMABLE or not unpublished_count(session, campaign.id):
        raise ValueError(f"campaign {name!r} is {campaign.status}: all its HITs are published already")
    return campaign


def changed_fields(campaign: Campaign, spec: CampaignSpec) -> list[str]:
    """Top-level fields of ``spec`` that differ from what ``campaign`` was created with."""
    stored = {k: v for k, v in campaign.spec.items() if k != "media_path"}
    fresh = spec.model_dump(mode="json")

    def added_since_at_default(key: str) -> bool:
        # A field added after the campaign was stored (allow_gold_reuse, say) meant its default then.
        known = CampaignSpec.model_fields.get(key)
        return (
            key not in stored
            and known is not None
            and not known.is_required()
            and to_jsonable_python(known.get_default(call_default_factory=True)) == fresh.get(key)
        )

    return sorted(
        k
        for k in stored.keys() | fresh.keys()
        if stored.get(k) != fresh.get(k) and not added_since_at_default(k)
    )


def planned_cost(spec: CampaignSpec, hit_count: int) -> Decimal:
    """Rewards plus MTurk fees for every assignment of ``hit_count`` HITs."""
    per_assignment = spec.reward + mturk_fee(spec.reward, max_assignments=spec.assignments_per_hit)
    return per_assignment * spec.assignments_per_hit * hit_count


def estimated_study_cost(spec: CampaignSpec, hit_count: int) -> Decimal:
    """What a Prolific study's places will cost in dollars, with Prolific's fee estimated at the
    bonus fee rate; 0 without one. Launch asks Prolific for the real figure and counts that."""
    recruit = spec.recruit
    if recruit is None or recruit.platform != "prolific" or recruit.reward is None:
        return Decimal(0)
    places = places_needed(recruit, hit_count, spec.assignments_per_hit)
    rate = recruit.exchange_rate if recruit.currency != "USD" and recruit.exchange_rate else Decimal(1)
    total = Decimal(recruit.reward) * places / 100 * (1 + recruit.bonus_fee_rate)
    return (total / rate).quantize(Decimal("0.01"), rounding=ROUND_CEILING)


def launch_cost(spec: CampaignSpec, hit_count: int) -> Decimal:
    """Everything launching the file commits: its HITs' assignments and fees, and its study's places."""
    return planned_cost(spec, hit_count) + estimated_study_cost(spec, hit_count)


def campaign_warnings(loaded: CampaignFile) -> list[str]:
    """Problems worth telling the requester that do not stop a launch.

    A short gold pool stops a launch unless the file sets ``allow_gold_reuse``;
    with it, the requester is still told what was accepted.
    """
    spec = loaded.spec
    short = pool_shortfall(len(loaded.gold), spec.gold_per_hit, hit_count_for(spec, len(loaded.items)))
    warnings = [f"{short} (allowed by allow_gold_reuse)"] if short else []
    return warnings


def create_campaign(session: Session, loaded: CampaignFile) -> Campaign:
    """Store a validated campaign file and plan its HITs; refuse if over budget."""
    spec = loaded.spec
    existing = session.scalar(select(Campaign).where(Campaign.name == spec.name))
    if existing is not None:
        if existing.status in RESUMABLE and unpublished_count(session, existing.id):
            raise CampaignExists(
                f"campaign {spec.name!r} exists and {unpublished_count(session, existing.id)} of its HITs "
                "are not published yet (its launch stopped half way); "
                f"to publish them, run: hitforge launch --resume {loaded.path}",
                resumable=True,
            )
        raise CampaignExists(f"a campaign named {spec.name!r} already exists", resumable=False)
    hits_needed = hit_count_for(spec, len(loaded.items))
    short = pool_shortfall(len(loaded.gold), spec.gold_per_hit, hits_needed)
    if short and not spec.allow_gold_reuse:
        # load_campaign_file refuses this already, naming the line; this guards callers that build files.
        raise ValueError(f"campaign {spec.name!r}: {short}, or set allow_gold_reuse: true")
    cost = launch_cost(spec, hits_needed)
    if cost > spec.budget:
        study = estimated_study_cost(spec, hits_needed)
        raise BudgetExceeded(
            f"campaign {spec.name!r} needs {cost} for {hits_needed} HITs x "
            f"{spec.assignments_per_hit} assignments at {spec.reward} plus fees"
            + (f" and {study} for its Prolific study's places with Prolific's fees" if study else "")
            + f", but its budget is {spec.budget}"
        )
    stored_spec = spec.model_dump(mode="json")
    stored_spec["media_path"] = str(loaded.media_dir) if loaded.media_dir else None
    campaign = Campaign(name=spec.name, template=spec.template, spec=stored_spec, budget=spec.budget)
    session.add(campaign)
    session.flush()
    items = [
        Item(campaign_id=campaign.id, position=n, external_id=i.external_id, payload=i.payload)
        for n, i in enumerate(loaded.items)
    ]
    gold = [
        GoldItem(campaign_id=campaign.id, external_id=g.external_id, payload=g.payload, answer=g.answer)
        for g in loaded.gold
    ]
    session.add_all([*items, *gold])
    session.flush()
    plan_hits(session, campaign, spec, items, gold)
    return campaign


def plan_hits(
    session: Session,
    campaign: Campaign,
    spec: CampaignSpec,
    items: list[Item],
    gold: list[GoldItem],
    batch: int = 0,
) -> None:
    """Cut items into HITs and insert gold at random positions (seeded, reproducible).

    How many items and gold items each HIT holds is ``pages.gold.page_plans``'
    (with ``adaptive_gold``, HITs for newcomers carry more gold and HITs for
    trusted workers less, on pages of the same size).
    """
    # A later batch of work (``add_work``) gets its own draw: the same seed again would lay the
    # gold out as it did on the first HITs.
    seed = spec.seed or campaign.id
    rng = random.Random(seed if not batch else f"{seed}:{batch}")
    gold_cycle = list(gold)
    rng.shuffle(gold_cycle)
    cursor = start = 0
    adaptive = spec.adaptive_gold.counts() if spec.adaptive_gold else None
    for plan in page_plans(len(items), spec.items_per_hit, spec.gold_per_hit, adaptive):
        chunk: list[Item | GoldItem] = list(items[start : start + plan.items])
        start += plan.items
        for _ in range(min(plan.gold, len(gold_cycle))):
            chunk.insert(rng.randrange(len(chunk) + 1), gold_cycle[cursor % len(gold_cycle)])
            cursor += 1
        published = PublishedHIT(campaign_id=campaign.id, for_trusted=plan.for_trusted)
        session.add(published)
        session.flush()
        for position, entry in enumerate(chunk):
            slot = HITSlot(published_hit_id=published.id, position=position)
            if isinstance(entry, GoldItem):
                slot.gold_item_id = entry.id
            else:
                slot.item_id = entry.id
            session.add(slot)
    session.flush()


@dataclass
class PublishReport:
    published: int
    already_there: int


@dataclass(frozen=True)
class PendingHIT:
    """A planned HIT whose id is not recorded yet: what creating it needs."""

    published_id: int
    request_token: str
    page_token: str | None
    #: Adaptive gold: published under the campaign's trust requirement as well.
    for_trusted: bool = False


@dataclass
class PublishPlan:
    """What publishing a campaign's pending HITs needs, read (and the campaign marked) in one transaction."""

    campaign_name: str
    spec: CampaignSpec
    pending: list[PendingHIT]
    #: HITs of the campaign, published or not.
    total: int
    requirements: list[dict[str, Any]]
    #: Adaptive gold: the requirement HITs for trusted workers carry on top of ``requirements``.
    trusted_requirement: dict[str, Any] | None = None

    def requirements_of(self, p: PendingHIT) -> list[dict[str, Any]]:
        """What HIT ``p`` requires of a worker: the campaign's requirements, and trust if it is for them."""
        if p.for_trusted and self.trusted_requirement is not None:
            return [*self.requirements, self.trusted_requirement]
        return self.requirements


def plan_publishing(sessions: Callable[[], Session], market: Marketplace, campaign_id: int) -> PublishPlan:
    """Mark the campaign publishing with ``market``'s key (before any HIT exists) and list its pending HITs.

    The key is recorded first because a HIT page opened before its HIT's id is
    recorded is vouched for by this requester (``hits.requester.pages.urls``).
    Raises ``PublishInterrupted`` if the soft-block qualification cannot be made.
    """
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        if campaign is None:
            raise ValueError(f"campaign {campaign_id} does not exist")
        spec = CampaignSpec.model_validate({k: v for k, v in campaign.spec.items() if k != "media_path"})
        pending = [
            PendingHIT(row.id, row.unique_request_token, row.page_token, row.for_trusted)
            for row in session.scalars(
                select(PublishedHIT)
                .where(PublishedHIT.campaign_id == campaign_id, PublishedHIT.mturk_hit_id.is_(None))
                .order_by(PublishedHIT.id)
            )
        ]
        if campaign.access_key_id and campaign.access_key_id != market.access_key_id:
            # The pipeline reads a campaign's HITs with the key that created them.
            raise ValueError(
                f"campaign {campaign.name!r} was published with access key {campaign.access_key_id}; "
                "publish the rest with that requester's keys"
            )
        campaign.status = "publishing"
        campaign.access_key_id = market.access_key_id
        plan = PublishPlan(campaign.name, spec, pending, 0, list(spec.qualification_requirements))
        plan.total = int(
            session.scalar(
                select(func.count()).select_from(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)
            )
            or 0
        )
    try:
        if spec.quality.flagged_worker == "soft_block":
            plan.requirements.append(soft_block_requirement(sessions, market, campaign_id, spec))
        if spec.adaptive_gold is not None:
            plan.trusted_requirement = trust_requirement(sessions, market, campaign_id, spec)
    except MarketplaceError as exc:
        raise PublishInterrupted(plan.campaign_name, plan.total - len(pending), plan.total, exc) from exc
    return plan


def publish_campaign(
    sessions: Callable[[], Session],
    market: Marketplace,
    campaign_id: int,
    hit_page_url: str,
    progress: Callable[[int, int], None] | None = None,
) -> PublishReport:
    """Create every pending HIT of a campaign through the API, one transaction per HIT.

    Safe to run again after a crash or a failure (that is how a launch is
    resumed): the token comes from the row, and a HIT the marketplace already
    has is found by its annotation and recorded, so no HIT is created twice.
    A marketplace error raises ``PublishInterrupted`` with what got published.
    """
    plan = plan_publishing(sessions, market, campaign_id)
    earlier = plan.total - len(plan.pending)
    report = PublishReport(0, 0)
    for done, p in enumerate(plan.pending, start=1):
        try:
            hit, created = create_campaign_hit(market, plan.spec, plan.requirements_of(p), p, hit_page_url)
        except MarketplaceError as exc:
            raise PublishInterrupted(plan.campaign_name, earlier + done - 1, plan.total, exc) from exc
        if created:
            report.published += 1
        else:
            report.already_there += 1
        record_campaign_hit(sessions, campaign_id, p.published_id, hit, for_trusted=p.for_trusted)
        if progress:
            progress(done, len(plan.pending))
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        campaign.status = "running"
    return report


def create_campaign_hit(
    market: Marketplace,
    spec: CampaignSpec,
    requirements: list[dict[str, Any]],
    p: PendingHIT,
    hit_page_url: str,
) -> tuple[dict[str, Any], bool]:
    """Create one planned HIT (once, by its token): the HIT, and whether this call created it.

    Its ExternalQuestion URL carries the row's page token, so the page is
    served from the moment the HIT exists, before :func:`record_campaign_hit`.
    """
    url = question_url(hit_page_url, p.page_token)
    return create_external_hit(market, spec, p.request_token, url, spec.assignments_per_hit, requirements)


def create_external_hit(
    market: Marketplace,
    spec: CampaignSpec,
    request_token: str,
    url: str,
    assignments: int,
    requirements: list[dict[str, Any]],
    frame_height: int = 800,
) -> tuple[dict[str, Any], bool]:
    """A HIT with ``spec``'s title, reward and times framing ``url``, made once per ``request_token``.

    The HIT and whether this call created it (``Marketplace.create_hit_once``).
    """
    return market.create_hit_once(
        unique_request_token=request_token,
        reward=spec.reward,
        MaxAssignments=assignments,
        AutoApprovalDelayInSeconds=spec.auto_approval_delay_seconds,
        LifetimeInSeconds=spec.lifetime_seconds,
        AssignmentDurationInSeconds=spec.assignment_duration_seconds,
        Title=spec.title,
        Keywords=spec.keywords,
        Description=spec.description,
        Question=EXTERNAL_QUESTION.format(url=escape(url), height=frame_height),
        QualificationRequirements=requirements,
    )


def record_campaign_hit(
    sessions: Callable[[], Session],
    campaign_id: int,
    published_id: int,
    hit: dict[str, Any],
    *,
    for_trusted: bool = False,
) -> None:
    """Record a created HIT's id on its row: from now on the id finds the row (as the token did before)."""
    with session_scope(sessions) as session:
        row = session.get(PublishedHIT, published_id)
        campaign = session.get(Campaign, campaign_id)
        assert row is not None and campaign is not None
        row.mturk_hit_id = hit["HITId"]
        row.status = "open"
        if for_trusted:
            campaign.trusted_hit_type_id = hit["HITTypeId"]
        else:
            campaign.hit_type_id = hit["HITTypeId"]


def soft_block_requirement(
    sessions: Callable[[], Session], market: Marketplace, campaign_id: int, spec: CampaignSpec
) -> dict[str, Any]:
    """The campaign's block qualification (created once) as a requirement its HITs carry.

    A flagged worker is given the qualification; ``DoesNotExist`` guarding
    discovery, preview and accept then hides the campaign's HITs from them
    without touching their access to anyone else's work.
    """
    return _own_requirement(
        sessions,
        market,
        campaign_id,
        "block_qualification_type_id",
        (f"hitforge block: {spec.name}", f"Workers who may no longer take HITs of the campaign {spec.name}."),
        "DoesNotExist",
    )


def trust_requirement(
    sessions: Callable[[], Session], market: Marketplace, campaign_id: int, spec: CampaignSpec
) -> dict[str, Any]:
    """The campaign's trust qualification (created once) as the requirement its trusted HITs carry.

    ``Exists`` guarding discovery, preview and accept: a worker sees those HITs
    (with less gold) only once the pipeline has granted them the
    qualification (``quality.trust.queue_trust_changes``).
    """
    return _own_requirement(
        sessions,
        market,
        campaign_id,
        "trust_qualification_type_id",
        (
            f"hitforge trusted: {spec.name}",
            f"Workers whose record on the campaign {spec.name} is confidently good.",
        ),
        "Exists",
    )


def _own_requirement(
    sessions: Callable[[], Session],
    market: Marketplace,
    campaign_id: int,
    column: str,
    name_and_description: tuple[str, str],
    comparator: str,
) -> dict[str, Any]:
    """A qualification type of the campaign's own (found by its name, or made), kept in ``column`` of
    its row, as a requirement guarding discovery, preview and accept."""
    qtype_id = market.ensure_qualification_type(*name_and_description)
    with session_scope(sessions) as session:
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        setattr(campaign, column, qtype_id)
    return {
        "QualificationTypeId": qtype_id,
        "Comparator": comparator,
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    }


def campaign_counts(session: Session, campaign_id: int) -> dict[str, int]:
    """HITs published and open for a campaign."""
    rows = session.execute(
        select(PublishedHIT.status, func.count())
        .where(PublishedHIT.campaign_id == campaign_id)
        .group_by(PublishedHIT.status)
    ).all()
    return {status: n for status, n in rows}
