"""Grade and decide many submissions in one unit of work.

The review pipeline syncs HITs in batches; grading and deciding them one
submission and one worker at a time cost about twenty SQL statements an
assignment, each a round trip. Here a batch reads what it needs with one
query per kind (submissions, gold shown, worker records, pending work) and
writes its outbox entries with one flush.

Worker records are row-locked in one sorted statement before anything is
changed, so two batches (or a batch and the outbox) touching the same
workers queue in the same order instead of deadlocking.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from hits.db import insert_missing
from hits.requester.answers import HELD_ON_AUTHENTICITY, HELD_ON_FLAG
from hits.requester.files.adaptive_gold import AdaptiveGold
from hits.requester.files.campaign import QualityPolicy, stored_policy
from hits.requester.pages.gold import exposures_for, slots_with_gold
from hits.requester.quality import followups, spot_checks
from hits.requester.quality.authenticity import suspect_work
from hits.requester.quality.gold_verdicts import judge_gold
from hits.requester.quality.live_copying import (
    count_pairs,
    judge_copying,
    lock_partners,
    store_verdicts,
    with_copying,
)
from hits.requester.quality.policy import WorkerVerdict, judge_error_rate
from hits.requester.quality.trust import queue_trust_changes
from hits.requester.quality.worker_model import model_reason
from hits.requester.tables.campaigns import (
    Campaign,
    GoldItem,
    OutboxEntry,
    PublishedHIT,
    Submission,
    WorkerStats,
)
from hits.requester.templates import get_template
from hits.requester.templates.base import TaskTemplate

log = logging.getLogger(__name__)


def lock_worker_stats(
    session: Session, campaign_id: int, worker_ids: Iterable[str]
) -> dict[str, WorkerStats]:
    """The workers' records in the campaign, created if new, row-locked for this transaction.

    Several tasks update the same records at once (a batch's grading, the
    outbox counting decisions); the lock turns their read-modify-write into a
    queue on PostgreSQL (SQLite already serialises writers). Rows are locked
    in worker order: every caller takes them in that order.
    """
    wanted = sorted(set(worker_ids))
    if not wanted:
        return {}
    query = (
        select(WorkerStats)
        .where(WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id.in_(wanted))
        .order_by(WorkerStats.worker_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    found = {s.worker_id: s for s in session.scalars(query)}
    missing = [w for w in wanted if w not in found]
    # In worker order; a record another task created first is skipped (then read, locked, below).
    insert_missing(
        session,
        WorkerStats,
        [
            {
                "campaign_id": campaign_id,
                "worker_id": worker_id,
                "gold_correct": 0,
                "gold_total": 0,
                "assignments": 0,
                "approved": 0,
                "rejected": 0,
                "flagged": False,
            }
            for worker_id in missing
        ],
    )
    if missing:
        found.update(
            (s.worker_id, s) for s in session.scalars(query.where(WorkerStats.worker_id.in_(missing)))
        )
    return found


def grade_submissions(session: Session, submission_ids: list[int]) -> list[Submission]:
    """Score the submissions' gold slots and add them to their workers' records (each once).

    Scores the gold items each assignment's page showed (chosen per worker),
    not the plan's. Returns the submissions, graded, in id order.
    """
    if not submission_ids:
        return []
    submissions = list(
        session.scalars(select(Submission).where(Submission.id.in_(submission_ids)).order_by(Submission.id))
    )
    by_campaign: dict[int, list[Submission]] = defaultdict(list)
    for submission in submissions:
        if not submission.graded:
            by_campaign[submission.published_hit.campaign_id].append(submission)
    for campaign_id, todo in sorted(by_campaign.items()):
        campaign = session.get(Campaign, campaign_id)
        assert campaign is not None
        template = get_template(campaign.template)
        options = campaign.spec.get("template_options", {})
        stats = lock_worker_stats(session, campaign_id, (s.worker_id for s in todo))
        shown = exposures_for(session, campaign_id, [s.assignment_id for s in todo])
        for submission in todo:
            answers = submission.answers["answers"]
            correct = total = 0
            for slot in slots_with_gold(submission.published_hit, shown.get(submission.assignment_id, {})):
                if slot.gold is None:
                    continue
                total += 1
                score = _score_or_zero(
                    template, answers[slot.position], slot.gold, options, submission.assignment_id
                )
                correct += int(template.gold_passed(score, options))
            submission.gold_correct, submission.gold_total, submission.graded = correct, total, True
            record = stats[submission.worker_id]
            record.gold_correct += correct
            record.gold_total += total
            record.assignments += 1
        count_pairs(session, campaign, todo)  # once per submission: it is graded once
    session.flush()
    return submissions


def _score_or_zero(
    template: TaskTemplate, answer: Any, gold: GoldItem, options: Mapping[str, Any], assignment_id: str
) -> float:
    """A gold item's score; 0 (a wrong answer) when scoring the worker's answer raises.

    The answer is the worker's own text: one that a template's scoring cannot take must
    cost that worker the item, not stop the whole sync batch's transaction (retried, it
    would fail again, and the marketplace would auto-approve everything in it unjudged).
    """
    try:
        return template.score_gold_item(answer, gold.answer, gold.payload, options)
    except Exception:  # noqa: BLE001 - any failure on worker input scores the item wrong
        log.warning(
            "gold item %s of assignment %s could not be scored; counted wrong",
            gold.id,
            assignment_id,
            exc_info=True,
        )
        return 0.0


def decide_workers(session: Session, campaign_id: int, worker_ids: Iterable[str]) -> list[int]:
    """Judge workers and enqueue decisions for their undecided submissions; return outbox ids in order."""
    campaign = session.get(Campaign, campaign_id)
    assert campaign is not None
    policy = stored_policy(campaign.spec)
    has_gold = get_template(campaign.template).has_gold
    stats = lock_worker_stats(session, campaign_id, worker_ids)
    copying = judge_copying(session, campaign, stats, policy)
    # A partner found copying with one of these workers is judged with them (see lock_partners).
    stats.update(lock_partners(session, campaign_id, copying.workers - set(stats)))
    store_verdicts(session, campaign_id, copying)
    pending: dict[str, list[Submission]] = defaultdict(list)
    # Work held because the signals alone flagged its worker is looked at again: when gold
    # becomes confident, it is decided as the worker's other work is (see _enqueue_decisions).
    held: dict[str, list[Submission]] = defaultdict(list)
    for submission in session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            PublishedHIT.campaign_id == campaign_id,
            Submission.worker_id.in_(list(stats)),
            Submission.graded.is_(True),
            or_(Submission.decision.is_(None), Submission.decision == "held"),
        )
        .order_by(Submission.id)
    ):
        if submission.decision is None:
            pending[submission.worker_id].append(submission)
        elif held_on_signals(submission):
            held[submission.worker_id].append(submission)
    _drop_queued(session, pending, held)
    # Work whose typing record or text looks not the worker's own: held for a person, never rejected for it.
    suspects = (
        suspect_work(session, campaign_id, [s for work in pending.values() for s in work])
        if policy.hold_on_authenticity
        else {}
    )
    if has_gold:
        straightline = get_template(campaign.template).straightlining_suspicious
        verdicts = judge_gold(session, campaign_id, [stats[w] for w in sorted(stats)], policy, straightline)
    else:
        verdicts = {w: _judge_text(session, campaign_id, w, policy) for w in sorted(stats)}
    for worker_id, pairs in copying.by_worker.items():
        if worker_id in verdicts:
            verdicts[worker_id] = with_copying(verdicts[worker_id], pairs, stats[worker_id], policy)
    created: list[OutboxEntry | int] = []
    for worker_id in sorted(stats):
        verdict = verdicts[worker_id]
        if verdict.verdict != "undecided":
            created.extend(
                _enqueue_decisions(
                    session,
                    campaign,
                    policy,
                    stats[worker_id],
                    verdict,
                    pending[worker_id],
                    held[worker_id],
                    suspects,
                )
            )
        else:
            _hold_suspects(pending[worker_id], verdict, suspects)
    # Approved on the model's word alone: a share goes to a person afterwards (not delayed). Drawn
    # once for the batch: two queries, where a draw per worker cost a tenth of a sync's time.
    spot_checks.sample_approved(
        session,
        campaign,
        policy,
        [
            s
            for w in sorted(stats)
            if verdicts[w].verdict == "approve"
            for s in pending[w]
            if s.decision == "approve"
        ],
    )
    adaptive = campaign.spec.get("adaptive_gold")
    if adaptive and has_gold:
        # After the decisions: a worker flagged just now has ``flagged`` set, and loses trust.
        judged = {w: (verdicts[w], stats[w]) for w in stats}
        created.extend(
            queue_trust_changes(session, campaign, AdaptiveGold.model_validate(adaptive), policy, judged)
        )
    session.flush()  # one INSERT for the batch's entries; ids are known after it
    return [c if isinstance(c, int) else c.id for c in created]


def _drop_queued(session: Session, *waiting: dict[str, list[Submission]]) -> None:
    """Leave out work whose approval or rejection is queued already (see ``followups.decided_in_outbox``).

    Its submission takes that decision: deciding it again would queue a
    contradicting entry, or one whose unique key fails the whole batch.
    """
    queued = followups.decided_in_outbox(
        session, [s.assignment_id for lists in waiting for work in lists.values() for s in work]
    )
    if not queued:
        return
    for lists in waiting:
        for worker_id, work in lists.items():
            for submission in work:
                if submission.assignment_id in queued:
                    submission.decision = queued[submission.assignment_id]
            lists[worker_id] = [s for s in work if s.assignment_id not in queued]


def held_on_signals(submission: Submission) -> bool:
    """Whether a submission is held on signals alone: its worker's flag on them, or its own authenticity.

    Such work waits for a person until gold is confident the worker is bad;
    then it is decided with the rest of their work.
    """
    evidence = submission.evidence or {}
    return submission.decision == "held" and (
        (evidence.get("held_for") == HELD_ON_FLAG and evidence.get("flagged_by") == "signals")
        or evidence.get("held_for") == HELD_ON_AUTHENTICITY
    )


def _hold_suspects(pending: list[Submission], verdict: WorkerVerdict, suspects: Mapping[int, Any]) -> None:
    """Hold the work of an undecided worker that an authenticity signal fired for (the rest waits)."""
    for submission in pending:
        if submission.id in suspects:
            submission.decision = "held"
            submission.evidence = {
                **verdict.evidence,
                "held_for": HELD_ON_AUTHENTICITY,
                "authenticity": suspects[submission.id],
            }


def flagged_by_signals(verdict: WorkerVerdict) -> bool:
    """Whether a flag rests on the signals alone, gold not being confident either way."""
    return verdict.verdict == "flag" and verdict.evidence.get("flagged_by") == "signals"


def _enqueue_decisions(
    session: Session,
    campaign: Campaign,
    policy: QualityPolicy,
    record: WorkerStats,
    verdict: WorkerVerdict,
    pending: list[Submission],
    held: list[Submission],
    suspects: Mapping[int, Any] | None = None,
) -> list[OutboxEntry | int]:
    """Outbox entries (and follow-ups) for a judged worker's pending submissions, in apply order.

    ``held``: the worker's work held on a signals-only flag. It waits for a
    person until gold is confident the worker is bad; then it is decided as
    the rest of their work (rejected, or held per ``flagged_action``), so two
    workers with the same gold record end the same whichever a signal caught
    first. A gold approval leaves it held: the signals saw something gold did
    not, and a reviewer decides. ``suspects``: evidence of pending work an
    authenticity signal fired for (``authenticity.suspect_work``), held
    instead of approved; a confident gold rejection still rejects it.
    """
    suspects = suspects or {}
    created: list[OutboxEntry | int] = []
    # Only a confident gold verdict acts on its own (reject, block, message). A
    # flag resting on signals, or any flag of a worker QA staff have cleared,
    # holds the work for a person: the machine never overrules a reviewer.
    cleared = record.flag_review == "clear"
    acts = verdict.verdict == "flag" and not flagged_by_signals(verdict) and not cleared
    if verdict.verdict == "flag" and not cleared:
        if acts:
            # Idempotent per worker: a worker flagged on signals earlier gets the policy's
            # block and message once gold confirms it.
            created.extend(followups.on_flagged(session, campaign, policy, record.worker_id))
        reason = _flag_reason(record, policy, verdict)
        # Kept current for the dashboard: a confident gold flag always restates it; a flag on
        # the signals restates a signals flag (gold's counts move on) but never replaces a gold one.
        restate = acts or SIGNALS_REASON in (record.flag_reason or "")
        if not record.flagged or (restate and record.flag_reason != reason):
            record.flagged, record.flag_reason = True, reason
        if acts and held:
            pending = sorted([*held, *pending], key=lambda s: s.id)
    for submission in pending:
        # Kept through a later re-decision (work held on its authenticity, then on a flag).
        authenticity = suspects.get(submission.id) or (submission.evidence or {}).get("authenticity")
        if verdict.verdict == "approve" and submission.id not in suspects:
            action, payload = "approve", {}
        elif acts and policy.flagged_action == "reject":
            action, payload = "reject", {"feedback": policy.rejection_feedback}
        else:
            submission.decision = "held"
            # Held on a flag (signals alone, or a worker a reviewer cleared), or on the work's own
            # authenticity signals: out of the results until a reviewer approves it.
            held_for = HELD_ON_FLAG if verdict.verdict == "flag" else HELD_ON_AUTHENTICITY
            submission.evidence = {**verdict.evidence, "held_for": held_for}
            if authenticity:
                submission.evidence["authenticity"] = authenticity
            continue
        submission.decision = action
        submission.evidence = verdict.evidence
        entry = OutboxEntry(
            campaign_id=campaign.id, action=action, target=submission.assignment_id, payload=payload
        )
        session.add(entry)
        created.append(entry)
        if action == "reject":
            follow = followups.on_rejected(session, campaign, policy, submission)
        else:
            follow = followups.on_approved(session, campaign, policy, record, submission.assignment_id)
        if follow is not None:
            created.append(follow)
    return created


#: How a flag reason resting on the signals names them.
SIGNALS_REASON = "suspicious signals"


def _flag_reason(record: WorkerStats, policy: QualityPolicy, verdict: WorkerVerdict) -> str:
    copying = verdict.evidence.get("copying_reason")
    if copying and verdict.evidence.get("flagged_by") == "signals":
        others = [
            name
            for name in verdict.evidence.get("signals", {}).get("suspicious", [])
            if name in policy.signals and name != "copying"
        ]
        also = f"; also {', '.join(others)}" if others else ""
        gold = f"; gold accuracy {record.gold_correct}/{record.gold_total}" if record.gold_total else ""
        return f"{SIGNALS_REASON}: {copying}{also}{gold}"
    if "gold_total" not in verdict.evidence:
        return (
            f"misspelt words {verdict.evidence['faults']}/{verdict.evidence['observations']}; "
            f"P(rate > {policy.max_spelling_error_rate}) = {verdict.p_below:.3f}"
        )
    suspicious = [
        name for name in verdict.evidence.get("signals", {}).get("suspicious", []) if name in policy.signals
    ]
    evidence = verdict.evidence
    if evidence.get("model") == "one-coin":
        # The worker model's own words: what the evidence implies, and how sure it is.
        return model_reason(verdict) + (f"; {SIGNALS_REASON}: {', '.join(suspicious)}" if suspicious else "")
    if evidence.get("flagged_on") == "recent gold":
        return (
            f"gold accuracy turned: {evidence['recent_gold_correct']}/{evidence['recent_gold_total']} "
            f"in the latest block after {evidence['gold_before_recent']}; "
            f"P(recent accuracy < {policy.accuracy_threshold}) = {verdict.p_below:.3f}; "
            f"whole record {record.gold_correct}/{record.gold_total}"
        )
    return (
        f"gold accuracy {record.gold_correct}/{record.gold_total}; "
        f"P(accuracy < {policy.accuracy_threshold}) = {verdict.p_below:.3f}"
        + (f"; {SIGNALS_REASON}: {', '.join(suspicious)}" if suspicious else "")
    )


def _judge_text(session: Session, campaign_id: int, worker_id: str, policy: QualityPolicy) -> WorkerVerdict:
    """Free text has no gold: judge the worker's spelling over everything they wrote.

    Duplication across workers is recorded as evidence for the QA reviewer; it
    does not decide on its own, since short sentences about simple pictures
    legitimately coincide.
    """
    from hits.requester.templates.write import spelling_counts

    texts = [
        str(answer)
        for answers in session.scalars(
            select(Submission.answers)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign_id, Submission.worker_id == worker_id)
        )
        for answer in answers.get("answers", [])
    ]
    counts = [spelling_counts(t) for t in texts]
    verdict = judge_error_rate(
        sum(c[0] for c in counts),
        sum(c[1] for c in counts),
        max_rate=policy.max_spelling_error_rate,
        confidence=policy.confidence,
        min_total=policy.min_words,
    )
    verdict.evidence["sentences"] = len(texts)
    return verdict
