"""Leave-one-out consensus for every answer of a campaign at once (numpy), for the worker model.

:func:`hits.requester.quality.worker_model.probability_right` computes one
answer's chance of being right from the other workers' answers to its item,
one call an answer: on a campaign of 2,000 HITs that is 24,000 calls a
review batch, most of the model's decision step. Here each item's consensus
is summed once over all its voters, and each worker's own vote is
subtracted from it (leave one out), which gives the same numbers as the
call for items where no two voters are a suspected copying pair; items with
a pair (rare) go through :func:`~hits.requester.quality.worker_model.consensus_voters`
and the call, exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from hits.requester.quality.worker_model import AGREEMENT_WEIGHT, consensus_voters, probability_right

#: One item's answers: (worker, label), in the order given.
Votes = Sequence[tuple[str, Hashable]]
#: What names an item (the live pipeline: (HIT, position)).
Key = TypeVar("Key", bound=Hashable)


def leave_one_out(
    items: Mapping[Key, Votes],
    wanted: Sequence[tuple[Key, str, Hashable]],
    accuracy: Callable[[str], float],
    priors: Mapping[Hashable, float],
    partners: Callable[[str, str], bool],
    partnered: Collection[str],
) -> list[float | None]:
    """P(answer is right | the others' answers to its item) for each (item, worker, answer) of ``wanted``.

    The same figures as ``probability_right(answer, [(label, accuracy(w)) for w, label in
    consensus_voters(items[item], worker, partners)], priors)``, in one pass: None where nobody
    else answered. Every label must be one of ``priors`` (the campaign's label frequencies);
    ``partnered``: every worker ``partners`` pairs with anyone (only their items are checked for pairs).
    """
    labels = list(priors)
    column = {label: i for i, label in enumerate(labels)}
    classes = max(2, len(labels))
    index = {item: i for i, item in enumerate(items)}
    # Every vote's log-likelihood contribution to each candidate label, summed per item.
    vote_item, vote_label, vote_q = [], [], []
    for item, votes in items.items():
        for worker, label in votes:
            vote_item.append(index[item])
            vote_label.append(column[label])
            vote_q.append(accuracy(worker))
    q = np.clip(np.asarray(vote_q, float), 1e-3, 1 - 1e-3)
    right, wrong = np.log(q), np.log((1 - q) / (classes - 1))
    totals = np.zeros((len(index), len(labels)))
    np.add.at(totals, np.asarray(vote_item, int), wrong[:, None])
    np.add.at(totals, (np.asarray(vote_item, int), np.asarray(vote_label, int)), right - wrong)
    log_prior = np.log(np.maximum(np.asarray([priors[label] for label in labels], float), 1e-6))
    # Items where two voters are partners: the consensus drops one of them, so no plain subtraction.
    paired = {
        item
        for item, votes in items.items()
        if sum(w in partnered for w, _ in votes) > 1 and _has_pair(votes, partners)
    }
    out: list[float | None] = [None] * len(wanted)
    fast: list[int] = []
    rows, answer_col, own_col, own_q = [], [], [], []
    for n, (item, worker, answer) in enumerate(wanted):
        votes = items[item]
        own = [label for w, label in votes if w == worker]
        if item in paired or len(own) > 1:
            others = consensus_voters(votes, worker, partners)
            out[n] = probability_right(answer, [(label, accuracy(w)) for w, label in others], priors)
        elif len(own) < len(votes):
            fast.append(n)
            rows.append(index[item])
            answer_col.append(column[answer])
            # The worker's own vote, subtracted below (none: a column past the labels, weight 0).
            own_col.append(column[own[0]] if own else len(labels))
            own_q.append(accuracy(worker) if own else 0.5)
    if not fast:
        return out
    m = np.arange(len(fast))
    qw = np.clip(np.asarray(own_q, float), 1e-3, 1 - 1e-3)
    has_own = np.asarray(own_col) < len(labels)
    own_wrong = np.where(has_own, np.log((1 - qw) / (classes - 1)), 0.0)
    own_right = np.where(has_own, np.log(qw), 0.0)
    log_post = np.hstack([totals[np.asarray(rows, int)] + log_prior, np.zeros((len(fast), 1))])
    log_post -= own_wrong[:, None]
    log_post[m, np.asarray(own_col, int)] -= own_right - own_wrong
    log_post = log_post[:, : len(labels)]
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    share = post[m, np.asarray(answer_col, int)] / post.sum(axis=1)
    chance = 1 / classes
    for n, p in zip(fast, chance + AGREEMENT_WEIGHT * (share - chance), strict=True):
        out[n] = float(p)
    return out


def _has_pair(votes: Votes, partners: Callable[[str, str], bool]) -> bool:
    workers = [w for w, _ in votes]
    return any(partners(a, b) for i, a in enumerate(workers) for b in workers[i + 1 :])
