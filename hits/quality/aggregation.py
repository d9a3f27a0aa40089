"""Aggregating a campaign's answers into one label per item, with confidence.

crowd-kit does the statistics: majority vote, Dawid-Skene and GLAD for
categorical answers. Only ordinary items count (gold slots are for grading
workers) and rejected work is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.campaigns.models import Campaign, HITSlot, Item, PublishedHIT, Submission
from hits.templates import get_template

METHODS = ("majority_vote", "dawid_skene", "glad")


@dataclass(frozen=True)
class AggregatedItem:
    item_id: str
    label: Any
    confidence: float
    votes: int
    method: str


def answers_frame(session: Session, campaign_id: int) -> pd.DataFrame:
    """A long table (task, worker, label) of a campaign's non-gold answers."""
    rows: list[tuple[str, str, Any]] = []
    submissions = session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id)
        .where((Submission.decision.is_(None)) | (Submission.decision != "reject"))
    ).all()
    item_ids = dict(
        session.execute(
            select(HITSlot.id, Item.external_id)
            .join(Item, Item.id == HITSlot.item_id)
            .join(PublishedHIT, PublishedHIT.id == HITSlot.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        ).all()
    )
    for submission in submissions:
        answers = submission.answers.get("answers", [])
        for slot in submission.published_hit.slots:
            if slot.id in item_ids and slot.position < len(answers):
                rows.append((item_ids[slot.id], submission.worker_id, answers[slot.position]))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def aggregate_frame(frame: pd.DataFrame, method: str) -> list[AggregatedItem]:
    """One label per task by ``method``; confidence is the posterior (or vote share) of that label."""
    if frame.empty:
        return []
    from crowdkit.aggregation import GLAD, DawidSkene, MajorityVote

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


def aggregate_campaign(session: Session, campaign_id: int, method: str | None = None) -> list[AggregatedItem]:
    """Aggregate a campaign with ``method`` or the one its template declares."""
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    chosen = method or get_template(campaign.template).aggregation
    return aggregate_frame(answers_frame(session, campaign_id), chosen)


def krippendorff_alpha(frame: pd.DataFrame, level: str = "ordinal") -> float | None:
    """Krippendorff's alpha over the workers x items matrix; None with too little data."""
    if frame.empty or frame["worker"].nunique() < 2:
        return None
    import krippendorff

    matrix = frame.pivot_table(index="worker", columns="task", values="label", aggfunc="first")
    data = matrix.to_numpy(dtype=float)
    if np.count_nonzero(~np.isnan(data).all(axis=0)) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))  # type: ignore[arg-type]
