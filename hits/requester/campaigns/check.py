"""What a campaign file would do, worked out before anything is stored or paid.

``hitforge campaign check`` and ``hitforge launch`` both read a campaign file
through :func:`check_campaign_file` and print :func:`plan_lines`: the HITs,
their items and gold, and the cost with the marketplace's fees against the
budget. Nothing here opens a database or speaks to the marketplace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from hits.money import dollars, mturk_fee
from hits.requester.campaigns.service import campaign_warnings, launch_cost
from hits.requester.files.campaign import CampaignFile, hit_count_for, load_campaign_file
from hits.requester.pages.gold import page_plans


@dataclass(frozen=True)
class CampaignPlan:
    """The figures of a campaign's plan, as ``create_campaign`` would make it."""

    name: str
    template: str
    items: int
    gold_items: int
    hits: int
    assignments_per_hit: int
    items_per_hit: int
    #: Items on the last HIT (fewer than ``items_per_hit`` when the items do not divide evenly).
    last_hit_items: int
    #: Gold slots on each HIT: ``gold_per_hit``, or fewer when the gold file holds fewer items.
    gold_per_hit: int
    reward: Decimal
    fee: Decimal
    cost: Decimal
    budget: Decimal
    #: Practice items (``training:``): shown to workers, never HITs, paid or graded.
    training_items: int = 0
    #: Adaptive gold: how the HITs split between newcomers and trusted workers, in words.
    adaptive_gold: str = ""

    @property
    def assignments(self) -> int:
        return self.hits * self.assignments_per_hit

    @property
    def left(self) -> Decimal:
        """What the plan leaves of the budget (negative: over it)."""
        return self.budget - self.cost

    @property
    def over_budget(self) -> bool:
        return self.cost > self.budget


def plan_for(loaded: CampaignFile) -> CampaignPlan:
    """The plan of a loaded campaign file (the same counts and cost ``create_campaign`` uses)."""
    spec = loaded.spec
    hits = hit_count_for(spec, len(loaded.items))
    last = len(loaded.items) - (hits - 1) * spec.items_per_hit if hits else 0
    adaptive = ""
    if spec.adaptive_gold is not None and hits:
        a = spec.adaptive_gold
        plans = page_plans(len(loaded.items), spec.items_per_hit, spec.gold_per_hit, a.counts())
        last = plans[-1].items
        trusted = sum(p.for_trusted for p in plans)
        page = spec.items_per_hit + spec.gold_per_hit
        adaptive = (
            f"{hits - trusted} HITs for anyone with {a.newcomers} gold of {page} slots, {trusted} for "
            f"trusted workers with {a.trusted}; trust after {a.trust_after_gold} gold answers"
        )
    return CampaignPlan(
        name=spec.name,
        template=spec.template,
        items=len(loaded.items),
        gold_items=len(loaded.gold),
        hits=hits,
        assignments_per_hit=spec.assignments_per_hit,
        items_per_hit=spec.items_per_hit,
        last_hit_items=last,
        gold_per_hit=min(spec.gold_per_hit, len(loaded.gold)),
        reward=spec.reward,
        fee=mturk_fee(spec.reward, max_assignments=spec.assignments_per_hit),
        cost=launch_cost(spec, hits),
        budget=spec.budget,
        training_items=len(spec.training),
        adaptive_gold=adaptive,
    )


@dataclass
class CheckedCampaign:
    """A campaign file that passed every check ``launch`` makes before storing it."""

    loaded: CampaignFile
    plan: CampaignPlan
    warnings: list[str] = field(default_factory=list)


def check_campaign_file(path: str | Path) -> CheckedCampaign:
    """Load and check a campaign file as ``launch`` does, and plan it.

    Raises ``InputFileError(s)`` for mistakes in the files (file, line, field).
    An over-budget plan is returned, not raised (``over_budget``), so both
    commands print its figures first (``create_campaign`` refuses it).
    """
    loaded = load_campaign_file(Path(path))
    return CheckedCampaign(loaded, plan_for(loaded), campaign_warnings(loaded))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def plan_lines(plan: CampaignPlan) -> list[str]:
    """The plan in lines a requester reads before paying (``campaign check`` and ``launch`` print them)."""
    per_hit = _plural(plan.items_per_hit, "item")
    if plan.last_hit_items != plan.items_per_hit:
        per_hit += f" ({plan.last_hit_items} on the last HIT)"
    per_assignment = plan.reward + plan.fee
    lines = [
        f"campaign:     {plan.name} (template {plan.template})",
        f"items:        {plan.items} in the items file, {plan.gold_items} in the gold file",
        *(
            [f"training:     {_plural(plan.training_items, 'practice item')} (never paid or graded)"]
            if plan.training_items
            else []
        ),
        f"HITs:         {plan.hits}",
        f"per HIT:      {per_hit} + {plan.gold_per_hit} gold, "
        f"{_plural(plan.assignments_per_hit, 'assignment')}",
        *([f"adaptive:     {plan.adaptive_gold}"] if plan.adaptive_gold else []),
        f"assignments:  {plan.assignments}",
        f"reward:       {dollars(plan.reward)} per assignment + {dollars(plan.fee)} fee "
        f"= {dollars(per_assignment)}",
        f"rewards:      {dollars(plan.reward * plan.assignments)}",
        f"fees:         {dollars(plan.fee * plan.assignments)}",
        f"total cost:   {dollars(plan.cost)}",
        f"budget:       {dollars(plan.budget)}",
    ]
    if plan.over_budget:
        lines.append(f"over budget:  {dollars(-plan.left)}")
    else:
        lines.append(
            f"left:         {dollars(plan.left)} (for re-posts and bonuses, if the policy makes any)"
        )
    return lines
