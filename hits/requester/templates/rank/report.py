"""The ranking study's table: per system and condition, mean rank, first places and a tie-aware model.

Each counted answer ranks an item's candidates; a candidate's system (or its
id when it has none) is what the table is about, and the item's
``condition`` (e.g. how many sentences of a description a picture was made
from) is its column, with an "all" column when there are several. Per system
and column:

- mean rank: the mean of the (standard competition) ranks the system's
  candidates got, so tied candidates share the better rank;
- first places: the share of rankings that put the system first, a first
  place shared by n candidates counting 1/n to each;
- strength: Davidson's Bradley-Terry with ties fitted on every pair of
  candidates of different systems (``hits.requester.templates.rank.model``), as a
  percentage summing to 100, with the column's tie parameter nu.

Mean rank and first places get percentile bootstrap intervals that resample
items (the rankings of one item share its pictures), seeded, so the same
answers give the same table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import Item
from hits.requester.templates.rank.model import fit_davidson

RESAMPLES = 2000
BLOCK = 200
ALL = "all"


@dataclass(frozen=True)
class Ranking:
    """One worker's ranking of one item: (system, rank) per candidate."""

    item_id: str
    condition: str
    ranks: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Cell:
    """One system in one column."""

    rankings: int
    mean_rank: float
    mean_rank_low: float
    mean_rank_high: float
    first_share: float
    first_low: float
    first_high: float
    strength: float


@dataclass(frozen=True)
class Column:
    """One condition (or all of them): its items, rankings, tie parameter and a cell per system."""

    condition: str
    items: int
    rankings: int
    nu: float
    cells: dict[str, Cell] = field(default_factory=dict)


@dataclass(frozen=True)
class RankTable:
    """Systems (best mean rank over everything first) by columns."""

    systems: list[str]
    columns: list[Column]


def _interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def _column(condition: str, rankings: Sequence[Ranking], confidence: float, seed: int) -> Column:
    items = sorted({r.item_id for r in rankings})
    systems = sorted({s for r in rankings for s, _ in r.ranks})
    row_of, col_of = {i: k for k, i in enumerate(items)}, {s: k for k, s in enumerate(systems)}
    # Per item and system: sum of ranks, candidates ranked, first-place credit, rankings it was in.
    rank_sum, ranked = np.zeros((len(items), len(systems))), np.zeros((len(items), len(systems)))
    firsts, present = np.zeros((len(items), len(systems))), np.zeros((len(items), len(systems)))
    outcomes = []
    for r in rankings:
        row = row_of[r.item_id]
        best = min(rank for _, rank in r.ranks)
        at_best = sum(1 for _, rank in r.ranks if rank == best)
        for system in {s for s, _ in r.ranks}:
            present[row, col_of[system]] += 1
        for system, rank in r.ranks:
            rank_sum[row, col_of[system]] += rank
            ranked[row, col_of[system]] += 1
            if rank == best:
                firsts[row, col_of[system]] += 1 / at_best
        for k, (a, ra) in enumerate(r.ranks):
            for b, rb in r.ranks[k + 1 :]:
                if a != b:  # two candidates of one system say nothing about systems
                    outcomes.append((a, b, (ra < rb) - (ra > rb)))
    fit = fit_davidson(outcomes)
    # Resampled in blocks, so a campaign of many items holds one block's picks in memory, not all
    # 2,000 resamples' at once; the four per-item tables side by side, summed in one pass.
    rng = np.random.default_rng(seed)
    per_item = np.hstack([rank_sum, ranked, firsts, present])
    blocks = []
    for start in range(0, RESAMPLES, BLOCK):
        picks = rng.integers(0, len(items), size=(min(BLOCK, RESAMPLES - start), len(items)))
        blocks.append(per_item[picks].sum(axis=1))
    boot_rank_sum, boot_ranked, boot_firsts, boot_present = np.hsplit(np.vstack(blocks), 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot_mean = boot_rank_sum / boot_ranked
        boot_first = boot_firsts / boot_present
    cells = {}
    for s, k in col_of.items():
        mean_low, mean_high = _interval(boot_mean[:, k], confidence)
        first_low, first_high = _interval(boot_first[:, k], confidence)
        cells[s] = Cell(
            rankings=int(present[:, k].sum()),
            mean_rank=float(rank_sum[:, k].sum() / ranked[:, k].sum()),
            mean_rank_low=mean_low,
            mean_rank_high=mean_high,
            first_share=float(firsts[:, k].sum() / present[:, k].sum()),
            first_low=first_low,
            first_high=first_high,
            strength=fit.strength.get(s, float("nan")),
        )
    return Column(condition, len(items), len(rankings), fit.nu, cells)


def rank_table(rankings: Iterable[Ranking], confidence: float = 0.95, seed: int = 0) -> RankTable | None:
    """The study's table, one column per condition (in the order first seen) and "all"; None if empty."""
    found = list(rankings)
    if not found:
        return None
    conditions = list(dict.fromkeys(r.condition for r in found))
    columns = [
        _column(c or ALL, [r for r in found if r.condition == c], confidence, seed) for c in conditions
    ]
    if len(conditions) > 1:
        columns.append(_column(ALL, found, confidence, seed))
    overall = columns[-1].cells
    systems = sorted(overall, key=lambda s: (overall[s].mean_rank, s))
    return RankTable(systems, columns)


def campaign_rankings(session: Session, campaign_id: int) -> list[Ranking]:
    """The rankings that count in a campaign's results (not gold, not rejected or flagged work)."""
    from hits.requester.answers import answers_frame

    frame = answers_frame(session, campaign_id)
    items: dict[str, tuple[str, dict[str, str]]] = {}
    for external, payload in session.execute(
        select(Item.external_id, Item.payload).where(Item.campaign_id == campaign_id).order_by(Item.id)
    ):
        systems = {str(c["id"]): str(c.get("system") or c["id"]) for c in payload.get("candidates", [])}
        items[str(external)] = (str(payload.get("condition") or ""), systems)
    out = []
    for task, _worker, label in frame.itertuples(index=False):
        if str(task) not in items or not isinstance(label, Mapping):
            continue
        condition, system_of = items[str(task)]
        ranks = tuple((system_of[c], int(r)) for c, r in sorted(label.items()) if c in system_of)
        out.append(Ranking(str(task), condition, ranks))
    # Items in the campaign's own order, so conditions come out as the requester listed them.
    order = {item: k for k, item in enumerate(items)}
    return sorted(out, key=lambda r: order[r.item_id])


def format_table(table: RankTable, confidence: float = 0.95) -> str:
    """The table as text: mean rank, first places and strength, systems by columns."""
    level = f"{confidence:.0%}"
    heads = ["system", *(c.condition for c in table.columns)]

    def block(title: str, cell_text: object, footer: list[str] | None = None) -> list[str]:
        body = [
            [s, *(cell_text(c.cells[s]) if s in c.cells else "-" for c in table.columns)]  # type: ignore[operator]
            for s in table.systems
        ]
        if footer:
            body.append(footer)
        widths = [max(len(r[k]) for r in [heads, *body]) for k in range(len(heads))]
        lines = [title]
        for cells in [heads, *body]:
            lines.append(
                "  ".join(
                    c.ljust(w) if k == 0 else c.rjust(w)
                    for k, (c, w) in enumerate(zip(cells, widths, strict=True))
                )
            )
        return lines

    lines = block(
        f"Mean rank (1 = closest; tied candidates share the better rank) [{level} bootstrap over items]",
        lambda c: f"{c.mean_rank:.2f} [{c.mean_rank_low:.2f}, {c.mean_rank_high:.2f}]",
        ["items / rankings", *(f"{c.items} / {c.rankings}" for c in table.columns)],
    )
    lines.append("")
    lines += block(
        f"First places, % of rankings (a first place shared by n counts 1/n) [{level} bootstrap interval]",
        lambda c: f"{c.first_share * 100:.0f} [{c.first_low * 100:.0f}, {c.first_high * 100:.0f}]",
    )
    lines.append("")
    lines += block(
        "Bradley-Terry with ties (Davidson): strength, % of the column",
        lambda c: f"{c.strength * 100:.1f}",
        ["tie parameter nu", *(f"{c.nu:.2f}" for c in table.columns)],
    )
    return "\n".join(lines)
