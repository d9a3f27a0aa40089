"""Aggregating a campaign's answers into one label per item, with confidence.

crowd-kit does the statistics: majority vote, Dawid-Skene and GLAD for
categorical answers, Bradley-Terry for orderings (:mod:`hits.requester.quality.ranking`).
Only ordinary items count (gold slots are for grading workers) and rejected
work is left out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.requester.answers import AggregatedItem, answers_frame, counted_submissions, krippendorff_alpha
from hits.requester.quality import METHODS
from hits.requester.quality.policy import probability_rate_below
from hits.requester.quality.ranking import aggregate_rankings, rank_positions
from hits.requester.tables.campaigns import Campaign, CampaignResult
from hits.requester.templates import get_template
from hits.requester.templates.objects.consensus import aggregate_object_lists
from hits.requester.templates.rank.model import aggregate_tied_rankings


def majority_confidence(support: float, votes: int) -> float:
    """P(most workers like these would give this label), from ``votes`` votes backing it with ``support``.

    ``support`` is the method's share for the label: its vote share
    (majority vote), its posterior (Dawid-Skene, GLAD), the share of pairwise
    judgements that agree with it (Bradley-Terry). Taken as ``support * votes``
    successes out of ``votes``, with a uniform prior on the share of workers
    who would give the label: the Beta posterior's mass above one half, the
    rule gold uses. A model's posterior alone says 1.00 for two agreeing
    votes; this says 0.875 for two, 0.94 for three, 0.98 for five, and 0.5
    for no votes at all.
    """
    return 1.0 - probability_rate_below(support * votes, votes, 0.5)


def _with_vote_confidence(items: list[AggregatedItem]) -> list[AggregatedItem]:
    """The items with :func:`majority_confidence` as their confidence; the method's own kept as support."""
    return [
        replace(
            a,
            confidence=majority_confidence(a.confidence, a.votes),
            detail={**a.detail, "support": round(a.confidence, 4)},
        )
        for a in items
    ]


def aggregate_frame(frame: pd.DataFrame, method: str) -> list[AggregatedItem]:
    """One label per task by ``method``, with a confidence that accounts for the number of votes.

    ``confidence``: :func:`majority_confidence` of the method's support for
    the label (kept as ``detail["support"]``) over the item's votes. Free
    text (``collect_all``) keeps every answer and has no confidence to give: 1.
    """
    if frame.empty:
        return []
    if method == "collect_all":
        return _structured(frame, method)
    return _with_vote_confidence(_aggregate_by_support(frame, method))


def _aggregate_by_support(frame: pd.DataFrame, method: str) -> list[AggregatedItem]:
    """One label per task; confidence, for now, is the method's own support for it."""
    from crowdkit.aggregation import GLAD, DawidSkene, MajorityVote

    if method in ("binary_relevance", "token_majority", "median_per_key"):
        return _structured(frame, method)
    if method == "bradley_terry":
        return aggregate_rankings(frame)
    if method == "object_clusters":  # object lists: clusters of boxes across workers (the objects template)
        return aggregate_object_lists(frame)
    if method == "davidson":  # rankings with ties (the rank template): Bradley-Terry with ties
        return aggregate_tied_rankings(frame)
    if method == "majority_vote":
        probabilities = MajorityVote().fit_predict_proba(frame)
    elif method == "dawid_skene":
        probabilities = DawidSkene(n_iter=100).fit_predict_proba(frame)
    elif method == "glad":
        probabilities = GLAD(n_iter=100, silent=True).fit_predict_proba(frame)
    else:
        raise ValueError(f"unknown aggregation {method!r}; choose one of {', '.join(METHODS)}")
    votes = frame.groupby("task").size()
    out = []
    for task, row in probabilities.iterrows():
        label = row.idxmax()
        out.append(
            AggregatedItem(
                item_id=str(task),
                label=label.item() if isinstance(label, np.generic) else label,
                confidence=float(row.max()),
                votes=int(votes.get(task, 0)),
                method=method,
            )
        )
    return out


def _structured(frame: pd.DataFrame, method: str) -> list[AggregatedItem]:
    """Aggregations for answers that are not single categories.

    ``binary_relevance`` (multi-select; crowd-kit's BinaryRelevance over majority
    vote): the chosen set, confidence the mean vote share of the decisions.
    ``token_majority`` (spans): per kind, the spans every majority agrees on,
    taken at character level. ``collect_all`` (free text): every answer kept.
    """
    out = []
    for task, group in frame.groupby("task", sort=True):
        answers = list(group["label"])
        n = len(answers)
        label: Any
        if method == "binary_relevance":
            from crowdkit.aggregation import BinaryRelevance, MajorityVote

            chosen = BinaryRelevance(MajorityVote()).fit_predict(
                group.assign(label=[list(a) for a in answers])
            )
            # Nobody ticked anything: crowd-kit returns no row, and the answer is "none fits".
            label = sorted(int(j) for j in chosen.iloc[0]) if len(chosen) else []
            options = {int(j) for a in answers for j in a}
            shares = [sum(j in a for a in answers) / n for j in options] or [1.0]
            confidence = sum(max(p, 1 - p) for p in shares) / len(shares)
        elif method == "token_majority":
            label = {
                kind: _majority_spans([a.get(kind, []) for a in answers]) for kind in ("mistakes", "missing")
            }
            confidence = 1.0 if n == 1 else sum(a == label for a in answers) / n
        elif method == "median_per_key":
            # A mapping of ordinal scores (sxs: metric -> -2..2): per key the median (the lower
            # one of an even count, so it is a value someone gave); confidence: the share at it.
            keys = sorted({k for a in answers for k in a})
            label, shares = {}, []
            for k in keys:
                given = sorted(int(a[k]) for a in answers if k in a)
                label[k] = given[(len(given) - 1) // 2]
                shares.append(given.count(label[k]) / len(given))
            confidence = sum(shares) / len(shares) if shares else 1.0
        else:
            label, confidence = answers, 1.0
        out.append(AggregatedItem(str(task), label, float(confidence), n, method))
    return out


def _majority_spans(span_lists: list[list[list[int]]]) -> list[list[int]]:
    """Characters marked by more than half the workers, as [start, end) runs."""
    counts: dict[int, int] = {}
    for spans in span_lists:
        for start, end in spans:
            for c in range(start, end):
                counts[c] = counts.get(c, 0) + 1
    kept = sorted(c for c, k in counts.items() if k * 2 > len(span_lists))
    runs: list[list[int]] = []
    for c in kept:
        if runs and runs[-1][1] == c:
            runs[-1][1] = c + 1
        else:
            runs.append([c, c + 1])
    return runs


def aggregate_campaign(session: Session, campaign_id: int, method: str | None = None) -> list[AggregatedItem]:
    """Aggregate a campaign with ``method`` or the one its template declares."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    chosen = method or get_template(campaign.template).aggregation
    return aggregate_frame(answers_frame(session, campaign_id), chosen)


def campaign_agreement(session: Session, campaign_id: int, frame: pd.DataFrame | None = None) -> float | None:
    """Krippendorff's alpha for a campaign at its template's level of measurement.

    Multi-select answers count as one yes/no question per candidate; orderings
    as one ordinal question per candidate (its place); spans and free text have
    no single label to agree on (None). A template that measures its own
    (``TaskTemplate.own_agreement``) gives its overall figure. ``frame``: the campaign's
    :func:`answers_frame`, if the caller has it already.
    """
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    template = get_template(campaign.template)
    own = template.own_agreement(session, campaign_id)
    if own is not None:
        return own.overall
    level = template.agreement_level
    if frame is None:
        frame = answers_frame(session, campaign_id)
    if level is None or frame.empty:
        return None
    if level == "binary":
        highest = {
            task: max((j for a in group.label for j in a), default=-1)
            for task, group in frame.groupby("task")
        }
        rows = [
            (f"{task}#{j}", worker, int(j in label))
            for task, worker, label in frame.itertuples(index=False)
            for j in range(highest[task] + 1)
        ]
        return krippendorff_alpha(pd.DataFrame(rows, columns=["task", "worker", "label"]), "nominal")
    if level == "ordinal_per_key":  # a mapping of ordinal scores: one unit per (item, key)
        rows = [
            (f"{task}#{k}", worker, int(v))
            for task, worker, label in frame.itertuples(index=False)
            for k, v in label.items()
        ]
        return krippendorff_alpha(pd.DataFrame(rows, columns=["task", "worker", "label"]), "ordinal")
    if level == "rank":
        return krippendorff_alpha(rank_positions(frame), "ordinal")
    return krippendorff_alpha(frame, level)


def store_results(session: Session, campaign_id: int) -> CampaignResult:
    """Aggregate the campaign's labels (its template's method) and agreement, and keep them.

    One row per campaign, replaced on every call: what the dashboard shows.
    The Celery pipeline stores them when a campaign finishes; QA staff ask
    again from the dashboard after their decisions change what counts.
    """
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    counted = counted_submissions(session, campaign_id)
    frame = answers_frame(session, campaign_id, counted)
    method = get_template(campaign.template).aggregation
    items = aggregate_frame(frame, method) if not frame.empty else []
    row = session.get(CampaignResult, campaign_id) or CampaignResult(campaign_id=campaign_id)
    row.method = method
    own = get_template(campaign.template).own_agreement(session, campaign_id)
    row.agreement = own.overall if own is not None else campaign_agreement(session, campaign_id, frame)
    row.agreement_parts = own.parts if own is not None else None
    row.labels = [
        {"item_id": a.item_id, "label": a.label, "confidence": round(a.confidence, 4), "votes": a.votes}
        for a in items
    ]
    row.assignments = len(counted)
    row.computed_at = utcnow()
    session.add(row)
    session.flush()
    return row
