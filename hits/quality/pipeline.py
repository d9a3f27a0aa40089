"""The review pipeline: sync submissions, grade gold, decide, apply through the outbox.

Each step is one unit of work for the caller (a Celery task) to run inside
its own transaction; API calls never happen inside a database transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.campaigns.gold import page_slots
from hits.campaigns.models import Campaign, OutboxEntry, PublishedHIT, Submission, WorkerStats
from hits.campaigns.spec import QualityPolicy
from hits.db import utcnow
from hits.market.questions import xml_to_answers
from hits.mturk import Marketplace
from hits.quality import followups
from hits.quality.live_signals import collect_signals
from hits.quality.policy import GoldRecord, WorkerVerdict, judge_error_rate, judge_worker
from hits.quality.signals import combined_verdict
from hits.templates import get_template

log = logging.getLogger(__name__)
#: A queued HIT sync not done after this long is taken to be lost, and queued again.
SYNC_STALE = timedelta(seconds=60)


@dataclass
class SyncReport:
    new_submissions: list[int] = field(default_factory=list)
    outbox: list[int] = field(default_factory=list)


def open_hits(session: Session, access_key_id: str) -> list[tuple[int, int, str]]:
    """(campaign id, published HIT id, marketplace HIT id) of HITs still being worked on.

    Only campaigns published with ``access_key_id``: a worker can read only
    what its own credentials may see.
    """
    rows = session.execute(
        select(PublishedHIT.campaign_id, PublishedHIT.id, PublishedHIT.mturk_hit_id)
        .join(Campaign, Campaign.id == PublishedHIT.campaign_id)
        .where(
            PublishedHIT.status == "open",
            Campaign.status == "running",
            Campaign.access_key_id == access_key_id,
        )
        .order_by(PublishedHIT.id)
    ).all()
    return [(c, p, h) for c, p, h in rows if h]


def running_hit_types(session: Session, access_key_id: str) -> list[str]:
    """HIT types of the running campaigns published with ``access_key_id``."""
    return [
        t
        for t in session.scalars(
            select(Campaign.hit_type_id)
            .where(Campaign.status == "running", Campaign.access_key_id == access_key_id)
            .distinct()
        )
        if t
    ]


def hits_to_sync(
    session: Session, access_key_id: str, reviewable: set[str], now: datetime | None = None
) -> list[tuple[int, int, str]]:
    """Open HITs worth a look, marked as queued: the caller sends one sync task for each.

    Polling every open HIT costs two API calls each per beat; instead a HIT is
    read when its page stored a submission the marketplace has not confirmed
    yet, or when ListReviewableHITs reports it (all work in, or expired), which
    also catches work submitted without passing through the page. A HIT whose
    sync is queued and not yet done is skipped until it goes stale (a lost task).
    """
    now = now or utcnow()
    unsynced = set(
        session.scalars(select(Submission.published_hit_id).where(Submission.synced.is_(False)).distinct())
    )
    wanted = [t for t in open_hits(session, access_key_id) if t[2] in reviewable or t[1] in unsynced]
    if not wanted:
        return []
    fresh = now - SYNC_STALE
    rows = session.scalars(
        select(PublishedHIT).where(PublishedHIT.id.in_([t[1] for t in wanted])).with_for_update()
    ).all()
    due = {p.id for p in rows if p.sync_queued_at is None or p.sync_queued_at < fresh}
    for row in rows:
        if row.id in due:
            row.sync_queued_at = now
    return [t for t in wanted if t[1] in due]


def sync_done(session: Session, published_id: int) -> None:
    """The HIT's queued sync has run: it may be queued again."""
    published = session.get(PublishedHIT, published_id)
    if published is not None:
        published.sync_queued_at = None


def fetch_submitted(market: Marketplace, mturk_hit_id: str) -> list[dict[str, Any]]:
    """The HIT's Submitted assignments, from the marketplace (the authority)."""
    return list(market.assignments_for_hit(mturk_hit_id, ["Submitted"]))


def record_submissions(
    session: Session, published_hit_id: int, assignments: list[dict[str, Any]]
) -> list[int]:
    """Reconcile marketplace assignments with what the HIT page stored; return new ids.

    The marketplace's answer wins: a page-stored submission is overwritten by
    the answer the marketplace holds, and one the page never saw is created.
    """
    # Lock the HIT's row so two overlapping syncs cannot both record an assignment.
    published = session.scalar(
        select(PublishedHIT).where(PublishedHIT.id == published_hit_id).with_for_update()
    )
    assert published is not None
    template = get_template(published_campaign(session, published).template)
    slots = len(published.slots)
    new_ids = []
    for assignment in assignments:
        submission = session.scalar(
            select(Submission).where(Submission.assignment_id == assignment["AssignmentId"])
        )
        if submission is not None and submission.synced:
            continue
        fields = xml_to_answers(assignment.get("Answer") or "<QuestionFormAnswers/>")
        answers = template.answers_from_fields(fields, slots)
        if submission is None:
            submission = Submission(
                assignment_id=assignment["AssignmentId"],
                published_hit_id=published_hit_id,
                worker_id=assignment["WorkerId"],
                source="sync",
            )
            session.add(submission)
        submission.answers = {"answers": answers}
        submission.synced = True
        submit_time, accept_time = assignment.get("SubmitTime"), assignment.get("AcceptTime")
        submission.submitted_at = submit_time
        if submit_time and accept_time:
            submission.work_seconds = (submit_time - accept_time).total_seconds()
        session.flush()
        new_ids.append(submission.id)
    return new_ids


def published_campaign(session: Session, published: PublishedHIT) -> Campaign:
    campaign = session.get(Campaign, published.campaign_id)
    assert campaign is not None
    return campaign


def worker_stats(session: Session, campaign_id: int, worker_id: str) -> WorkerStats:
    """The worker's record, row-locked for this transaction.

    Several tasks update the same record at once (decisions for one worker are
    applied in parallel); the lock turns their read-modify-write into a queue
    on PostgreSQL (SQLite already serialises writers).
    """
    query = (
        select(WorkerStats)
        .where(WorkerStats.campaign_id == campaign_id, WorkerStats.worker_id == worker_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    stats = session.scalar(query)
    if stats is None:
        try:
            with session.begin_nested():
                session.add(
                    WorkerStats(
                        campaign_id=campaign_id,
                        worker_id=worker_id,
                        gold_correct=0,
                        gold_total=0,
                        assignments=0,
                        approved=0,
                        rejected=0,
                        flagged=False,
                    )
                )
        except IntegrityError:
            pass  # another task created it first
        stats = session.scalar(query)
    assert stats is not None
    return stats


def grade(session: Session, submission_id: int) -> Submission:
    """Score a submission's gold slots and add them to the worker's record (once)."""
    submission = session.get(Submission, submission_id)
    assert submission is not None
    if submission.graded:
        return submission
    published = submission.published_hit
    campaign = published_campaign(session, published)
    template = get_template(campaign.template)
    options = campaign.spec.get("template_options", {})
    answers = submission.answers["answers"]
    correct = total = 0
    # Score the gold items this assignment's page showed (chosen per worker), not the plan's.
    for slot in page_slots(session, published, submission.assignment_id):
        if slot.gold is None:
            continue
        total += 1
        score = template.score_gold_item(answers[slot.position], slot.gold.answer, slot.gold.payload, options)
        correct += int(template.gold_passed(score, options))
    submission.gold_correct, submission.gold_total, submission.graded = correct, total, True
    stats = worker_stats(session, campaign.id, submission.worker_id)
    stats.gold_correct += correct
    stats.gold_total += total
    stats.assignments += 1
    session.flush()
    return submission


def decide_worker(session: Session, campaign_id: int, worker_id: str) -> list[int]:
    """Judge a worker and enqueue decisions for their undecided submissions; return outbox ids."""
    campaign = session.get(Campaign, campaign_id)
    assert campaign is not None
    policy = QualityPolicy.model_validate(campaign.spec.get("quality", {}))
    stats = worker_stats(session, campaign_id, worker_id)
    if get_template(campaign.template).has_gold:
        verdict = judge_worker(
            GoldRecord(stats.gold_correct, stats.gold_total),
            threshold=policy.accuracy_threshold,
            confidence=policy.confidence,
            min_gold=policy.min_gold,
        )
        if verdict.verdict == "undecided" and stats.gold_total >= policy.min_gold:
            # Gold cannot tell yet: let the signals speak (a copycat passes some gold).
            signals = collect_signals(session, campaign_id, worker_id)
            counted = [name for name in signals["suspicious"] if name in policy.signals]
            sharpened = combined_verdict(
                verdict, counted, gold_total=stats.gold_total, min_gold=policy.min_gold
            )
            verdict = WorkerVerdict(sharpened, verdict.p_below, {**verdict.evidence, "signals": signals})
    else:
        verdict = _judge_text(session, campaign_id, worker_id, policy)
    if verdict.verdict == "undecided":
        return []
    created: list[int] = []
    if verdict.verdict == "flag" and not stats.flagged:
        created.extend(followups.on_flagged(session, campaign, policy, worker_id))
        stats.flagged = True
        suspicious = [
            name
            for name in verdict.evidence.get("signals", {}).get("suspicious", [])
            if name in policy.signals
        ]
        stats.flag_reason = (
            f"gold accuracy {stats.gold_correct}/{stats.gold_total}; "
            f"P(accuracy < {policy.accuracy_threshold}) = {verdict.p_below:.3f}"
            + (f"; suspicious signals: {', '.join(suspicious)}" if suspicious else "")
            if "gold_total" in verdict.evidence
            else f"misspelt words {verdict.evidence['faults']}/{verdict.evidence['observations']}; "
            f"P(rate > {policy.max_spelling_error_rate}) = {verdict.p_below:.3f}"
        )
    pending = session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(
            PublishedHIT.campaign_id == campaign_id,
            Submission.worker_id == worker_id,
            Submission.graded.is_(True),
            Submission.decision.is_(None),
        )
    ).all()
    for submission in pending:
        if verdict.verdict == "approve":
            action, payload = "approve", {}
        elif policy.flagged_action == "reject":
            action, payload = "reject", {"feedback": policy.rejection_feedback}
        else:
            submission.decision = "held"
            submission.evidence = verdict.evidence
            continue
        submission.decision = action
        submission.evidence = verdict.evidence
        entry = OutboxEntry(
            campaign_id=campaign_id, action=action, target=submission.assignment_id, payload=payload
        )
        session.add(entry)
        session.flush()
        created.append(entry.id)
        if action == "reject":
            follow = followups.on_rejected(session, campaign, policy, submission)
        else:
            follow = followups.on_approved(session, campaign, policy, stats, submission.assignment_id)
        if follow is not None:
            created.append(follow)
    return created


def _judge_text(session: Session, campaign_id: int, worker_id: str, policy: QualityPolicy) -> WorkerVerdict:
    """Free text has no gold: judge the worker's spelling over everything they wrote.

    Duplication across workers is recorded as evidence for the QA reviewer; it
    does not decide on its own, since short sentences about simple pictures
    legitimately coincide.
    """
    from hits.templates.write import spelling_counts

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


def close_finished_hits(session: Session, market_counts: dict[int, int]) -> None:
    """Mark published HITs whose assignments have all been synced as complete."""
    for published_id, expected in market_counts.items():
        published = session.get(PublishedHIT, published_id)
        if published is None:
            continue
        synced = len(
            session.scalars(select(Submission.id).where(Submission.published_hit_id == published_id)).all()
        )
        if synced >= expected:
            published.status = "complete"


def finish_campaigns(session: Session, access_key_id: str) -> list[int]:
    """Move running campaigns with no open HIT to review; hold what is still undecided.

    Undecided work (a worker whose record is neither clearly good nor clearly
    bad) waits for a QA reviewer rather than being approved or rejected blindly.
    """
    finished = []
    running = select(Campaign).where(Campaign.status == "running", Campaign.access_key_id == access_key_id)
    for campaign in session.scalars(running):
        still_open = session.scalar(
            select(PublishedHIT.id)
            .where(PublishedHIT.campaign_id == campaign.id, PublishedHIT.status != "complete")
            .limit(1)
        )
        if still_open is not None:
            continue
        undecided = session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == campaign.id, Submission.decision.is_(None))
        ).all()
        for submission in undecided:
            submission.decision = "held"
            stats = worker_stats(session, campaign.id, submission.worker_id)
            submission.evidence = {
                "gold_correct": stats.gold_correct,
                "gold_total": stats.gold_total,
                "reason": "not enough evidence either way when the campaign finished",
            }
        campaign.status = "review"
        finished.append(campaign.id)
    session.flush()
    return finished


# The outbox lives in its own module; these names stay importable from here.
from hits.quality.outbox import (  # noqa: E402
    apply_entry,
    claim_stale_entries,
    record_failure,
    reopen,
)

__all__ = [
    "SyncReport",
    "apply_entry",
    "claim_stale_entries",
    "close_finished_hits",
    "decide_worker",
    "fetch_submitted",
    "finish_campaigns",
    "grade",
    "hits_to_sync",
    "open_hits",
    "record_failure",
    "record_submissions",
    "reopen",
    "running_hit_types",
    "sync_done",
    "worker_stats",
]
