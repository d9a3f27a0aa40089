"""Each worker's verdict for a review batch: the worker model (or gold alone), sharpened by the signals.

Split from :mod:`hits.requester.quality.review`, which applies the verdicts.
With the campaign's ``worker_model: true`` (the default) a worker is judged on one
posterior from gold and their agreement with the others on every other item,
watched for a turn (:mod:`hits.requester.quality.worker_model`, read by
:mod:`hits.requester.quality.live_model`); without it, on gold's Beta
posterior and the recent-work blocks of :mod:`hits.requester.quality.policy`.
Either way the signals speak only where the verdict is undecided, and only
hold work for a person; the agreement signal is not counted under the model,
which has counted agreement itself.
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality.live_model import campaign_evidence
from hits.requester.quality.live_signals import collect_signals_many
from hits.requester.quality.policy import (
    GoldRecord,
    WorkerVerdict,
    held_back,
    judge_recent,
    judge_worker,
    recent_window,
)
from hits.requester.quality.signals import combined_verdict
from hits.requester.quality.worker_model import judge_model, model_reason
from hits.requester.tables.campaigns import PublishedHIT, Submission, WorkerStats


def judge_gold(
    session: Session, campaign_id: int, records: list[WorkerStats], policy: QualityPolicy, straightline: bool
) -> dict[str, WorkerVerdict]:
    """Each worker's verdict, sharpened by the signals where it cannot tell yet."""
    if policy.worker_model:
        verdicts = _judge_model(session, campaign_id, records, policy)
    else:
        verdicts = _judge_gold_alone(session, campaign_id, records, policy)
    # Not decided yet: let the signals speak (a copycat passes some gold). Not for a
    # worker QA staff have cleared: the signals that fired then would only fire again.
    unsure = [
        r
        for r in records
        if verdicts[r.worker_id].verdict == "undecided"
        and r.gold_total >= policy.min_gold
        and r.flag_review != "clear"
    ]
    if unsure:
        evidence = collect_signals_many(
            session,
            campaign_id,
            [r.worker_id for r in unsure],
            straightline=straightline,
            confidence=policy.confidence,
            # The model counted agreement itself: the signal would not be counted, so not fitted.
            agreement=not policy.worker_model,
        )
        for record in unsure:
            verdict, signals = verdicts[record.worker_id], evidence[record.worker_id]
            counted = [name for name in signals["suspicious"] if name in policy.signals]
            sharpened = combined_verdict(
                verdict, counted, gold_total=record.gold_total, min_gold=policy.min_gold
            )
            judged = {**verdict.evidence, "signals": signals}
            if sharpened == "flag":
                # Not confident on its own: a person decides (see review._enqueue_decisions).
                judged["flagged_by"] = "signals"
            verdicts[record.worker_id] = WorkerVerdict(sharpened, verdict.p_below, judged)
    return verdicts


def _judge_model(
    session: Session, campaign_id: int, records: list[WorkerStats], policy: QualityPolicy
) -> dict[str, WorkerVerdict]:
    """The worker model's verdicts, each with its reason in words (``reason``: the evidence pages)."""
    evidence, classes = campaign_evidence(session, campaign_id, [r.worker_id for r in records])
    verdicts = {}
    for r in records:
        verdict = judge_model(
            evidence[r.worker_id],
            threshold=policy.accuracy_threshold,
            confidence=policy.confidence,
            min_gold=policy.min_gold,
            classes=classes,
        )
        verdict.evidence["reason"] = model_reason(verdict)
        verdicts[r.worker_id] = verdict
    return verdicts


def _judge_gold_alone(
    session: Session, campaign_id: int, records: list[WorkerStats], policy: QualityPolicy
) -> dict[str, WorkerVerdict]:
    """Each worker's verdict on gold alone: the whole record and the recent-work blocks."""
    histories = _gold_histories(
        session, campaign_id, [r.worker_id for r in records if r.gold_total > policy.recent_gold // 2]
    )
    verdicts = {}
    for r in records:
        history = histories.get(r.worker_id, [])
        gold = [g for g, _ in history]
        recent = recent_window(gold, policy.recent_gold)
        # Work done while the recent gold leaned bad is paid only on its own confident gold.
        held = held_back(gold, [u for _, u in history], policy.recent_gold, policy.accuracy_threshold)
        verdicts[r.worker_id] = judge_recent(
            judge_worker(
                GoldRecord(r.gold_correct, r.gold_total),
                threshold=policy.accuracy_threshold,
                confidence=policy.confidence,
                min_gold=policy.min_gold,
            ),
            recent,
            threshold=policy.accuracy_threshold,
            confidence=policy.confidence,
            held=held if recent is not None else None,
        )
    return verdicts


def _gold_histories(
    session: Session, campaign_id: int, worker_ids: list[str]
) -> dict[str, list[tuple[tuple[int, int], bool]]]:
    """Each worker's ((gold correct, gold total), undecided) per graded assignment, as submitted."""
    if not worker_ids:
        return {}
    out: dict[str, list[tuple[tuple[int, int], bool]]] = defaultdict(list)
    rows = session.execute(
        select(Submission.worker_id, Submission.gold_correct, Submission.gold_total, Submission.decision)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            PublishedHIT.campaign_id == campaign_id,
            Submission.worker_id.in_(worker_ids),
            Submission.graded.is_(True),
            Submission.gold_total > 0,
        )
        # Submission order: a sync may record a later assignment first.
        .order_by(Submission.worker_id, Submission.submitted_at.nulls_last(), Submission.id)
    )
    for worker_id, correct, total, decision in rows:
        out[worker_id].append(((int(correct or 0), int(total or 0)), decision is None))
    return out
