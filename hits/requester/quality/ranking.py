"""Orderings (the compare template): Bradley-Terry consensus per item, system scores, agreement.

Each worker's ordering of an item's candidates is read as every pairwise
judgement it implies (best first: the earlier candidate beats each later one),
and crowd-kit's ``BradleyTerry`` fits a strength per candidate from them. When
candidates carry the ``system`` that wrote them, the same judgements between
candidates of different systems give each system a strength across all items:
what a side-by-side study reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.answers import AggregatedItem, answers_frame
from hits.requester.tables.campaigns import Item

#: crowd-kit's iterations (it stops after two, see ``bradley_terry``), then ours at most.
BT_ITERATIONS, BT_MAX_ITERATIONS = 100, 10_000
#: Pseudo-wins each way on every compared pair: unanimous judgements give finite strengths.
PRIOR_WINS = 0.5
_PAIR_COLUMNS = ["task", "worker", "left", "right", "label"]


def _judgements(order: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """(left, right, winner) for each pair of an ordering; left/right sorted, so no side is favoured."""
    for better, worse in combinations(order, 2):
        left, right = sorted((better, worse))
        yield left, right, better


def pairwise_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """(task, worker, left, right, label) rows from (task, worker, ordering) rows; label is the winner."""
    rows = [
        (task, worker, left, right, winner)
        for task, worker, order in frame[["task", "worker", "label"]].itertuples(index=False)
        for left, right, winner in _judgements(list(order))
    ]
    return pd.DataFrame(rows, columns=_PAIR_COLUMNS)


def bradley_terry(pairs: pd.DataFrame, prior: float = PRIOR_WINS) -> dict[str, float]:
    """Bradley-Terry strengths (summing to 1) from (worker, left, right, label) rows.

    crowd-kit's ``BradleyTerry`` gives the first estimate. Its fit (crowd-kit
    1.4) stops after the second MM step, since its stopping test compares the
    estimate with itself, so the same MM update (Hunter 2004) continues here
    from that estimate until the strengths change by less than 1e-10. ``prior``
    pseudo-wins each way on every pair that was compared keep the estimate
    finite when judgements are unanimous (the plain maximum-likelihood strength
    of a candidate that never wins is 0, and of the rest unbounded).
    """
    from crowdkit.aggregation import BradleyTerry

    if pairs.empty:
        return {}
    start = BradleyTerry(n_iter=BT_ITERATIONS).fit_predict(pairs[["worker", "left", "right", "label"]])
    labels = [str(x) for x in start.index]
    index = {label: k for k, label in enumerate(labels)}
    winners = np.array([index[str(x)] for x in pairs["label"]])
    left, right = (np.array([index[str(x)] for x in pairs[c]]) for c in ("left", "right"))
    losers = np.where(winners == left, right, left)
    wins = np.zeros((len(labels), len(labels)))
    np.add.at(wins, (winners, losers), 1.0)
    wins += prior * ((wins + wins.T) > 0)
    games, total_wins = wins + wins.T, wins.sum(axis=1)
    p = np.maximum(np.nan_to_num(start.to_numpy(dtype=float)), 1e-6)
    p /= p.sum()
    for _ in range(BT_MAX_ITERATIONS):
        updated = total_wins / (games / (p[:, None] + p[None, :])).sum(axis=1)
        updated /= updated.sum()
        done = np.abs(updated - p).sum() < 1e-10
        p = updated
        if done:
            break
    return {label: float(v) for label, v in zip(labels, p, strict=True)}


def aggregate_rankings(frame: pd.DataFrame) -> list[AggregatedItem]:
    """One consensus ordering per item, by Bradley-Terry strength.

    Ties in strength go to the better mean place, then to the id. Confidence is
    the share of the item's pairwise judgements (over all its workers) that
    agree with the consensus: 1 when everyone gave the same order, about 0.5
    when the orders are random. ``detail`` holds each candidate's strength and
    mean place (1 is best).
    """
    if frame.empty:
        return []
    pairs = pairwise_frame(frame)
    by_task = dict(iter(pairs.groupby("task", sort=False)))
    out = []
    for task, group in frame.groupby("task", sort=True):
        orders = [list(o) for o in group["label"]]
        candidates = sorted({c for o in orders for c in o})
        strength = bradley_terry(by_task.get(task, pairs.iloc[0:0]))
        places: dict[str, list[int]] = {c: [] for c in candidates}
        for order in orders:
            for k, c in enumerate(order):
                places[c].append(k + 1)
        mean_place = {c: sum(p) / len(p) for c, p in places.items()}
        consensus = sorted(candidates, key=lambda c: (-round(strength.get(c, 0.0), 9), mean_place[c], c))
        out.append(
            AggregatedItem(
                item_id=str(task),
                label=consensus,
                confidence=float(consensus_agreement(orders, consensus)),
                votes=len(orders),
                method="bradley_terry",
                detail={
                    "strength": {c: round(strength.get(c, 0.0), 6) for c in consensus},
                    "mean_place": {c: round(mean_place[c], 4) for c in consensus},
                },
            )
        )
    return out


def consensus_agreement(orders: Sequence[Sequence[str]], consensus: Sequence[str]) -> float:
    """Share of the pairwise judgements in ``orders`` that ``consensus`` shares."""
    place = {c: k for k, c in enumerate(consensus)}
    agree = total = 0
    for order in orders:
        for better, worse in combinations(order, 2):
            total += 1
            agree += place.get(better, len(place)) < place.get(worse, len(place))
    return agree / total if total else 1.0


def rank_positions(frame: pd.DataFrame) -> pd.DataFrame:
    """(task, worker, label) with one unit per (item, candidate) and its place (1 is best) as label.

    This is the data for Krippendorff's alpha at the ordinal level: workers agree
    when they put a candidate at the same place.
    """
    rows = [
        (f"{task}#{candidate}", worker, place)
        for task, worker, order in frame[["task", "worker", "label"]].itertuples(index=False)
        for place, candidate in enumerate(order, start=1)
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@dataclass(frozen=True)
class SystemScore:
    """One system across the campaign: Bradley-Terry strength and raw pairwise record."""

    system: str
    strength: float
    wins: int
    comparisons: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.comparisons if self.comparisons else 0.0


@dataclass(frozen=True)
class HeadToHead:
    """Two systems' judgements against each other; ``first`` is the stronger by Bradley-Terry."""

    first: str
    second: str
    first_wins: int
    second_wins: int
    #: Bradley-Terry probability that ``first`` is judged better than ``second``.
    p_first_better: float

    @property
    def comparisons(self) -> int:
        return self.first_wins + self.second_wins

    @property
    def net_preference(self) -> float:
        """Share of judgements for ``first`` minus share for ``second`` (-1 to 1)."""
        return (self.first_wins - self.second_wins) / self.comparisons if self.comparisons else 0.0


@dataclass(frozen=True)
class SystemReport:
    systems: list[SystemScore] = field(default_factory=list)
    pairs: list[HeadToHead] = field(default_factory=list)

    @property
    def winner(self) -> str | None:
        return self.systems[0].system if self.systems else None


def system_scores(frame: pd.DataFrame, items: Mapping[str, Mapping[str, Any]]) -> SystemReport:
    """Bradley-Terry over systems: every judgement between candidates of two different systems.

    ``items`` maps item id to its payload (candidates with ``system``); candidates
    without a system, and pairs from one system, are left out.
    """
    system_of = {
        (task, c["id"]): c.get("system") or None
        for task, payload in items.items()
        for c in payload.get("candidates", [])
    }
    rows = []
    for task, worker, order in frame[["task", "worker", "label"]].itertuples(index=False):
        for better, worse in combinations(list(order), 2):
            a, b = system_of.get((task, better)), system_of.get((task, worse))
            if a and b and a != b:
                left, right = sorted((a, b))
                rows.append((task, worker, left, right, a))
    pairs = pd.DataFrame(rows, columns=_PAIR_COLUMNS)
    if pairs.empty:
        return SystemReport()
    strength = bradley_terry(pairs)
    wins = pairs["label"].value_counts().to_dict()
    seen = pd.concat([pairs["left"], pairs["right"]]).value_counts().to_dict()
    systems = sorted(
        (
            SystemScore(s, round(strength.get(s, 0.0), 6), int(wins.get(s, 0)), int(n))
            for s, n in seen.items()
        ),
        key=lambda s: (-s.strength, -s.win_rate, s.system),
    )
    rank = {s.system: k for k, s in enumerate(systems)}
    heads = []
    for (left, right), group in pairs.groupby(["left", "right"], sort=True):
        first, second = sorted((str(left), str(right)), key=rank.__getitem__)
        p, q = strength.get(first, 0.0), strength.get(second, 0.0)
        heads.append(
            HeadToHead(
                first,
                second,
                int((group["label"] == first).sum()),
                int((group["label"] == second).sum()),
                round(p / (p + q), 6) if p + q > 0 else 0.5,
            )
        )
    heads.sort(key=lambda h: (rank[h.first], rank[h.second]))
    return SystemReport(systems, heads)


def campaign_systems(session: Session, campaign_id: int) -> SystemReport:
    """:func:`system_scores` for a campaign's kept (not rejected) answers on its ordinary items."""
    frame = answers_frame(session, campaign_id)
    if frame.empty:
        return SystemReport()
    payloads: dict[str, dict[str, Any]] = dict(
        session.execute(select(Item.external_id, Item.payload).where(Item.campaign_id == campaign_id)).all()
    )
    return system_scores(frame, payloads)
