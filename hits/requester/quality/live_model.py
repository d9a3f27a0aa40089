"""The worker model of :mod:`hits.requester.quality.worker_model`, read from a running campaign's records.

For the workers of a review batch: their graded assignments in the order
submitted (each one's gold counts, and their answers to the HIT's ordinary
items), everyone else's answers to those items (rejected and void work left
out), the others' gold records (their accuracy, as the consensus weighs
them: :func:`~hits.requester.quality.worker_model.voter_accuracy`) and the
copying pairs' counts (a suspected pair is one voter). Five
queries a batch, whatever its size; no state of its own: the same records
give the same verdict whenever they are judged. Reads only, never writes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.answers import LEFT_OUT
from hits.requester.quality.copying import agreement_p_value
from hits.requester.quality.model_consensus import leave_one_out
from hits.requester.quality.policy import GoldRecord
from hits.requester.quality.worker_model import (
    PARTNER_MIN_SHARED,
    PARTNER_P,
    Evidence,
    WorkerEvidence,
    partner_record,
    voter_accuracy,
)
from hits.requester.tables.campaigns import HITSlot, PublishedHIT, Submission, WorkerStats
from hits.requester.tables.quality import CopyingPair

#: Agreement is counted only where answers are few distinct plain values (a rating, a category):
#: exact agreement on a span, an ordering or a text says little about being right.
MAX_CLASSES = 12


#: What a plain label is (a tuple: ``int | str`` would build a union object at every call).
_PLAIN = (int, str)


def _label(answer: Any) -> Hashable | None:
    return answer if isinstance(answer, _PLAIN) and not isinstance(answer, bool) else None


def campaign_evidence(
    session: Session, campaign_id: int, worker_ids: Sequence[str]
) -> tuple[dict[str, WorkerEvidence], int]:
    """Each worker's evidence for :func:`~hits.requester.quality.worker_model.judge_model`, and the classes.

    Gold only (no agreement) when the campaign's answers are not a few plain values.
    """
    wanted = sorted(set(worker_ids))
    own = session.execute(
        select(
            Submission.worker_id,
            Submission.published_hit_id,
            Submission.id,
            Submission.gold_correct,
            Submission.gold_total,
            Submission.decision,
        )
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            PublishedHIT.campaign_id == campaign_id,
            Submission.worker_id.in_(wanted),
            Submission.graded.is_(True),
        )
        .order_by(Submission.worker_id, Submission.submitted_at.nulls_last(), Submission.id)
    ).all()
    hit_ids = sorted({row.published_hit_id for row in own})
    items: dict[int, list[int]] = defaultdict(list)  # HIT -> positions of its ordinary items
    for hit, position in session.execute(
        select(HITSlot.published_hit_id, HITSlot.position).where(
            HITSlot.published_hit_id.in_(hit_ids), HITSlot.item_id.is_not(None)
        )
    ):
        items[hit].append(position)
    labels: dict[tuple[int, int], list[tuple[str, Hashable]]] = defaultdict(list)
    counts: Counter[Hashable] = Counter()
    plain = True
    # Everyone's labels on those HITs' ordinary items (position, label), the wanted workers' own
    # among them: read and parsed once, by submission id.
    answered: dict[int, list[tuple[int, Hashable]]] = {}
    for sid, worker, hit, answers, decision in session.execute(
        select(
            Submission.id,
            Submission.worker_id,
            Submission.published_hit_id,
            Submission.answers,
            Submission.decision,
        )
        .where(Submission.published_hit_id.in_(hit_ids))
        .order_by(Submission.submitted_at.nulls_last(), Submission.id)
    ):
        given = (answers or {}).get("answers", [])
        answered[sid] = [
            (position, _label(given[position])) for position in items[hit] if position < len(given)
        ]
        if decision in LEFT_OUT:
            continue
        for position, label in answered[sid]:
            plain = plain and label is not None
            labels[(hit, position)].append((worker, label))
            counts[label] += 1
    agreement = plain and 2 <= len(counts) <= MAX_CLASSES
    classes = max(2, len(counts)) if agreement else 2
    voters = {w for votes in labels.values() for w, _ in votes} | set(wanted)
    records = {
        s.worker_id: GoldRecord(s.gold_correct, s.gold_total)
        for s in session.scalars(
            select(WorkerStats).where(
                WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id.in_(sorted(voters))
            )
        )
    }
    partners = _partners(session, campaign_id, records) if agreement else set()
    partnered = {w for pair in partners for w in pair}
    total = sum(counts.values()) + len(counts)
    priors = {label: (n + 1) / total for label, n in counts.items()}
    accuracy = {w: voter_accuracy(r, classes) for w, r in records.items()}
    chance = 1 / classes
    # Every ordinary answer of the wanted workers' against the others' on its item, in one pass.
    asked = [
        ((row.published_hit_id, position), row.worker_id, label)
        for row in own
        for position, label in (answered[row.id] if agreement else ())
    ]
    found = iter(
        leave_one_out(
            labels,
            asked,
            lambda w: accuracy.get(w, chance),
            priors,
            lambda a, b: (min(a, b), max(a, b)) in partners,
            partnered,
        )
        if asked
        else []
    )
    out: dict[str, tuple[list[list[Evidence]], list[bool]]] = {w: ([], []) for w in wanted}
    for row in own:
        evidence = [Evidence(1.0, True)] * int(row.gold_correct or 0)
        evidence += [Evidence(0.0, True)] * int((row.gold_total or 0) - (row.gold_correct or 0))
        for _ in answered[row.id] if agreement else ():
            p = next(found)
            if p is not None:
                evidence.append(Evidence(p, False))
        out[row.worker_id][0].append(evidence)
        out[row.worker_id][1].append(row.decision is None)
    return {w: WorkerEvidence(a, u) for w, (a, u) in out.items()}, classes


def _partners(session: Session, campaign_id: int, records: dict[str, GoldRecord]) -> set[tuple[str, str]]:
    """Pairs of workers (in key order) who agree more than their gold accuracies explain (loosely)."""
    found = set()
    voters = sorted(records)
    # Four columns, not the rows: the voters of a batch may be most of a campaign's workers, and
    # loading their pairs as objects was a quarter of the model's read.
    for first, second, identical, shared in session.execute(
        select(
            CopyingPair.first_worker,
            CopyingPair.second_worker,
            CopyingPair.identical_answers,
            CopyingPair.shared_items,
        ).where(
            CopyingPair.campaign_id == campaign_id,
            CopyingPair.shared_items >= PARTNER_MIN_SHARED,
            CopyingPair.first_worker.in_(voters),
            CopyingPair.second_worker.in_(voters),
        )
    ):
        better = partner_record(records[first], records[second])
        if agreement_p_value(identical, shared, better, better) <= PARTNER_P:
            found.add((min(first, second), max(first, second)))
    return found
