"""Advancing a workflow: reading the review pipeline's decisions and making the next rounds.

One call is one transaction under the workflow's row lock, so two Celery
tasks advancing the same workflow take turns; the unique keys on chains and
rounds back that up. Every HIT row it adds is paid for out of the workflow's
budget, checked under the same lock: the committed cost of all its stage
campaigns never exceeds it. Seeding and the API calls that publish the new
HITs happen outside, in ``hits.requester.workflows.publish``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.money import format_amount
from hits.requester.files.workflow import RoundsPolicy
from hits.requester.quality.followups import assignment_cost, campaign_spec, committed_cost, queue_repost
from hits.requester.quality.pipeline import VOID
from hits.requester.tables.campaigns import (
    Campaign,
    HITSlot,
    Item,
    OutboxEntry,
    PublishedHIT,
    Submission,
    next_item_position,
)
from hits.requester.tables.workflows import ACTIVE_CHAIN_STATUSES, Chain, ChainRound, Workflow, WorkflowStage
from hits.requester.text_metrics import round_metrics
from hits.requester.workflows.exposures import redo_exclusions
from hits.requester.workflows.setup import round_cost, rounds_policy
from hits.requester.workflows.upstream import (
    held_keys,
    not_yet_redone,
    redo_allowed,
    unfinished_keys,
    upstream_output,
)

#: Campaign states in which a stage may still produce approved work.
STAGE_AT_WORK = ("draft", "publishing", "running")


@dataclass
class Advanced:
    """What one advance did: rounds whose HITs are to be published, chains waiting for seeds."""

    new_rounds: list[int] = field(default_factory=list)
    need_seeds: list[int] = field(default_factory=list)
    finished: bool = False
    #: Re-posts of rejected first-stage work queued, for the outbox to apply.
    outbox: list[int] = field(default_factory=list)


def stages_of(session: Session, workflow_id: int) -> list[WorkflowStage]:
    return list(
        session.scalars(
            select(WorkflowStage)
            .where(WorkflowStage.workflow_id == workflow_id)
            .order_by(WorkflowStage.position)
        )
    )


def advance(session: Session, workflow_id: int) -> Advanced:
    """Move every chain of the workflow on as far as the decisions so far allow."""
    workflow = session.scalar(select(Workflow).where(Workflow.id == workflow_id).with_for_update())
    result = Advanced()
    if workflow is None or workflow.status != "running":
        return result
    stages = stages_of(session, workflow_id)
    by_name = {s.name: s for s in stages}
    for stage in stages:
        if stage.kind == "single":
            # First, so a stage with a redo still to come is not taken for finished below.
            _redo_rejected(session, workflow, stage, result)
    for stage in stages:
        if stage.kind != "rounds":
            continue
        policy = rounds_policy(workflow, stage)
        chains = list(
            session.scalars(
                select(Chain)
                .where(Chain.stage_id == stage.id, Chain.status.in_(ACTIVE_CHAIN_STATUSES))
                .order_by(Chain.id)
            )
        )
        waiting = [c for c in chains if c.status == "waiting"]
        if waiting:
            _start_ready(session, workflow, stage, by_name.get(stage.source), waiting, result)
        for chain in chains:
            if chain.status == "running":
                _follow(session, workflow, stage, policy, chain, by_name.get(stage.source), result)
    session.flush()
    result.finished = _finish_if_done(session, workflow, stages)
    return result


def _start_ready(
    session: Session,
    workflow: Workflow,
    stage: WorkflowStage,
    source: WorkflowStage | None,
    chains: list[Chain],
    result: Advanced,
) -> None:
    """Waiting chains whose input is there: seed them, or start their first round."""
    upstream = upstream_output(session, source, [c.key for c in chains]) if source is not None else {}
    source_done = source is None or _stage_done(session, source)
    held = (
        held_keys(session, source, [c.key for c in chains]) if source is not None and source_done else set()
    )
    unfinished = unfinished_keys(session, source, [c.key for c in chains]) if source is not None else set()
    for chain in chains:
        if source is not None:
            if chain.key not in upstream:
                # Work a QA reviewer may still approve keeps the picture waiting for them.
                if source_done and chain.key not in held:
                    _stop(chain, f"stage {source.name} approved no work for this picture")
                continue
            if chain.key in unfinished:
                continue  # its annotators are not all known yet: one could take a round, then annotate
            if "upstream" not in chain.image:
                chain.image = {**chain.image, "upstream": upstream[chain.key]}
        if chain.seed_text is None:
            result.need_seeds.append(chain.id)
            continue
        new = _add_round(session, workflow, stage, chain, 1, 1, chain.seed_text)
        if new is not None:
            chain.status, chain.updated_at = "running", utcnow()
            result.new_rounds.append(new)


def _redo_rejected(session: Session, workflow: Workflow, stage: WorkflowStage, result: Advanced) -> None:
    """A single stage's rejected assignments: each offered once more, to another worker, within budget.

    One more assignment of the same HIT (the outbox's re-post, exactly once per
    rejected assignment: its key is the assignment), which the rejected worker
    cannot take, having worked on that HIT, nor anyone who has seen its
    pictures in a later stage (``redo_exclusions``). Its cost is checked under the
    workflow's lock against the budget minus what every stage has committed,
    as a new round's is; one that does not fit is not queued, and says why.
    """
    rejected = [
        s
        for s in session.scalars(
            select(Submission)
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(PublishedHIT.campaign_id == stage.campaign_id, *not_yet_redone(stage.campaign_id))
            .order_by(Submission.id)
        )
        if redo_allowed(s.evidence)
    ]
    if not rejected:
        return
    campaign = session.get(Campaign, stage.campaign_id)
    assert campaign is not None
    cost = assignment_cost(campaign_spec(campaign))
    committed = workflow_committed(session, workflow)
    for submission in rejected:
        exclude = redo_exclusions(session, workflow, submission)
        if exclude is None:
            continue  # a later stage's HIT of the picture is open: its worker is not known yet
        if committed + cost > workflow.budget:
            submission.evidence = {
                **(submission.evidence or {}),
                "not_reposted": f"budget: redoing it would cost {format_amount(cost)}, and "
                f"{format_amount(committed)} of the workflow's {format_amount(workflow.budget)} is committed",
            }
            continue
        entry = queue_repost(session, campaign.id, submission, cost, exclude)
        if entry is not None:
            committed += cost
            result.outbox.append(entry)


def _stage_done(session: Session, stage: WorkflowStage) -> bool:
    """Whether a stage will produce no more approved work."""
    if stage.kind == "rounds":
        active = session.scalar(
            select(Chain.id)
            .where(Chain.stage_id == stage.id, Chain.status.in_(ACTIVE_CHAIN_STATUSES))
            .limit(1)
        )
        return active is None
    # A rejected assignment's redo not applied yet: its HIT opens again when it is. Asked
    # first, and the campaign's status read fresh after: applying a redo marks it done and
    # re-opens the campaign in one commit, so the two answers can never both miss it.
    redo = session.scalar(
        select(OutboxEntry.id)
        .where(
            OutboxEntry.campaign_id == stage.campaign_id,
            OutboxEntry.action == "repost",
            OutboxEntry.status == "pending",
        )
        .limit(1)
    )
    if redo is not None:
        return False
    status = session.scalar(select(Campaign.status).where(Campaign.id == stage.campaign_id))
    return status is not None and status not in STAGE_AT_WORK


def _follow(
    session: Session,
    workflow: Workflow,
    stage: WorkflowStage,
    policy: RoundsPolicy,
    chain: Chain,
    source: WorkflowStage | None,
    result: Advanced,
) -> None:
    """A running chain: take its latest round's decision and act on it."""
    latest = session.scalar(
        select(ChainRound)
        .where(ChainRound.chain_id == chain.id)
        .order_by(ChainRound.round.desc(), ChainRound.attempt.desc())
        .limit(1)
    )
    if latest is None:
        return
    if latest.status in ("open", "held"):
        submission = session.scalar(
            select(Submission)
            .where(
                Submission.published_hit_id == latest.published_hit_id,
                Submission.synced.is_(True),
                Submission.decision.in_(("approve", "reject", "held")),
            )
            .order_by(Submission.id)
            .limit(1)
        )
        if submission is not None:
            _record_decision(latest, submission, policy)
        else:
            published = session.get(PublishedHIT, latest.published_hit_id)
            if published is None or published.status != "complete":
                return  # a worker may still take it
            undecided = session.scalar(
                select(Submission.id).where(
                    Submission.published_hit_id == latest.published_hit_id,
                    Submission.synced.is_(True),
                    or_(Submission.decision.is_(None), Submission.decision != VOID),
                )
            )
            if undecided is not None:
                return  # work is in, its decision is not made yet
            # Closed with no work in it (it expired unworked, or its worker's answers were never
            # confirmed): nobody saw it through, so the round is offered again from the same text.
            latest.status, latest.decided_at = "expired", utcnow()
    next_round = latest.status in ("rejected", "expired", "approved")
    if next_round and source is not None and chain.key in unfinished_keys(session, source, [chain.key]):
        return  # a redo of the picture's earlier work is to come: it goes first (``redo_exclusions``)
    if latest.status in ("rejected", "expired"):
        if latest.attempt >= policy.max_attempts:
            _stop(chain, f"round {latest.round} was rejected or expired {latest.attempt} times")
            return
        new = _add_round(
            session, workflow, stage, chain, latest.round, latest.attempt + 1, latest.previous_text
        )
    elif latest.status == "approved":
        similarity = float((latest.metrics or {}).get("jaccard", 0.0))
        if similarity >= policy.jaccard_threshold:
            _finish(
                chain,
                f"converged: Jaccard {similarity:.2f} >= {policy.jaccard_threshold} in round {latest.round}",
            )
            return
        if latest.round >= policy.max_rounds:
            _finish(chain, f"round limit: {policy.max_rounds} rounds")
            return
        new = _add_round(session, workflow, stage, chain, latest.round + 1, 1, str(latest.text))
    else:
        return
    if new is not None:
        result.new_rounds.append(new)


def _record_decision(latest: ChainRound, submission: Submission, policy: RoundsPolicy) -> None:
    """Take the review pipeline's decision on a round's work, and its figures when approved."""
    latest.worker_id, latest.assignment_id = submission.worker_id, submission.assignment_id
    latest.work_seconds = submission.work_seconds
    latest.text = str((submission.answers or {}).get("answers", [""])[0])
    if submission.decision == "held":
        latest.status = "held"  # a QA reviewer decides; the chain waits for them
        return
    latest.status = "approved" if submission.decision == "approve" else "rejected"
    latest.decided_at = utcnow()
    if latest.status == "approved":
        latest.metrics = round_metrics(latest.previous_text, latest.text, policy.ngram, policy.pos_tagger)


def _finish(chain: Chain, reason: str) -> None:
    chain.status, chain.stop_reason, chain.updated_at = "done", reason, utcnow()


def _stop(chain: Chain, reason: str) -> None:
    chain.status, chain.stop_reason, chain.updated_at = "stopped", reason, utcnow()


def workflow_committed(session: Session, workflow: Workflow) -> Decimal:
    """What every stage campaign of the workflow has committed to pay."""
    total = Decimal("0")
    for stage in stages_of(session, workflow.id):
        campaign = session.get(Campaign, stage.campaign_id)
        assert campaign is not None
        total += committed_cost(session, campaign)
    return total


def _add_round(
    session: Session,
    workflow: Workflow,
    stage: WorkflowStage,
    chain: Chain,
    number: int,
    attempt: int,
    previous: str,
) -> int | None:
    """A round's item, HIT row and round row, within budget; its id (None: over budget, or made already)."""
    campaign = session.get(Campaign, stage.campaign_id)
    assert campaign is not None
    cost = round_cost(campaign.spec)
    committed = workflow_committed(session, workflow)
    if committed + cost > workflow.budget:
        _stop(
            chain,
            f"budget: round {number} would cost {format_amount(cost)}, and {format_amount(committed)} of "
            f"the {format_amount(workflow.budget)} budget is committed",
        )
        return None
    try:
        with session.begin_nested():
            payload = {**{k: chain.image.get(k, "") for k in ("image", "alt")}, "previous": previous}
            # After the stage campaign's last item: rounds are added under the workflow's lock
            # (``advance``), a stage campaign belongs to one workflow, and ``campaign add``
            # refuses a stage's campaign, so no one else adds to it.
            item = Item(
                campaign_id=campaign.id,
                position=next_item_position(session, campaign.id),
                external_id=f"{chain.key}#r{number}.{attempt}"[:128],
                payload=payload,
            )
            published = PublishedHIT(campaign_id=campaign.id)
            session.add_all([item, published])
            session.flush()
            session.add(HITSlot(published_hit_id=published.id, position=0, item_id=item.id))
            row = ChainRound(
                chain_id=chain.id,
                round=number,
                attempt=attempt,
                item_id=item.id,
                published_hit_id=published.id,
                previous_text=previous,
                status="open",
            )
            session.add(row)
            session.flush()
    except IntegrityError:
        return None  # made already (the unique key on chain, round and attempt)
    chain.updated_at = utcnow()
    return row.id


def _finish_if_done(session: Session, workflow: Workflow, stages: list[WorkflowStage]) -> bool:
    """Mark the workflow done when no chain is active and no single stage is still at work."""
    for stage in stages:
        if not _stage_done(session, stage):
            return False
    workflow.status = "done"
    return True


def round_counts(session: Session, workflow_id: int) -> dict[str, dict[str, int]]:
    """Chains per state, per rounds stage."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    rows = session.execute(
        select(WorkflowStage.name, Chain.status, func.count())
        .join(Chain, Chain.stage_id == WorkflowStage.id)
        .where(WorkflowStage.workflow_id == workflow_id)
        .group_by(WorkflowStage.name, Chain.status)
    ).all()
    for name, status, count in rows:
        out[name][status] = int(count)
    return dict(out)
