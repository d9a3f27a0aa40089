"""Copying pairs (:mod:`hits.quality.copying`) read from a running campaign, kept, and acted on.

For the workers a review batch decides, every other worker who did one of
their HITs is a possible partner; each pair is judged on everything the two
did on the same HITs. A suspicious pair is kept as a :class:`CopyingPair`
row (restated at every judgement, so the dashboard shows the evidence as it
grows) and flags both workers for QA staff: like the other signals, a flag
that holds their undecided work for a person, never one that rejects.

Unlike the other signals it is consulted whatever gold says: a pair copying
a good worker passes gold, which is what this signal is for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, String, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from hits.campaigns.models import Campaign, HITSlot, PublishedHIT, Submission, WorkerStats
from hits.campaigns.spec import QualityPolicy
from hits.db import RequesterBase, UTCDateTime, utcnow
from hits.quality.copying import PairRecord, PairVerdict, SharedHIT, SharedItem, judge_pair, reason
from hits.quality.live_signals import _hashable
from hits.quality.policy import GoldRecord, WorkerVerdict
from hits.templates import get_template

#: The name of the signal, in ``QualityPolicy.signals`` and in the evidence's ``suspicious``.
COPYING = "copying"
#: Work whose answers are not evidence of anything (the marketplace never took it in).
NOT_WORK = ("void",)


class CopyingPair(RequesterBase):
    """A pair of workers found copying in a campaign, with the evidence as of its last judgement."""

    __tablename__ = "rq_copying_pairs"

    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), primary_key=True)
    first_worker: Mapped[str] = mapped_column(String(20), primary_key=True)
    second_worker: Mapped[str] = mapped_column(String(20), primary_key=True)
    #: Whether the pair looked like copying at its latest judgement.
    suspicious: Mapped[bool] = mapped_column(Boolean, default=True)
    p_value: Mapped[float] = mapped_column(Float)
    shared_items: Mapped[int] = mapped_column(Integer)
    identical_answers: Mapped[int] = mapped_column(Integer)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


@dataclass
class CopyingReport:
    """The pairs judged for a batch of workers: suspicious ones per worker, partners included."""

    by_worker: dict[str, list[PairVerdict]] = field(default_factory=lambda: defaultdict(list))
    judged: list[PairVerdict] = field(default_factory=list)

    @property
    def workers(self) -> set[str]:
        """Every worker in a suspicious pair (the batch's workers and their partners)."""
        return {w for w, found in self.by_worker.items() if found}


def judge_copying(
    session: Session, campaign: Campaign, worker_ids: Iterable[str], policy: QualityPolicy
) -> CopyingReport:
    """Judge every pair of one of ``worker_ids`` with another worker of the same HITs. Reads only."""
    wanted = sorted(set(worker_ids))
    report = CopyingReport()
    if not wanted:
        return report
    theirs = (
        select(Submission.published_hit_id)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign.id, Submission.worker_id.in_(wanted))
    )
    rows = session.execute(
        select(
            Submission.published_hit_id,
            Submission.worker_id,
            Submission.answers,
            Submission.submitted_at,
            PublishedHIT.mturk_hit_id,
        )
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            Submission.published_hit_id.in_(theirs),
            Submission.synced.is_(True),
            or_(Submission.decision.is_(None), Submission.decision.not_in(NOT_WORK)),
        )
        .order_by(Submission.published_hit_id, Submission.id)
    ).all()
    if not rows:
        return report
    by_hit: dict[int, list[tuple[str, list[Any], datetime | None, str]]] = defaultdict(list)
    for hit_id, worker_id, answers, submitted_at, mturk_hit_id in rows:
        by_hit[hit_id].append((worker_id, list(answers.get("answers", [])), submitted_at, mturk_hit_id or ""))
    slots = _slots(session, list(by_hit))
    template = get_template(campaign.template)
    options = campaign.spec.get("template_options", {})
    items: dict[tuple[str, str], list[SharedItem]] = defaultdict(list)
    hits: dict[tuple[str, str], list[SharedHIT]] = defaultdict(list)
    for hit_id, done in by_hit.items():
        for i, one in enumerate(done):
            for other in done[i + 1 :]:
                (a, answers_a, at_a, mturk_hit_id), (b, answers_b, at_b, _) = sorted(
                    (one, other), key=_worker
                )
                if a == b or (a not in wanted and b not in wanted):
                    continue
                hits[(a, b)].append(SharedHIT(mturk_hit_id, at_a, at_b))
                for position, (name, gold) in slots.get(hit_id, {}).items():
                    if position >= min(len(answers_a), len(answers_b)):
                        continue
                    first, second = answers_a[position], answers_b[position]
                    wrong = False
                    if gold is not None and first == second:
                        score = template.score_gold_item(first, gold.answer, gold.payload, options)
                        wrong = not template.gold_passed(score, options)
                    items[(a, b)].append(
                        SharedItem(name, _hashable(first), _hashable(second), gold is not None, wrong)
                    )
    gold = _gold_records(session, campaign.id, {w for pair in items for w in pair})
    for (a, b), shared in sorted(items.items()):
        verdict = judge_pair(
            PairRecord(
                a, b, shared, gold.get(a, GoldRecord(0, 0)), gold.get(b, GoldRecord(0, 0)), hits[(a, b)]
            ),
            false_alarm=policy.copying_false_alarm,
            min_shared=policy.copying_min_shared,
            min_identical_texts=policy.copying_min_identical_texts,
        )
        report.judged.append(verdict)
        if verdict.suspicious:
            report.by_worker[a].append(verdict)
            report.by_worker[b].append(verdict)
    return report


def _worker(done: tuple[str, list[Any], datetime | None, str]) -> str:
    return done[0]


def _slots(session: Session, hit_ids: list[int]) -> dict[int, dict[int, tuple[str, Any]]]:
    """Per HIT: position -> (item name, the gold item when the slot is gold)."""
    out: dict[int, dict[int, tuple[str, Any]]] = defaultdict(dict)
    for slot in session.scalars(select(HITSlot).where(HITSlot.published_hit_id.in_(hit_ids))):
        if slot.item is not None:
            out[slot.published_hit_id][slot.position] = (slot.item.external_id, None)
        elif slot.gold_item is not None:
            out[slot.published_hit_id][slot.position] = (slot.gold_item.external_id, slot.gold_item)
    return out


def _gold_records(session: Session, campaign_id: int, worker_ids: set[str]) -> dict[str, GoldRecord]:
    rows = session.execute(
        select(WorkerStats.worker_id, WorkerStats.gold_correct, WorkerStats.gold_total).where(
            WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id.in_(sorted(worker_ids))
        )
    )
    return {w: GoldRecord(int(c or 0), int(t or 0)) for w, c, t in rows}


def lock_partners(session: Session, campaign_id: int, worker_ids: set[str]) -> dict[str, WorkerStats]:
    """The records of partners outside the batch that no other transaction holds, row-locked.

    The batch's own records are already locked; taking more, out of worker
    order, could deadlock with a batch that holds one of them and waits for
    one of ours. So a record another batch holds is skipped: that batch is
    judging that worker right now, and judges the same pair from its side.
    """
    if not worker_ids:
        return {}
    query = (
        select(WorkerStats)
        .where(WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id.in_(sorted(worker_ids)))
        .order_by(WorkerStats.worker_id)
        .with_for_update(skip_locked=True)
        .execution_options(populate_existing=True)
    )
    return {s.worker_id: s for s in session.scalars(query)}


def store_pairs(session: Session, campaign_id: int, report: CopyingReport) -> None:
    """Keep each suspicious pair's evidence, and restate pairs kept before; flushes.

    Rows are written in key order (every batch takes them in that order), after
    the batch's worker records are locked.
    """
    for verdict in sorted(report.judged, key=lambda v: (v.first, v.second)):
        row = session.get(CopyingPair, (campaign_id, verdict.first, verdict.second))
        if row is None and not verdict.suspicious:
            continue  # only pairs that were ever suspicious are kept
        if row is None:
            try:
                with session.begin_nested():
                    row = CopyingPair(
                        campaign_id=campaign_id,
                        first_worker=verdict.first,
                        second_worker=verdict.second,
                        p_value=verdict.p_value,
                        shared_items=0,
                        identical_answers=0,
                        evidence={},
                    )
                    session.add(row)
            except IntegrityError:  # another batch kept it first
                row = session.get(CopyingPair, (campaign_id, verdict.first, verdict.second))
                assert row is not None
        row.suspicious = verdict.suspicious
        row.p_value = verdict.p_value
        row.shared_items = verdict.evidence["shared_items"]
        row.identical_answers = verdict.evidence["identical_answers"]
        row.evidence = verdict.evidence
        row.updated_at = utcnow()
    session.flush()


def with_copying(
    verdict: WorkerVerdict, pairs: list[PairVerdict], record: WorkerStats, policy: QualityPolicy
) -> WorkerVerdict:
    """The worker's verdict once their suspicious pairs are known.

    A confident gold flag stands (the pairs are added to its evidence). Any
    other verdict, a gold approval included, becomes a flag on the signals
    (it holds the work for a person), unless the policy does not count
    copying or QA staff have cleared this worker.
    """
    if not pairs:
        return verdict
    evidence = {**verdict.evidence, COPYING: [p.evidence for p in pairs]}
    signals = dict(evidence.get("signals") or {})
    signals["suspicious"] = sorted({*signals.get("suspicious", []), COPYING})
    evidence["signals"] = signals
    evidence["copying_reason"] = reason(pairs, record.worker_id)
    counts = COPYING in policy.signals and record.flag_review != "clear"
    if verdict.verdict == "flag" and evidence.get("flagged_by") != "signals":
        return WorkerVerdict("flag", verdict.p_below, evidence)
    if not counts:
        return WorkerVerdict(verdict.verdict, verdict.p_below, evidence)
    return WorkerVerdict("flag", verdict.p_below, {**evidence, "flagged_by": "signals"})


def pairs_of(session: Session, campaign_id: int, worker_id: str) -> list[CopyingPair]:
    """The kept pairs a worker is in, most suspicious first (for the dashboard)."""
    return list(
        session.scalars(
            select(CopyingPair)
            .where(
                CopyingPair.campaign_id == campaign_id,
                or_(CopyingPair.first_worker == worker_id, CopyingPair.second_worker == worker_id),
            )
            .order_by(CopyingPair.suspicious.desc(), CopyingPair.p_value)
        )
    )
