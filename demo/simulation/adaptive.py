"""Adaptive gold by routing, for :mod:`demo.simulation.model_compare`: the plan's two tiers of HIT.

The real system will keep one page size, P = items_per_hit + gold_per_hit, for
every HIT, and vary only how much of the page is gold: a *newcomer* HIT carries
``newcomers`` gold (more, so a new worker's accuracy is known in fewer
assignments), a *trusted* HIT ``trusted`` gold (less, so a worker already known
to be good spends more of the page on real items). The same page size keeps
pay per HIT and time per HIT alike across tiers, which is why the split moves
gold and items rather than adding slots.

Routing, not the page, decides who sees which tier: a trusted HIT may be taken
only by a worker holding the campaign's "trusted" qualification. The plan
interleaves the tiers so that gold placed so far never exceeds
gold_per_hit x HITs so far: the campaign's gold budget (gold per assignment,
which the requester pays for) stays what it was without adaptive gold, at
every point of the plan rather than only on average at the end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

Tier = Literal["plain", "newcomer", "trusted"]
Slot = tuple[str, int]


def next_tier(placed: int, h: int, gold_per_hit: int, adaptive: tuple[int, int]) -> Tier:
    """HIT h's tier, given the gold ``placed`` on HITs 0..h-1: the accumulator.

    A newcomer HIT when the gold placed so far plus ``newcomers`` stays within
    gold_per_hit x (h + 1), else a trusted one. So the running gold never
    exceeds the budget, and falls short of it by less than newcomers - trusted
    (a trusted HIT is laid only when a newcomer HIT would overshoot).
    """
    return "newcomer" if placed + adaptive[0] <= gold_per_hit * (h + 1) else "trusted"


def tiers(hits: int, gold_per_hit: int, adaptive: tuple[int, int]) -> list[Tier]:
    """The first ``hits`` HITs' tiers, in plan order."""
    placed, out = 0, list[Tier]()
    for h in range(hits):
        tier = next_tier(placed, h, gold_per_hit, adaptive)
        placed += adaptive[0] if tier == "newcomer" else adaptive[1]
        out.append(tier)
    return out


def plan(
    rng: random.Random,
    items: int,
    items_per_hit: int,
    gold_per_hit: int,
    pool: Sequence[int],
    adaptive: tuple[int, int],
) -> tuple[list[list[Slot]], list[Tier]]:
    """Every HIT's slots (("item", i) or ("gold", j), shuffled) and tier, until all items are placed.

    The number of HITs is whatever it takes to place ``items`` real items: the
    tiers' item counts differ, so it need not be the non-adaptive plan's. The
    last HIT may be short of items (it keeps its gold: a page with no gold
    would judge nobody). Gold is dealt from the shuffled ``pool`` in turn, as
    the non-adaptive plan deals it.
    """
    newcomers, trusted = adaptive
    page = items_per_hit + gold_per_hit
    # Fewer gold on a newcomer HIT than the average would leave the budget unspent; a page of gold
    # only would place no item and never end.
    if not (0 <= trusted <= gold_per_hit <= newcomers < page):
        raise ValueError(
            f"adaptive gold {adaptive}: needs 0 <= trusted <= {gold_per_hit} <= newcomers < {page}"
        )
    layout: list[list[Slot]] = []
    kinds: list[Tier] = []
    item = dealt = 0
    while item < items:
        tier = next_tier(dealt, len(layout), gold_per_hit, adaptive)
        gold = newcomers if tier == "newcomer" else trusted
        take = min(page - gold, items - item)
        slots: list[Slot] = [("item", item + i) for i in range(take)]
        slots += [("gold", pool[(dealt + j) % len(pool)]) for j in range(gold)]
        item, dealt = item + take, dealt + gold
        rng.shuffle(slots)
        layout.append(slots)
        kinds.append(tier)
    return layout, kinds


def pick(tiers_: Sequence[Tier], open_: Sequence[int], done: set[int], trusted: bool) -> int | None:
    """The HIT a worker takes next, or None when there is nothing it may take (it stops).

    A trusted worker takes the first open trusted HIT it has not done, else the
    first open newcomer HIT: trusted HITs are the ones only it can take, so it
    clears them first and leaves newcomer HITs to the workers who can take
    nothing else. An untrusted worker takes the first open newcomer HIT.
    """
    wanted: tuple[Tier, ...] = ("trusted", "newcomer") if trusted else ("newcomer",)
    for tier in wanted:
        for h, kind in enumerate(tiers_):
            if kind == tier and open_[h] and h not in done:
                return h
    return None
