"""The answers that count in a campaign's results, and the shape every aggregation of them returns.

Requester side, product. Below :mod:`hits.requester.quality.aggregation`, whose methods
(:mod:`hits.requester.quality.ranking`, the rank and objects templates' models) read
answers and return :class:`AggregatedItem` through this module, so the
aggregation can import them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Row, or_, select
from sqlalchemy.orm import Session

from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission, WorkerStats


@dataclass(frozen=True)
class AggregatedItem:
    """One item's consensus label.

    ``confidence`` accounts for the number of votes
    (:func:`hits.requester.quality.aggregation.majority_confidence`);
    ``detail["support"]`` is the method's own figure for the label, which does not.
    """

    item_id: str
    label: Any
    confidence: float
    votes: int
    method: str
    #: Method-specific figures behind the label (e.g. Bradley-Terry strengths per candidate).
    detail: dict[str, Any] = field(default_factory=dict, compare=False)


#: Decisions whose answers never count: rejected work, and work the marketplace never took in.
LEFT_OUT = ("reject", "void")


#: What a held submission's evidence says when a flag held it (not the campaign's end).
HELD_ON_FLAG = "flag"
#: ... and when its page's typing record or a near-duplicate text held it (``quality/authenticity.py``).
HELD_ON_AUTHENTICITY = "authenticity"
#: Held work that counts only once a reviewer approves it.
HELD_AS_SUSPECT = (HELD_ON_FLAG, HELD_ON_AUTHENTICITY)


def counted_submissions(session: Session, campaign_id: int) -> list[Row[Any]]:
    """The campaign's submissions whose answers count in the results, as plain rows.

    Left out: rejected work, work the marketplace never took in, and work held
    because its worker looks bad (a worker flagged in this campaign, or a flag
    a reviewer's earlier clearing turned into a hold) or because the work
    itself does (its typing record, a near-duplicate text): it counts once a
    reviewer approves it, as approved work does. Work held only because the
    campaign ended before gold could tell counts. Rows (``assignment_id``,
    ``published_hit_id``, ``worker_id``, ``answers``, ...), not ORM objects:
    a finished campaign may have 100,000 of them.
    """
    flagged = select(WorkerStats.worker_id).where(
        WorkerStats.campaign_id == campaign_id, WorkerStats.flagged.is_(True)
    )
    candidates = session.execute(
        select(
            Submission.id,
            Submission.assignment_id,
            Submission.published_hit_id,
            Submission.worker_id,
            Submission.answers,
            Submission.decision,
            Submission.evidence,
        )
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            PublishedHIT.campaign_id == campaign_id,
            or_(Submission.decision.is_(None), Submission.decision.not_in(LEFT_OUT)),
            or_(
                Submission.decision.is_(None),
                Submission.decision != "held",
                Submission.worker_id.not_in(flagged),
            ),
        )
        .order_by(Submission.id)
    ).all()
    return [
        s
        for s in candidates
        if not (s.decision == "held" and (s.evidence or {}).get("held_for") in HELD_AS_SUSPECT)
    ]


def answers_frame(
    session: Session, campaign_id: int, submissions: Sequence[Row[Any]] | None = None
) -> pd.DataFrame:
    """A long table (task, worker, label) of the non-gold answers that count (:func:`counted_submissions`).

    ``submissions``: those rows, if the caller has them already.
    """
    if submissions is None:
        submissions = counted_submissions(session, campaign_id)
    item_at = item_places(session, campaign_id)
    rows: list[tuple[str, str, Any]] = []
    for submission in submissions:
        for position, answer in enumerate(submission.answers.get("answers", [])):
            item = item_at.get((submission.published_hit_id, position))
            if item is not None:
                rows.append((item, submission.worker_id, answer))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def item_places(session: Session, campaign_id: int) -> dict[tuple[int, int], str]:
    """Every real item's place in its HIT, (HIT row id, position) to the item's external id.

    One query for the whole campaign, not the slots of each HIT in turn. Gold slots hold no item
    row here, so a position missing from the map is gold (or empty).
    """
    return {
        (hit, position): external
        for hit, position, external in session.execute(
            select(HITSlot.published_hit_id, HITSlot.position, Item.external_id)
            .join(Item, Item.id == HITSlot.item_id)
            .join(PublishedHIT, PublishedHIT.id == HITSlot.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id)
        )
    }


def krippendorff_alpha(frame: pd.DataFrame, level: str = "ordinal") -> float | None:
    """Krippendorff's alpha over the workers x items matrix; None with too little data.

    ``nominal`` labels may be any hashable values (they are coded as integers);
    ``ordinal`` and ``interval`` labels must be numbers.
    """
    if frame.empty or frame["worker"].nunique() < 2:
        return None
    import krippendorff

    if level == "nominal":
        codes = {label: k for k, label in enumerate(sorted({str(v) for v in frame["label"]}))}
        frame = frame.assign(label=[codes[str(v)] for v in frame["label"]])
    matrix = frame.pivot_table(index="worker", columns="task", values="label", aggfunc="first")
    data = matrix.to_numpy(dtype=float)
    if np.count_nonzero(~np.isnan(data).all(axis=0)) < 2:
        return None
    # krippendorff raises unless some item has two workers' values and the values differ
    # somewhere: e.g. one worker per item so far, or everyone gave the one same answer.
    if (
        not (np.count_nonzero(~np.isnan(data), axis=0) >= 2).any()
        or np.unique(data[~np.isnan(data)]).size < 2
    ):
        return None
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))  # type: ignore[arg-type]
