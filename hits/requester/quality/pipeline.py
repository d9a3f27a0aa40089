"""The review pipeline: read HITs' work, record it, grade gold, decide, close finished HITs.

Which HITs to read, and when, is :mod:`hits.requester.quality.sync_queue`'s part;
applying the decisions through the API is :mod:`hits.requester.quality.outbox`'s.

Each step is one unit of work for the caller (a Celery task) to run inside
its own transaction; API calls never happen inside a database transaction.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hits.requester.mturk import Marketplace, NotFound
from hits.requester.quality import followups
from hits.requester.quality.outbox import MAX_ASSIGNMENTS_AFTER, count_decisions
from hits.requester.quality.review import decide_workers, grade_submissions, lock_worker_stats
from hits.requester.tables.campaigns import (
    CANCELLED,
    CANCELLING,
    PAUSED,
    Campaign,
    OutboxEntry,
    PublishedHIT,
    Submission,
)
from hits.requester.tables.workflows import stage_waits
from hits.requester.templates import get_template
from hits.requester.templates.arrangements import unscrambled_answers
from hits.wire.authenticity import API_MEMBER, parse_summary, split_summary
from hits.wire.documents import xml_to_answers

log = logging.getLogger(__name__)


def sync_done(session: Session, published_id: int) -> None:
    """The HIT's queued sync has run: it may be queued again."""
    published = session.get(PublishedHIT, published_id)
    if published is not None:
        published.sync_queued_at = None


#: The assignments a sync reads: work to review, and work the marketplace has decided
#: (auto-approved while the workers were down, or approved or rejected outside hitforge).
SYNCED_STATUSES = ("Submitted", "Approved", "Rejected")
#: The decision a sync records for work the marketplace decided itself.
MARKET_DECISIONS = {"Approved": "approve", "Rejected": "reject"}
#: The decision of answers a HIT page stored that the marketplace never confirmed (the
#: worker returned or abandoned the assignment): not work, never reviewed or approved;
#: whatever reads results should leave it out as it does rejected work.
VOID = "void"


def fetch_assignments(market: Marketplace, mturk_hit_id: str) -> list[dict[str, Any]]:
    """The HIT's Submitted, Approved and Rejected assignments, from the marketplace (the authority)."""
    return list(market.assignments_for_hit(mturk_hit_id, list(SYNCED_STATUSES)))


def lock_hits(session: Session, published_ids: list[int]) -> dict[int, PublishedHIT]:
    """The published HITs, row-locked in id order (the order every caller takes them in).

    Keep the returned mapping while working on them: the session holds
    unchanged objects weakly, and a HIT dropped from it is loaded again, with
    its slots and their items, on the next ``session.get``.
    """
    return {
        p.id: p
        for p in session.scalars(
            select(PublishedHIT)
            .where(PublishedHIT.id.in_(sorted(published_ids)))
            .order_by(PublishedHIT.id)
            .with_for_update()
        )
    }


@dataclass
class Recorded:
    """What recording a batch did: the submissions new to review, and the marketplace's decisions taken."""

    new_ids: list[int]
    #: Decision ("approve" or "reject") by assignment id, of work the marketplace decided itself.
    market_decisions: dict[str, str]


def record_assignments(
    session: Session,
    assignments_by_hit: dict[int, list[dict[str, Any]]],
    locked: dict[int, PublishedHIT] | None = None,
) -> Recorded:
    """Reconcile several HITs' marketplace assignments with what their pages stored.

    The marketplace's answer wins: a page-stored submission is overwritten by
    the answer the marketplace holds, and one the page never saw is created.
    Work the marketplace has already approved or rejected is recorded with
    that decision (see :func:`record_market_decision`): it is graded as
    evidence on its worker, and no outbox entry is made for it. The HITs'
    rows are locked (in id order; ``locked``: already, by the caller) so two
    overlapping syncs cannot both record an assignment.
    """
    ids = sorted(assignments_by_hit)
    published_rows = locked if locked is not None else lock_hits(session, ids)
    wanted = [a["AssignmentId"] for batch in assignments_by_hit.values() for a in batch]
    stored = {
        s.assignment_id: s
        for s in session.scalars(select(Submission).where(Submission.assignment_id.in_(wanted)))
    }
    recorded: list[Submission] = []
    market_decisions: dict[str, str] = {}
    for published_hit_id in ids:
        published = published_rows[published_hit_id]
        template = get_template(published_campaign(session, published).template)
        slots = len(published.slots)
        for assignment in assignments_by_hit[published_hit_id]:
            submission = stored.get(assignment["AssignmentId"])
            if submission is not None and submission.synced:
                if record_market_decision(submission, assignment):
                    market_decisions[submission.assignment_id] = str(submission.decision)
                continue
            fields = xml_to_answers(assignment.get("Answer") or "<QuestionFormAnswers/>")
            # The page's typing record is not an answer: kept beside them, out of every template's sight
            # (the marketplace sends it beside the answer; one found among the fields is dropped too).
            fields, in_fields = split_summary(fields)
            typing_record = parse_summary(assignment.get(API_MEMBER)) or in_fields
            answers = template.answers_from_fields(fields, slots)
            # Page terms (e.g. left/right) to the items' own, with what the page's arrangement was.
            answers = unscrambled_answers(session, template, published, assignment["AssignmentId"], answers)
            if submission is None:
                submission = Submission(
                    assignment_id=assignment["AssignmentId"],
                    published_hit_id=published_hit_id,
                    worker_id=assignment["WorkerId"],
                    source="sync",
                )
                session.add(submission)
            # Who did it and for which HIT come from the marketplace too: the page was
            # told them in its URL, which the worker can edit.
            submission.worker_id = assignment["WorkerId"]
            if submission.published_hit_id != published_hit_id:
                submission.published_hit = published
            submission.answers = {"answers": answers}
            if typing_record is not None:  # else what the page stored, if it did (another marketplace)
                submission.authenticity = typing_record
            submission.synced = True
            if submission.decision == VOID:
                submission.decision = None  # confirmed after all
            if record_market_decision(submission, assignment):
                market_decisions[submission.assignment_id] = str(submission.decision)
            submit_time, accept_time = assignment.get("SubmitTime"), assignment.get("AcceptTime")
            submission.submitted_at = submit_time
            if submit_time and accept_time:
                submission.work_seconds = (submit_time - accept_time).total_seconds()
            recorded.append(submission)
    session.flush()  # one INSERT for the batch's new submissions
    return Recorded([s.id for s in recorded], market_decisions)


def record_market_decision(submission: Submission, assignment: dict[str, Any]) -> bool:
    """Record the marketplace's decision on a submission hitforge has not decided; whether it did.

    Work hitforge had not decided, or held for QA, that the marketplace
    approved or rejected (its auto-approval, or a decision made outside
    hitforge) takes the marketplace's decision, and its evidence says so. A
    decision of hitforge's own is left alone: the outbox applies it.
    """
    decision = MARKET_DECISIONS.get(assignment.get("AssignmentStatus", "Submitted"))
    if decision is None or submission.decision not in (None, "held"):
        return False
    submission.decision = decision
    submission.evidence = {
        **(submission.evidence or {}),
        "decided_by": "marketplace",
        "marketplace_status": assignment["AssignmentStatus"],
        "reason": f"{assignment['AssignmentStatus'].lower()} on the marketplace, not by hitforge "
        "(auto-approved, or decided outside hitforge)",
    }
    return True


def published_campaign(session: Session, published: PublishedHIT) -> Campaign:
    campaign = session.get(Campaign, published.campaign_id)
    assert campaign is not None
    return campaign


@dataclass
class FetchedHIT:
    """What the marketplace said of one HIT: the HIT, then its assignments (:data:`SYNCED_STATUSES`)."""

    campaign_id: int
    published_id: int
    hit: dict[str, Any]
    assignments: list[dict[str, Any]]


#: The fields of a HIT the review reads (ListReviewableHITs returns them as GetHIT does).
HIT_FIELDS = (
    "HITId",
    "HITStatus",
    "NumberOfAssignmentsPending",
    "NumberOfAssignmentsCompleted",
    "MaxAssignments",
)
#: MTurk's status of a deleted HIT; also what a sync takes a HIT the marketplace no longer has for.
DISPOSED = "Disposed"


def hit_snapshot(hit: dict[str, Any]) -> dict[str, Any]:
    """What :func:`review_hits` needs of a HIT, small enough to travel in a task message."""
    return {name: hit[name] for name in HIT_FIELDS}


def fetch_hits(
    market: Marketplace,
    targets: list[tuple[int, int, str]],
    threads: int = 4,
    known: dict[str, dict[str, Any]] | None = None,
) -> list[FetchedHIT]:
    """Read each target HIT and its assignments (:func:`fetch_assignments`), several HITs at a time.

    Per HIT the HIT is read first: if it is Reviewable with nothing pending,
    no submission can arrive after the listing, so closing it is safe. A HIT
    in ``known`` (from a ListReviewableHITs made before now, which is just as
    safe) is not read again. The calls wait on the network, not the CPU: a
    few threads overlap them. A HIT the marketplace does not have (deleted by
    the requester's own script) comes back :data:`DISPOSED` with no work, for
    :func:`review_hits` to close; the others in the batch are synced as ever.
    """
    known = known or {}

    def one(target: tuple[int, int, str]) -> FetchedHIT:
        campaign_id, published_id, mturk_hit_id = target
        try:
            hit = known.get(mturk_hit_id) or hit_snapshot(market.get_hit(mturk_hit_id))
            return FetchedHIT(campaign_id, published_id, hit, fetch_assignments(market, mturk_hit_id))
        except NotFound as exc:
            log.warning(
                "HIT %s of campaign %s is gone from the marketplace: %s",
                mturk_hit_id,
                campaign_id,
                exc.message,
            )
            gone = dict.fromkeys(HIT_FIELDS, 0) | {"HITId": mturk_hit_id, "HITStatus": DISPOSED}
            return FetchedHIT(campaign_id, published_id, gone, [])

    if len(targets) <= 1:
        return [one(t) for t in targets]
    with ThreadPoolExecutor(max_workers=min(threads, len(targets))) as pool:
        return list(pool.map(one, targets))


def review_hits(session: Session, fetched: list[FetchedHIT]) -> list[int]:
    """Record, grade and decide several HITs' work in one transaction; return outbox ids in apply order.

    HIT rows are locked in id order, then worker records in worker order, the
    same order every caller uses.
    """
    fetched = sorted(fetched, key=lambda f: f.published_id)
    # Held for the whole batch (see lock_hits), with their campaigns.
    locked = lock_hits(session, [f.published_id for f in fetched])
    campaigns = {c: session.get(Campaign, c) for c in {p.campaign_id for p in locked.values()}}
    assert all(campaigns.values())
    recorded = record_assignments(session, {f.published_id: f.assignments for f in fetched}, locked)
    workers: dict[int, set[str]] = defaultdict(set)
    for submission in grade_submissions(session, recorded.new_ids):
        workers[submission.published_hit.campaign_id].add(submission.worker_id)
    # Graded, so their records exist; no outbox entry: the marketplace has applied them.
    count_decisions(session, recorded.market_decisions)
    outbox: list[int] = []
    for campaign_id in sorted(workers):
        outbox.extend(decide_workers(session, campaign_id, workers[campaign_id]))
    done_as_read = [
        f
        for f in fetched
        if f.hit["HITStatus"] in ("Reviewable", "Reviewing") and f.hit["NumberOfAssignmentsPending"] == 0
    ]
    stale = stale_after_repost(session, done_as_read)
    finished = {f.published_id: market_count(f) for f in done_as_read if f.published_id not in stale}
    outbox.extend(close_finished_hits(session, finished))
    # Deleted on the marketplace (the requester's own DeleteHIT): nothing more to read, and
    # nothing to set to Reviewing. Closed, so its campaign can finish; answers its page stored
    # that the marketplace never confirmed are voided then, as for any HIT.
    for f in fetched:
        published = locked.get(f.published_id)
        if f.hit["HITStatus"] == DISPOSED and published is not None and published.status == "open":
            published.status = "complete"
    for f in fetched:
        sync_done(session, f.published_id)
    return outbox


def stale_after_repost(session: Session, fetched: list[FetchedHIT]) -> set[int]:
    """HITs of ``fetched`` read before a re-post of theirs was applied: not to be closed from that read.

    A sync reads the marketplace before it locks the HITs (and a listing's
    snapshot may wait in the queue a while), so a re-post applied in between
    leaves it holding a finished HIT that has an assignment open again.
    Closing it then would leave the redo's work unread and its campaign
    finished without it. Each applied re-post records how many assignments
    its HIT allowed after it; a read showing fewer came before it. Asked under
    the HITs' locks: a re-post marks itself done and re-opens its HIT in one
    commit, so it is either seen here or re-opens the HIT after this batch
    commits. The next sync reads the HIT afresh.
    """
    by_id = {f.published_id: f for f in fetched}
    if not by_id:
        return set()
    reposts = session.execute(
        select(Submission.published_hit_id, OutboxEntry.payload)
        .join(OutboxEntry, OutboxEntry.target == Submission.assignment_id)
        .where(
            Submission.published_hit_id.in_(sorted(by_id)),
            OutboxEntry.campaign_id.in_(sorted({f.campaign_id for f in fetched})),
            OutboxEntry.action == "repost",
            OutboxEntry.status == "done",
        )
    ).all()
    stale = set()
    for published_id, payload in reposts:
        after = payload.get(MAX_ASSIGNMENTS_AFTER)
        seen = by_id[published_id].hit.get("MaxAssignments")
        # A re-post applied before this version recorded nothing: long done, nothing to compare.
        if after is not None and (seen is None or int(seen) < int(after)):
            stale.add(published_id)
    return stale


def market_count(fetched: FetchedHIT) -> int:
    """How many assignments the marketplace holds for a HIT: completed (approved or rejected) and submitted.

    The listing read after the HIT holds the decided ones too; the larger
    figure wins, so a HIT never closes with work of it unread.
    """
    submitted = sum(1 for a in fetched.assignments if a.get("AssignmentStatus", "Submitted") == "Submitted")
    return max(fetched.hit["NumberOfAssignmentsCompleted"] + submitted, len(fetched.assignments))


def close_finished_hits(session: Session, market_counts: dict[int, int]) -> list[int]:
    """Mark published HITs whose assignments have all been synced as complete.

    ``market_counts``: the number of assignments the marketplace holds for
    each HIT. Each HIT closed is also queued to be set to Reviewing on the
    marketplace (:func:`followups.on_hits_complete`); returns those outbox ids.
    """
    if not market_counts:
        return []
    # Answers a page stored that the marketplace has not confirmed do not count.
    synced = dict(
        session.execute(
            select(Submission.published_hit_id, func.count())
            .where(Submission.published_hit_id.in_(list(market_counts)), Submission.synced.is_(True))
            .group_by(Submission.published_hit_id)
        ).all()
    )
    closed = []
    # A paused campaign's HITs were expired to pause them, not because they are done: they stay open.
    paused = set(
        session.scalars(
            select(PublishedHIT.id)
            .join(Campaign, Campaign.id == PublishedHIT.campaign_id)
            .where(PublishedHIT.id.in_(list(market_counts)), Campaign.status == PAUSED)
        )
    )
    for published_id in sorted(market_counts):
        published = session.get(PublishedHIT, published_id)
        if published is None or published.status == "complete" or published_id in paused:
            continue
        if synced.get(published_id, 0) >= market_counts[published_id]:
            published.status = "complete"
            # .get: a HIT that expired with no work in it has no submission row at all.
            closed.append((published, synced.get(published_id, 0)))
    entries = followups.on_hits_complete(session, closed)
    session.flush()
    return [e.id for e in entries]


@dataclass
class Finished:
    """What finishing campaigns did: the campaigns moved on, and the decisions made at the end."""

    campaigns: list[int]
    #: Outbox entries queued by judging the undecided once more on all the evidence: apply after commit.
    outbox: list[int]


def finish_campaigns(session: Session, access_key_id: str) -> Finished:
    """Move running campaigns with no open HIT to review; judge again, then hold, what is still undecided.

    A worker's verdict under the worker model rests on everyone's answers to
    the items they saw, so one judged undecided when their own last work
    synced may be clear once the others' work is in: every worker with
    undecided work is judged once more, on all of it, and their decisions
    queued. What stays undecided (a worker neither clearly good nor clearly
    bad) waits for a QA reviewer rather than being approved or rejected
    blindly. Answers a HIT page stored that the marketplace never confirmed
    (every HIT is closed, so the worker returned or abandoned the assignment)
    are not work: they are marked ``void``, out of the QA queue and the results.
    """
    finished: list[int] = []
    decided: list[int] = []
    # A cancelled campaign finishes the same way once its submitted work is in, as CANCELLED.
    running = select(Campaign.id).where(
        Campaign.status.in_(("running", CANCELLING)), Campaign.access_key_id == access_key_id
    )
    for campaign_id in session.scalars(running).all():
        if _still_at_work(session, campaign_id):
            continue
        # A savepoint per campaign: one found at work again below leaves no mark behind.
        with session.begin_nested() as attempt:
            queued = _settle_undecided(session, campaign_id)
            # The campaign's row last (the lock order: HITs, worker records, campaigns), then a
            # second look: a re-post applied meanwhile re-opened one of its HITs and committed
            # (it re-opens the campaign under this same lock), or waits for this one to commit
            # and finds it in review. Without it, the campaign went to review with an open HIT.
            campaign = session.scalar(
                select(Campaign)
                .where(Campaign.id == campaign_id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
            if (
                campaign is None
                or campaign.status not in ("running", CANCELLING)
                or _still_at_work(session, campaign_id)
            ):
                attempt.rollback()
                continue
            campaign.status = "review" if campaign.status == "running" else CANCELLED
            finished.append(campaign_id)
            decided.extend(queued)
    session.flush()
    return Finished(finished, decided)


def _still_at_work(session: Session, campaign_id: int) -> bool:
    """Whether a campaign has a HIT still open, or is a rounds stage with pictures to work on."""
    still_open = session.scalar(
        select(PublishedHIT.id)
        .where(PublishedHIT.campaign_id == campaign_id, PublishedHIT.status != "complete")
        .limit(1)
    )
    return still_open is not None or stage_waits(session, campaign_id)


def _settle_undecided(session: Session, campaign_id: int) -> list[int]:
    """A finishing campaign's undecided work: never confirmed is void; the rest judged once more, then held.

    Returns the outbox entries the last judgement queued.
    """
    undecided = session.scalars(
        select(Submission)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(PublishedHIT.campaign_id == campaign_id, Submission.decision.is_(None))
        .order_by(Submission.id)
    ).all()
    for submission in undecided:
        if not submission.synced:
            submission.decision = VOID
            submission.evidence = {
                "reason": "the marketplace never confirmed this submission "
                "(the worker returned or abandoned the assignment)"
            }
    workers = sorted({s.worker_id for s in undecided if s.synced and s.graded})
    queued = decide_workers(session, campaign_id, workers) if workers else []
    # The same objects decide_workers loaded and decided (the session's identity map): what it left
    # without a decision is still undecided.
    undecided = [s for s in undecided if s.synced and s.decision is None]
    stats_of = lock_worker_stats(session, campaign_id, (s.worker_id for s in undecided))
    for submission in undecided:
        submission.decision = "held"
        stats = stats_of[submission.worker_id]
        submission.evidence = {
            "gold_correct": stats.gold_correct,
            "gold_total": stats.gold_total,
            "reason": "not enough evidence either way when the campaign finished",
        }
    return queued
