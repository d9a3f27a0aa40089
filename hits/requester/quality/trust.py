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
from hits.requester.tables.campaigns import Campaign, OutboxEntry, WorkerStats

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

    Read from the outbox's (action, target) index over this campaign's trust
    targets: a row per worker ever trusted, not a read of the campaign's work.
    """
    stored = campaign.spec.get("adaptive_gold")
    if not stored:
        return None
    prefix = trust_target(campaign.id, "")
    # Every target of the campaign's trust sorts between its prefix and the prefix with its last
    # character (":") followed by the next one (";"): an index range, where LIKE may not be.
    rows = session.execute(
        select(OutboxEntry.target, OutboxEntry.action, OutboxEntry.status).where(
            OutboxEntry.action.in_(("qualify", "revoke")),
            OutboxEntry.target >= prefix,
            OutboxEntry.target < prefix[:-1] + ";",
        )
    ).all()
    revoked = {target for target, action, _ in rows if action == "revoke"}
    grants = [
        (target, status) for target, action, status in rows if action == "qualify" and target not in revoked
    ]
    trusted = sum(status == "done" for _, status in grants)
    adaptive = AdaptiveGold.model_validate(stored)
    return TrustSummary(adaptive, trusted, len(grants) - trusted, len(revoked))
