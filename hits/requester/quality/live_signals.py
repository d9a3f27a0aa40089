"""The quality signals of :mod:`hits.requester.quality.signals`, read from a running campaign's records.

They are consulted only for a worker whom gold has not yet cleared or
condemned after the campaign's minimum of gold answers: signals sharpen an
undecided gold verdict, they never overrule a confident one. Agreement is
measured on the items this worker labelled, with everyone's labels for those
items, so its cost stays proportional to the worker's own work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.answers import LEFT_OUT
from hits.requester.quality.signals import Signal, agreement_signals, speed_signal, straightline_signal
from hits.requester.tables.campaigns import HITSlot, Item, PublishedHIT, Submission

#: Answers a worker needs before their agreement with the crowd is looked at: the fewest
#: labels with a clear majority the majority-agreement estimate judges on (Dawid-Skene waits
#: for more, see :func:`hits.requester.quality.signals.agreement_signals`).
AGREEMENT_MIN_ANSWERS = 10


#: Answers compared as they are (a tuple: ``int | str | float`` would be built at every call).
_SCALAR = (int, str, float)


def _hashable(answer: Any) -> Any:
    """Answers as comparable values: lists and dicts by their canonical JSON."""
    return answer if isinstance(answer, _SCALAR) else json.dumps(answer, sort_keys=True)


def collect_signals(
    session: Session,
    campaign_id: int,
    worker_id: str,
    *,
    straightline: bool = True,
    confidence: float = 0.9,
) -> dict[str, Any]:
    """Speed, straight-lining and agreement evidence for one worker; ``suspicious`` names the bad ones.

    ``straightline``: whether to look for straight-lining at all (the template says whether
    repeating one answer is suspicious for its answers). ``confidence``: the campaign's, which
    the agreement estimates must reach to call a worker's agreement too low.
    """
    return collect_signals_many(
        session, campaign_id, [worker_id], straightline=straightline, confidence=confidence
    )[worker_id]


def collect_signals_many(
    session: Session,
    campaign_id: int,
    worker_ids: Sequence[str],
    *,
    straightline: bool = True,
    confidence: float = 0.9,
    agreement: bool = True,
) -> dict[str, dict[str, Any]]:
    """:func:`collect_signals` for several workers, with one Dawid-Skene fit for all of them.

    ``agreement: False`` skips the agreement signal and its fit (the worker model counts
    agreement itself, and the fit is most of the cost).

    The fit covers every item any of them labelled, with everyone's labels
    for those items: each worker's estimate rests on at least the data a fit
    of their own items would have, and the review pays for one fit a batch
    rather than one a worker.
    """
    wanted = sorted(set(worker_ids))
    own: dict[str, list[Submission]] = {w: [] for w in wanted}
    for submission in session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id.in_(wanted))
        .order_by(Submission.id)
    ):
        own[submission.worker_id].append(submission)
    # Speed: seconds per page slot against the campaign's typical pace (its mean, one SQL aggregate).
    crowd = session.scalar(
        select(func.avg(Submission.work_seconds))
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.work_seconds.is_not(None))
    )
    found: dict[str, list[Signal]] = {}
    answers: dict[str, list[Any]] = {}
    for worker_id, subs in own.items():
        times = [
            s.work_seconds / max(1, len(s.published_hit.slots)) for s in subs if s.work_seconds is not None
        ]
        typical = (
            float(crowd) / max(1, len(subs[0].published_hit.slots)) if crowd is not None and subs else None
        )
        answers[worker_id] = [_hashable(a) for s in subs for a in s.answers.get("answers", [])]
        found[worker_id] = [speed_signal(times, typical)]
        if straightline:
            found[worker_id].append(straightline_signal(answers[worker_id]))
    # Below the minimum, agreement could not be judged: reading everyone's labels would only cost
    # time. (agreement_signals fits Dawid-Skene only once someone has enough labels for it.)
    enough = [w for w in wanted if len(answers[w]) >= AGREEMENT_MIN_ANSWERS] if agreement else []
    if enough:
        labels = _labels_on_shared_items(session, campaign_id, [s for w in enough for s in own[w]])
        agreed = agreement_signals(labels, confidence=confidence) if not labels.empty else {}
        for worker_id in enough:
            if worker_id in agreed:
                found[worker_id].append(agreed[worker_id])
    out = {}
    for worker_id, signals in found.items():
        evidence: dict[str, Any] = {s.name: {"value": s.value, **s.evidence} for s in signals}
        evidence["suspicious"] = sorted(s.name for s in signals if s.suspicious)
        out[worker_id] = evidence
    return out


def _labels_on_shared_items(session: Session, campaign_id: int, own: Sequence[Submission]) -> pd.DataFrame:
    """(task, worker, label) for every ordinary item this worker labelled, from everyone."""
    hit_ids = {s.published_hit_id for s in own}
    if not hit_ids:
        return pd.DataFrame(columns=["task", "worker", "label"])
    slots = session.execute(
        select(HITSlot.published_hit_id, HITSlot.position, Item.external_id)
        .join(Item, Item.id == HITSlot.item_id)
        .where(HITSlot.published_hit_id.in_(hit_ids))
    ).all()
    item_at = {(hit, pos): ext for hit, pos, ext in slots}
    rows = []
    # The four columns only, not whole submissions: loading every submission of these HITs as
    # ORM objects (their evidence and typing records too) was most of this function's time.
    answered = select(
        Submission.published_hit_id, Submission.worker_id, Submission.decision, Submission.answers
    )
    for hit, worker, decision, answers in session.execute(
        answered.where(Submission.published_hit_id.in_(hit_ids))
    ):
        if decision in LEFT_OUT:
            continue
        for pos, answer in enumerate(answers.get("answers", [])):
            if (hit, pos) in item_at:
                rows.append((item_at[(hit, pos)], worker, _hashable(answer)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])
