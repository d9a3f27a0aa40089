"""Copying pairs (:mod:`hits.requester.quality.copying`) read from a running campaign, kept, and acted on.

Every pair of workers who did the same HIT has a :class:`CopyingPair` row of
counts (:class:`hits.requester.quality.copying.PairCounts`), added to once per
assignment when it is graded (:func:`count_pairs`): the test needs only the
counts and the two gold records, so judging a worker costs one read of their
pairs, however long the campaign. The pairs of the workers a batch decides
are judged again each time (:func:`judge_copying`), the verdict kept on the
row, so the dashboard shows the evidence as it grows. A suspicious pair flags
both workers for QA staff: like the other signals, a flag that holds their
undecided work for a person, never one that rejects.

Unlike the other signals it is consulted whatever gold says: a pair copying
a good worker passes gold, which is what this signal is for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from sqlalchemy import ColumnElement, or_, select, tuple_
from sqlalchemy.orm import Session

from hits.db import insert_missing, utcnow
from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality.copying import (
    EXAMPLES,
    PairCounts,
    PairVerdict,
    SharedHIT,
    SharedItem,
    examples,
    judge_counts,
    reason,
    shared_hit_times,
    tally,
)
from hits.requester.quality.live_signals import _hashable
from hits.requester.quality.policy import GoldRecord, WorkerVerdict
from hits.requester.tables.campaigns import Campaign, HITSlot, PublishedHIT, Submission, WorkerStats
from hits.requester.tables.quality import CopyingPair
from hits.requester.templates import get_template

#: The name of the signal, in ``QualityPolicy.signals`` and in the evidence's ``suspicious``.
COPYING = "copying"
#: Work whose answers are not evidence of anything (the marketplace never took it in).
NOT_WORK = ("void",)


#: The count columns, in :class:`PairCounts` order.
COUNTS = tuple(f.name for f in fields(PairCounts))


def pair_counts(pair: CopyingPair) -> PairCounts:
    """A stored pair's counts, as the test takes them."""
    return PairCounts(*(getattr(pair, name) for name in COUNTS))


@dataclass
class CopyingReport:
    """The pairs judged for a batch of workers: suspicious ones per worker, partners included."""

    by_worker: dict[str, list[PairVerdict]] = field(default_factory=lambda: defaultdict(list))
    judged: list[PairVerdict] = field(default_factory=list)

    @property
    def workers(self) -> set[str]:
        """Every worker in a suspicious pair (the batch's workers and their partners)."""
        return {w for w, found in self.by_worker.items() if found}


def _structured(answer: Any) -> bool:
    """Whether an answer is a list or an object (its comparable form is JSON, not the worker's text)."""
    return not isinstance(answer, int | str | float) and answer is not None


def count_pairs(session: Session, campaign: Campaign, graded: Sequence[Submission]) -> None:
    """Add newly graded submissions to the counts of their pairs; flushes.

    Called once per submission, when it is graded: each is compared with the
    same HIT's work graded before it, and with the batch's own in id order,
    so every pair of assignments is counted exactly once. Pair rows are
    locked in key order after the batch's worker records.
    """
    new = {s.id for s in graded}
    if not new:
        return
    rows = session.execute(
        select(
            Submission.id,
            Submission.published_hit_id,
            Submission.worker_id,
            Submission.answers,
            Submission.submitted_at,
            PublishedHIT.mturk_hit_id,
        )
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            Submission.published_hit_id.in_({s.published_hit_id for s in graded}),
            Submission.graded.is_(True),
            or_(Submission.decision.is_(None), Submission.decision.not_in(NOT_WORK)),
        )
        .order_by(Submission.published_hit_id, Submission.id)
    ).all()
    by_hit: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_hit[row.published_hit_id].append(row)
    slots = _slots(session, list(by_hit))
    template = get_template(campaign.template)
    options = campaign.spec.get("template_options", {})
    added: dict[tuple[str, str], tuple[list[SharedItem], list[SharedHIT]]] = {}
    for hit_id, done in by_hit.items():
        for one in done:
            if one.id not in new:
                continue
            for other in done:
                if other.worker_id == one.worker_id or (other.id in new and other.id >= one.id):
                    continue  # a pair of the batch's own is counted once, from its later one
                a, b = sorted((one, other), key=lambda r: r.worker_id)
                items, hits = added.setdefault((a.worker_id, b.worker_id), ([], []))
                hits.append(SharedHIT(a.mturk_hit_id or "", a.submitted_at, b.submitted_at))
                answers_a, answers_b = a.answers.get("answers", []), b.answers.get("answers", [])
                for position, (name, gold) in slots.get(hit_id, {}).items():
                    if position >= min(len(answers_a), len(answers_b)):
                        continue
                    first, second = answers_a[position], answers_b[position]
                    wrong = False
                    if gold is not None and first == second:
                        score = template.score_gold_item(first, gold.answer, gold.payload, options)
                        wrong = not template.gold_passed(score, options)
                    items.append(
                        SharedItem(
                            name,
                            _hashable(first),
                            _hashable(second),
                            gold is not None,
                            wrong,
                            structured=_structured(first) or _structured(second),
                        )
                    )
    kept = _lock_pairs(session, campaign.id, sorted(added))
    for key, (items, hits) in sorted(added.items()):
        pair = kept[key]
        total = pair_counts(pair) + tally(items, hits)
        for name in COUNTS:
            setattr(pair, name, getattr(total, name))
        evidence = dict(pair.evidence or {})
        evidence["examples"] = (evidence.get("examples", []) + examples(items))[:EXAMPLES]
        evidence["hits"] = (evidence.get("hits", []) + shared_hit_times(hits, *key))[:EXAMPLES]
        pair.evidence = evidence
        pair.updated_at = utcnow()
    session.flush()


def _lock_pairs(
    session: Session, campaign_id: int, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], CopyingPair]:
    """The pairs' rows, created if new, row-locked in key order."""
    if not keys:
        return {}
    query = (
        select(CopyingPair)
        .where(
            CopyingPair.campaign_id == campaign_id,
            tuple_(CopyingPair.first_worker, CopyingPair.second_worker).in_(keys),
        )
        .order_by(CopyingPair.first_worker, CopyingPair.second_worker)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    found = {(r.first_worker, r.second_worker): r for r in session.scalars(query)}
    missing = [k for k in keys if k not in found]
    # In key order; a pair another batch created first is skipped (then read, locked, below).
    insert_missing(
        session,
        CopyingPair,
        [
            {
                "campaign_id": campaign_id,
                "first_worker": first,
                "second_worker": second,
                "evidence": {},
                **dict.fromkeys(COUNTS, 0),
            }
            for first, second in missing
        ],
    )
    if missing:
        found.update(((r.first_worker, r.second_worker), r) for r in session.scalars(query))
    return found


def judge_copying(
    session: Session, campaign: Campaign, worker_ids: Iterable[str], policy: QualityPolicy
) -> CopyingReport:
    """Judge every kept pair of one of ``worker_ids`` from its counts and both gold records. Reads only."""
    wanted = sorted(set(worker_ids))
    report = CopyingReport()
    if not wanted:
        return report
    pairs = session.scalars(
        select(CopyingPair)
        .where(
            CopyingPair.campaign_id == campaign.id,
            or_(CopyingPair.first_worker.in_(wanted), CopyingPair.second_worker.in_(wanted)),
        )
        .order_by(CopyingPair.first_worker, CopyingPair.second_worker)
    ).all()
    gold = _gold_records(session, campaign.id, {w for p in pairs for w in (p.first_worker, p.second_worker)})
    for pair in pairs:
        a, b = pair.first_worker, pair.second_worker
        verdict = judge_counts(
            a,
            b,
            pair_counts(pair),
            gold.get(a, GoldRecord(0, 0)),
            gold.get(b, GoldRecord(0, 0)),
            false_alarm=policy.copying_false_alarm,
            min_shared=policy.copying_min_shared,
            min_identical_texts=policy.copying_min_identical_texts,
        )
        kept = pair.evidence or {}
        verdict.evidence.update(examples=kept.get("examples", []), hits=kept.get("hits", []))
        report.judged.append(verdict)
        if verdict.suspicious:
            report.by_worker[a].append(verdict)
            report.by_worker[b].append(verdict)
    return report


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


def store_verdicts(session: Session, campaign_id: int, report: CopyingReport) -> None:
    """Keep the verdict of each pair that is or was suspicious on its row (the dashboard reads it).

    Written in key order, after the batch's worker records are locked; flushes.
    """
    judged = sorted(report.judged, key=lambda v: (v.first, v.second))
    # Only rows that can change are read, in one statement: those suspicious now and those
    # flagged before (few). A get a pair read every pair judged, thousands a batch at scale.
    suspicious = [(v.first, v.second) for v in judged if v.suspicious]
    wanted: ColumnElement[bool] = CopyingPair.flagged.is_(True)
    if suspicious:
        wanted = or_(wanted, tuple_(CopyingPair.first_worker, CopyingPair.second_worker).in_(suspicious))
    rows = {
        (r.first_worker, r.second_worker): r
        for r in session.scalars(select(CopyingPair).where(CopyingPair.campaign_id == campaign_id, wanted))
    }
    for verdict in judged:
        row = rows.get((verdict.first, verdict.second))
        if row is None or not (verdict.suspicious or row.flagged) or row.evidence == verdict.evidence:
            continue  # a pair never suspicious is not shown: its counts are all it needs
        row.suspicious, row.p_value, row.evidence = verdict.suspicious, verdict.p_value, verdict.evidence
        row.flagged = row.flagged or verdict.suspicious
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
    # The counts go on the worker's submissions; the examples and times stay on the pair's row.
    summaries = [{k: v for k, v in p.evidence.items() if k not in ("examples", "hits")} for p in pairs]
    evidence = {**verdict.evidence, COPYING: summaries}
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
    """The pairs a worker is in that were ever suspicious, most suspicious first (for the dashboard)."""
    return list(
        session.scalars(
            select(CopyingPair)
            .where(
                CopyingPair.campaign_id == campaign_id,
                or_(CopyingPair.first_worker == worker_id, CopyingPair.second_worker == worker_id),
            )
            .where(CopyingPair.flagged.is_(True))
            .order_by(CopyingPair.suspicious.desc(), CopyingPair.p_value)
        )
    )
