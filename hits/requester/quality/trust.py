"""Adaptive gold's trust: which workers may take a campaign's HITs with less gold (``docs/quality.md``).

A campaign with ``adaptive_gold`` publishes some HITs under a requirement on
its trust qualification. :func:`trust_change` is the policy (a judged worker
becomes trusted, loses trust, or neither); :func:`queue_trust_changes`
applies it as outbox entries, which grant or revoke the qualification on the
marketplace after the batch commits. Trust is granted once and, once lost
(a flag), not granted again in that campaign: a worker whose record turned
stays on the HITs with more gold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.requester.files.adaptive_gold import AdaptiveGold
from hits.requester.files.campaign import QualityPolicy
from hits.requester.quality.followups import enqueue_once
from hits.requester.quality.policy import WorkerVerdict
from hits.requester.tables.campaigns import Campaign, OutboxEntry, PublishedHIT, WorkerStats

TrustChange = Literal["grant", "revoke"]


def trust_change(
    verdict: WorkerVerdict, record: WorkerStats, adaptive: AdaptiveGold, policy: QualityPolicy
) -> TrustChange | None:
    """Whether a just-judged worker should gain or lose the campaign's trust, or neither.

    Granted when the rule approves the worker with the campaign's confidence
    (P(accuracy < threshold) at most 1 - confidence) on at least
    ``trust_after_gold`` gold answers; revoked when the worker is flagged.
    """
    if verdict.verdict == "flag" or record.flagged:
        return "revoke"
    if (
        verdict.verdict == "approve"
        and record.gold_total >= adaptive.trust_after_gold
        and verdict.p_below <= 1 - policy.confidence
    ):
        return "grant"
    return None


#: How the outbox targets of trust begin (the worker's profile names such entries in words).
TRUST_PREFIX = "trust-c"


def trust_target(campaign_id: int, worker_id: str) -> str:
    """The outbox target of a worker's trust in a campaign (one grant and one revocation each)."""
    return f"{TRUST_PREFIX}{campaign_id}:{worker_id}"


def queue_trust_changes(
    session: Session,
    campaign: Campaign,
    adaptive: AdaptiveGold,
    policy: QualityPolicy,
    judged: Mapping[str, tuple[WorkerVerdict, WorkerStats]],
) -> list[int]:
    """Queue the grants and revocations of trust the judged workers' verdicts call for; their ids.

    Each is queued once per worker (``enqueue_once``): a revocation after the
    grant is the last word, and a grant after a revocation is not queued.
    """
    qualification = campaign.trust_qualification_type_id
    if qualification is None:
        return []  # not published yet: nobody can hold trust
    changes = {
        w: change
        for w, (verdict, record) in judged.items()
        if (change := trust_change(verdict, record, adaptive, policy)) is not None
    }
    # One query for the batch: what each of these workers' trust already has queued.
    queued = {
        (str(action), str(target))
        for action, target in session.execute(
            select(OutboxEntry.action, OutboxEntry.target).where(
                OutboxEntry.action.in_(("qualify", "revoke")),
                OutboxEntry.target.in_([trust_target(campaign.id, w) for w in changes]),
            )
        )
    }
    created: list[int] = []
    for worker_id in sorted(changes):
        target = trust_target(campaign.id, worker_id)
        payload = {"qualification_type_id": qualification, "worker_id": worker_id}
        # A grant once (never after a revocation); a revocation once, of a grant that was queued.
        if changes[worker_id] == "grant":
            if ("qualify", target) in queued or ("revoke", target) in queued:
                continue
            entry = enqueue_once(session, campaign.id, "qualify", target, {**payload, "value": 1})
        else:
            if ("qualify", target) not in queued or ("revoke", target) in queued:
                continue
            entry = enqueue_once(session, campaign.id, "revoke", target, payload)
        if entry is not None:
            created.append(entry)
    return created


@dataclass(frozen=True)
class TrustSummary:
    """Adaptive gold on a campaign's page: its settings and how many workers hold trust."""

    adaptive: AdaptiveGold
    #: Workers granted trust (the grant applied) who still hold it.
    trusted: int
    #: Workers whose grant waits in the outbox.
    waiting: int
    #: Workers who held trust and lost it (flagged).
    revoked: int


def trust_summary(session: Session, campaign: Campaign) -> TrustSummary | None:
    """The campaign's adaptive gold and its trusted workers, or ``None`` without adaptive gold.

    Read through the outbox's (campaign, action) index: a row per worker ever
    trusted, not a read of the campaign's work.
    """
    stored = campaign.spec.get("adaptive_gold")
    if not stored:
        return None
    # LIKE, not a range of the prefix: under a PostgreSQL collation other than C, punctuation
    # such as ":" may not sort as its code point does.
    rows = session.execute(
        select(OutboxEntry.target, OutboxEntry.action, OutboxEntry.status).where(
            OutboxEntry.campaign_id == campaign.id,
            OutboxEntry.action.in_(("qualify", "revoke")),
            OutboxEntry.target.like(trust_target(campaign.id, "") + "%"),
        )
    ).all()
    revoked = {target for target, action, _ in rows if action == "revoke"}
    grants = [
        (target, status) for target, action, status in rows if action == "qualify" and target not in revoked
    ]
    trusted = sum(status == "done" for _, status in grants)
    adaptive = AdaptiveGold.model_validate(stored)
    return TrustSummary(adaptive, trusted, len(grants) - trusted, len(revoked))


#: The outbox action that moves a campaign's HITs for trusted workers to its HIT type for anyone.
OPEN_TO_ALL = "retype"


def open_trusted_hits(session: Session, access_key_id: str) -> list[int]:
    """Queue opening the HITs for trusted workers to everyone where nothing else is left; entry ids.

    A campaign whose HITs for anyone are all done (none open) while some of
    its HITs for trusted workers are still open would wait on trusted workers
    who may never come: those HITs are moved to the campaign's HIT type for
    anyone (UpdateHITTypeOfHIT, applied by the outbox after commit), once per
    campaign. Their pages and gold do not change; newcomers then see less gold
    on them, as a trusted worker would have.
    """
    candidates = session.execute(
        select(Campaign.id, Campaign.hit_type_id).where(
            Campaign.status == "running",
            Campaign.access_key_id == access_key_id,
            Campaign.trusted_hit_type_id.is_not(None),
            Campaign.hit_type_id.is_not(None),
        )
    ).all()
    created: list[int] = []
    for campaign_id, hit_type_id in candidates:
        target = f"open-trusted-c{campaign_id}"
        if session.scalar(
            select(OutboxEntry.id).where(OutboxEntry.action == OPEN_TO_ALL, OutboxEntry.target == target)
        ):
            continue  # opened already
        open_hits = (PublishedHIT.campaign_id == campaign_id, PublishedHIT.status == "open")
        if session.scalar(
            select(PublishedHIT.id).where(*open_hits, PublishedHIT.for_trusted.is_(False)).limit(1)
        ):
            continue  # work for anyone is still open
        waiting = list(
            session.scalars(
                select(PublishedHIT.mturk_hit_id)
                .where(*open_hits, PublishedHIT.for_trusted.is_(True), PublishedHIT.mturk_hit_id.is_not(None))
                .order_by(PublishedHIT.id)
            )
        )
        if not waiting:
            continue
        entry = enqueue_once(
            session, campaign_id, OPEN_TO_ALL, target, {"hits": waiting, "hit_type_id": hit_type_id}
        )
        if entry is not None:
            created.append(entry)
    return created
