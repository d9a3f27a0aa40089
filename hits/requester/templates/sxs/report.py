"""The side-by-side study's table: per system pair and metric, who was preferred and by how much.

For a pair of systems (X on the left of the table, Y on the right) and a
metric, each judgement falls in one of five columns: X substantially better,
X marginally better, neutral, Y marginally better, Y substantially better.
The table gives each column's share of the judgements with a Wilson score
interval (a binomial proportion per column), and the net preference for Y:
the share preferring Y minus the share preferring X, with a percentile
bootstrap interval that resamples items (an item's judgements move
together, since they share its texts).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Item
from hits.requester.templates.sxs import METRICS

#: Column order of the table, in "preference for Y" terms: -2 is X substantially better.
COLUMNS = (-2, -1, 0, 1, 2)
RESAMPLES = 2000


@dataclass(frozen=True)
class Judgement:
    """One worker's answer for one item: the systems of its first and second candidate, in item terms."""

    item_id: str
    first: str
    second: str
    answer: Mapping[str, int]


@dataclass(frozen=True)
class Share:
    """One column of one row: how many judgements, their share, and the share's interval."""

    count: int
    share: float
    low: float
    high: float


@dataclass(frozen=True)
class MetricRow:
    """One metric of a pair's table: the five columns and the net preference for the right system."""

    metric: str
    judgements: int
    #: One per column of ``COLUMNS``.
    shares: tuple[Share, ...]
    net: float
    net_low: float
    net_high: float


@dataclass(frozen=True)
class PairTable:
    """One system pair: ``left`` is X, ``right`` is Y (net preference is for Y)."""

    left: str
    right: str
    items: int
    judgements: int
    rows: list[MetricRow]


def _wilson(count: int, n: int, confidence: float) -> Share:
    interval = binomtest(count, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Share(count, count / n, float(interval.low), float(interval.high))


def _net_interval(per_item: list[tuple[int, int]], confidence: float, seed: int) -> tuple[float, float]:
    """Percentile bootstrap over items of (sum of signs) / (judgements)."""
    signs = np.array([s for s, _ in per_item], dtype=float)
    counts = np.array([c for _, c in per_item], dtype=float)
    if len(per_item) < 2:
        net = float(signs.sum() / counts.sum())
        return net, net
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(per_item), size=(RESAMPLES, len(per_item)))
    nets = signs[picks].sum(axis=1) / counts[picks].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(nets, [tail, 100 - tail])
    return float(low), float(high)


def preference_tables(
    judgements: Iterable[Judgement], right: str | None = None, confidence: float = 0.95, seed: int = 0
) -> list[PairTable]:
    """One table per system pair. ``right``: the system to put on the right (Y) in its pairs.

    Otherwise the pair's systems go in alphabetical order. Judgements between
    two candidates of the same system say nothing about systems and are left
    out. The bootstrap is seeded, so the same answers give the same table.
    """
    by_pair: dict[tuple[str, str], list[tuple[str, Mapping[str, int]]]] = defaultdict(list)
    for j in judgements:
        if j.first == j.second:
            continue
        x, y = sorted((j.first, j.second))
        if x == right:
            x, y = y, x
        flip = 1 if j.second == y else -1  # item terms (positive: second better) to "Y better"
        by_pair[(x, y)].append((j.item_id, {m: flip * int(v) for m, v in j.answer.items()}))
    tables = []
    for (x, y), found in sorted(by_pair.items()):
        rows = []
        for metric in METRICS:
            values = [(item, a[metric]) for item, a in found if metric in a]
            if not values:
                continue
            n = len(values)
            shares = tuple(_wilson(sum(v == c for _, v in values), n, confidence) for c in COLUMNS)
            per_item: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for item, v in values:
                per_item[item][0] += (v > 0) - (v < 0)
                per_item[item][1] += 1
            net = sum(s for s, _ in per_item.values()) / n
            low, high = _net_interval([(s, c) for s, c in per_item.values()], confidence, seed)
            rows.append(MetricRow(metric, n, shares, net, low, high))
        tables.append(PairTable(x, y, len({item for item, _ in found}), len(found), rows))
    return tables


def campaign_judgements(session: Session, campaign_id: int) -> list[Judgement]:
    """The judgements that count in a campaign's results (not gold, not rejected or flagged work)."""
    from hits.requester.answers import answers_frame

    frame = answers_frame(session, campaign_id)
    systems = {
        external: [str(c.get("system") or c["id"]) for c in payload.get("candidates", [])]
        for external, payload in session.execute(
            select(Item.external_id, Item.payload).where(Item.campaign_id == campaign_id)
        )
    }
    out = []
    for task, _worker, label in frame.itertuples(index=False):
        pair = systems.get(str(task), [])
        if len(pair) == 2 and isinstance(label, Mapping):
            out.append(Judgement(str(task), pair[0], pair[1], label))
    return out


def format_table(table: PairTable, confidence: float = 0.95) -> str:
    """A pair's table as text, in the paper's layout: X's columns, neutral, Y's columns, then net."""
    level = f"{confidence:.0%}"
    heads = [
        "metric",
        f"{table.left} ++",
        f"{table.left} +",
        "neutral",
        f"{table.right} +",
        f"{table.right} ++",
        f"net for {table.right}",
    ]
    lines = [
        f"{table.left} vs {table.right}: {table.items} items, {table.judgements} judgements",
        f"  % of judgements [{level} Wilson interval]; net = % {table.right} better - % {table.left} better "
        f"[{level} bootstrap interval over items]",
    ]
    body = []
    for row in table.rows:
        cells = [METRICS[row.metric][0]]
        cells += [f"{s.share * 100:.0f} [{s.low * 100:.0f}, {s.high * 100:.0f}]" for s in row.shares]
        cells.append(f"{row.net * 100:+.0f} [{row.net_low * 100:+.0f}, {row.net_high * 100:+.0f}]")
        body.append(cells)
    widths = [max(len(r[k]) for r in [heads, *body]) for k in range(len(heads))]
    for cells in [heads, *body]:
        lines.append(
            "  ".join(
                c.ljust(w) if k == 0 else c.rjust(w)
                for k, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
        )
    return "\n".join(lines)
