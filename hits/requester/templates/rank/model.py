"""Rankings with ties: Davidson's Bradley-Terry model with ties, fitted per item and per system.

A ranking of K candidates is read as its K(K-1)/2 pairwise outcomes: for
each pair, one is ranked better, or the two share a rank (a tie). Davidson
(1970) extends Bradley-Terry with a tie parameter nu:

    P(i better than j) = p_i / D,  P(tie) = nu * sqrt(p_i p_j) / D,
    D = p_i + p_j + nu * sqrt(p_i p_j)

so a tie is evidence that the two are close, not half a win each way. The
strengths (as log p) and log nu are the maximum of the log-likelihood minus a
small ridge penalty on the log strengths (as choix's ``alpha`` does), which
fixes the scale and keeps the estimate finite when judgements are unanimous;
scipy's truncated Newton (TNC) does the maximising with the exact gradient. choix and
crowd-kit fit Bradley-Terry and Plackett-Luce without ties, which would
have to break or drop them, so neither is used here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from hits.requester.answers import AggregatedItem
from hits.requester.templates.rank import normalised

#: Ridge penalty on the log strengths (a N(0, 1/RIDGE) prior): small next to a campaign's data.
RIDGE = 0.01
#: log nu is kept in this range: no ties at all drive nu to 0, whose log is unbounded.
LOG_NU_BOUNDS = (-12.0, 6.0)


@dataclass(frozen=True)
class DavidsonFit:
    """Fitted strengths (summing to 1) and the tie parameter nu."""

    strength: dict[str, float]
    nu: float

    def p_better(self, a: str, b: str) -> float:
        """P(``a`` ranked strictly better than ``b``)."""
        pa, pb = self.strength[a], self.strength[b]
        return float(pa / (pa + pb + self.nu * np.sqrt(pa * pb)))

    def p_tie(self, a: str, b: str) -> float:
        """P(``a`` and ``b`` given the same rank)."""
        pa, pb = self.strength[a], self.strength[b]
        return float(self.nu * np.sqrt(pa * pb) / (pa + pb + self.nu * np.sqrt(pa * pb)))


def pairwise_outcomes(ranks: Mapping[str, int]) -> Iterator[tuple[str, str, int]]:
    """(a, b, outcome) for each pair of a ranking, a < b by name: 1 a better, -1 b better, 0 a tie."""
    for a, b in combinations(sorted(ranks), 2):
        ra, rb = int(ranks[a]), int(ranks[b])
        yield a, b, (ra < rb) - (ra > rb)


def fit_davidson(outcomes: Iterable[tuple[str, str, int]], ridge: float = RIDGE) -> DavidsonFit:
    """Davidson's model from (a, b, outcome) judgements (see :func:`pairwise_outcomes`)."""
    from scipy.optimize import minimize

    counts: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for a, b, outcome in outcomes:
        if a == b:
            continue
        if a > b:
            a, b, outcome = b, a, -outcome
        counts[(a, b)][1 - outcome] += 1  # [a wins, tie, b wins]
    names = sorted({n for pair in counts for n in pair})
    if not names:
        return DavidsonFit({}, 0.0)
    index = {n: k for k, n in enumerate(names)}
    i = np.array([index[a] for a, _ in counts])
    j = np.array([index[b] for _, b in counts])
    table = np.array(list(counts.values()))
    wins_i, ties, wins_j = table[:, 0], table[:, 1], table[:, 2]
    games = table.sum(axis=1)

    def negative(params: np.ndarray) -> tuple[float, np.ndarray]:
        theta, log_nu = params[:-1], params[-1]
        nu = np.exp(log_nu)
        ei, ej, half = np.exp(theta[i]), np.exp(theta[j]), np.exp((theta[i] + theta[j]) / 2)
        denominator = ei + ej + nu * half
        loglik = (
            wins_i @ theta[i]
            + wins_j @ theta[j]
            + ties @ (log_nu + (theta[i] + theta[j]) / 2)
            - games @ np.log(denominator)
        )
        share = games / denominator
        grad = np.zeros_like(params)
        np.add.at(grad, i, wins_i + ties / 2 - share * (ei + nu * half / 2))
        np.add.at(grad, j, wins_j + ties / 2 - share * (ej + nu * half / 2))
        grad[-1] = ties.sum() - share @ (nu * half)
        grad[:-1] -= ridge * theta
        return -(loglik - ridge / 2 * theta @ theta), -grad

    start = np.zeros(len(names) + 1)
    start[-1] = np.log(max(ties.sum(), 0.5) / games.sum())
    bounds = [(None, None)] * len(names) + [LOG_NU_BOUNDS]
    # TNC, not L-BFGS-B: the same optimum, and on these few parameters (one per candidate, plus nu)
    # some 15 times faster per item in scipy 1.17, whose L-BFGS-B spends ~5 ms in each step's setup.
    found = minimize(negative, start, jac=True, method="TNC", bounds=bounds, options={"maxfun": 5000})
    theta = found.x[:-1]
    p = np.exp(theta - theta.max())
    p /= p.sum()
    return DavidsonFit({n: float(v) for n, v in zip(names, p, strict=True)}, float(np.exp(found.x[-1])))


def consensus_ranks(fit: DavidsonFit) -> dict[str, int]:
    """Competition ranks by strength, neighbours tied where the model finds a tie likelier than not.

    Going down the strength order, a candidate shares the rank of the one
    before it when P(tie) is at least P(the one before ranked better): the
    consensus states each neighbouring pair's most probable outcome.
    """
    ordered = sorted(fit.strength, key=lambda c: (-fit.strength[c], c))
    ranks: dict[str, int] = {}
    for k, c in enumerate(ordered):
        previous = ordered[k - 1] if k else None
        if previous is not None and fit.p_tie(previous, c) >= fit.p_better(previous, c):
            ranks[c] = ranks[previous]
        else:
            ranks[c] = k + 1
    return normalised(ranks)


def agreement_with(rankings: Iterable[Mapping[str, int]], consensus: Mapping[str, int]) -> float:
    """Share of the rankings' pairwise outcomes (better, worse or tied) that ``consensus`` shares."""
    agree = total = 0
    for ranks in rankings:
        for a, b, outcome in pairwise_outcomes(ranks):
            if a in consensus and b in consensus:
                total += 1
                agree += outcome == (consensus[a] < consensus[b]) - (consensus[a] > consensus[b])
    return agree / total if total else 1.0


def aggregate_tied_rankings(frame: pd.DataFrame) -> list[AggregatedItem]:
    """One consensus ranking per item (``{candidate: rank}``, ties kept) by Davidson strength.

    Support (later turned into a vote-aware confidence): the share of the
    item's pairwise outcomes, over all its workers, that the consensus
    shares. ``detail``: each candidate's strength and mean rank, and nu.
    """
    if not all(isinstance(label, Mapping) for label in frame["label"]):
        raise ValueError("davidson aggregates rankings ({candidate: rank}, the rank template's answers)")
    out = []
    for task, group in frame.groupby("task", sort=True):
        rankings = [{str(c): int(r) for c, r in label.items()} for label in group["label"]]
        fit = fit_davidson(o for ranks in rankings for o in pairwise_outcomes(ranks))
        consensus = consensus_ranks(fit)
        mean_rank = {c: float(np.mean([r[c] for r in rankings if c in r])) for c in consensus}
        out.append(
            AggregatedItem(
                item_id=str(task),
                label=dict(sorted(consensus.items(), key=lambda kv: (kv[1], kv[0]))),
                confidence=agreement_with(rankings, consensus),
                votes=len(rankings),
                method="davidson",
                detail={
                    "strength": {c: round(fit.strength[c], 6) for c in consensus},
                    "mean_rank": {c: round(mean_rank[c], 4) for c in consensus},
                    "nu": round(fit.nu, 6),
                },
            )
        )
    return out
