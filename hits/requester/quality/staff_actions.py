"""What a reviewer may do to a worker beyond deciding held work, turned into outbox entries.

Approve a rejected assignment after all (OverrideRejection), send a bonus with
a reason, block or unblock, grant, revoke or restore a qualification, and send
a message. Each action is one outbox entry, applied through the API exactly
once (``(action, target)`` is unique: a form posted twice carries the same
request token, so it queues once), and one audit row naming the reviewer.
Money passes the budget guard before anything is queued. Like all domain code
this flushes and never commits: the dashboard request owns the transaction
and sends the returned outbox ids once it commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.money import dollars, format_amount, mturk_fee
from hits.requester.files.campaign import stored_policy
from hits.requester.quality import followups
from hits.requester.quality.outbox import PREVIOUS_SCORE
from hits.requester.quality.platform_bonus import BonusCurrencyError, platform_bonus
from hits.requester.quality.review import lock_worker_stats
from hits.requester.tables.campaigns import (
    Campaign,
    OutboxEntry,
    ReviewAction,
    Submission,
)
from hits.requester.tables.qualification import QualificationTest

#: The most one bonus may pay: a typo in the amount should not empty a budget.
MAX_BONUS = Decimal("100.00")
#: The longest text the marketplace takes for a bonus reason, a block reason or a message.
MAX_REASON = 1024
MAX_SUBJECT = 200
MAX_MESSAGE = 4096

QualificationChange = Literal["grant", "revoke", "restore"]


class ActionRefused(ValueError):
    """The action cannot be taken as asked (the message says why, in words a reviewer reads)."""


@dataclass(frozen=True)
class ActionDone:
    """What an action queued: the outbox ids to send (empty: the same request was queued already)."""

    entry_ids: list[int]
    said: str


@dataclass(frozen=True)
class QualificationChoice:
    """A qualification type a reviewer may change for a campaign's workers, by name."""

    qualification_type_id: str
    name: str


def qualification_choices(session: Session, campaign: Campaign) -> list[QualificationChoice]:
    """The campaign's qualification types: its soft block, its tests' and its other requirements."""
    names = dict(
        session.execute(select(QualificationTest.qualification_type_id, QualificationTest.name)).all()
    )
    choices: dict[str, str] = {}
    if campaign.block_qualification_type_id:
        choices[campaign.block_qualification_type_id] = "this campaign's block (held: kept out)"
    for requirement in campaign.spec.get("qualification_requirements") or []:
        type_id = requirement.get("QualificationTypeId") if isinstance(requirement, dict) else None
        if isinstance(type_id, str) and type_id not in choices:
            choices[type_id] = f"test: {names[type_id]}" if type_id in names else f"qualification {type_id}"
    return [QualificationChoice(k, v) for k, v in choices.items()]


def _audit(
    session: Session,
    campaign_id: int,
    worker_id: str,
    staff_id: int,
    action: str,
    note: str,
    assignments: list[str] | None = None,
) -> None:
    session.add(
        ReviewAction(
            campaign_id=campaign_id,
            worker_id=worker_id,
            staff_user_id=staff_id,
            action=action,
            note=note[:2000],
            assignments=assignments or [],
        )
    )


def _queue(
    session: Session, campaign_id: int, action: str, target: str, payload: dict[str, Any]
) -> list[int]:
    entry_id = followups.enqueue_once(session, campaign_id, action, target, payload)
    return [] if entry_id is None else [entry_id]


def _checked_text(value: str, what: str, limit: int) -> str:
    text = value.strip()
    if not text:
        raise ActionRefused(f"{what} is required: the worker reads it")
    if len(text) > limit:
        raise ActionRefused(f"{what} is {len(text)} characters long; the marketplace takes at most {limit}")
    return text


def override_rejection(
    session: Session, submission: Submission, staff_id: int, note: str, feedback: str = ""
) -> ActionDone:
    """Approve a rejected assignment after all (ApproveAssignment with OverrideRejection).

    The reward was counted against the budget when the HIT was published, so
    this pays nothing the budget has not already set aside. The worker's
    record counts the assignment as approved once the marketplace has it.
    """
    if submission.decision != "reject":
        raise ActionRefused(f"assignment {submission.assignment_id} is not rejected: nothing to override")
    campaign_id = submission.published_hit.campaign_id
    lock_worker_stats(session, campaign_id, [submission.worker_id])
    payload: dict[str, Any] = {"worker_id": submission.worker_id}
    if feedback.strip():
        payload["feedback"] = _checked_text(feedback, "The message to the worker", MAX_REASON)
    ids = _queue(session, campaign_id, "override", submission.assignment_id, payload)
    if ids:
        submission.decision = "approve"
        submission.evidence = {**(submission.evidence or {}), "decided_by": "qa", "overridden": "reject"}
        _audit(
            session, campaign_id, submission.worker_id, staff_id, "override", note, [submission.assignment_id]
        )
    session.flush()
    return ActionDone(
        ids, f"Rejection of assignment {submission.assignment_id} overridden: it is approved and paid"
    )


def send_bonus(
    session: Session,
    campaign: Campaign,
    submission: Submission,
    amount: Decimal,
    reason: str,
    staff_id: int,
    note: str,
    request_token: str,
) -> ActionDone:
    """A bonus on one of the worker's assignments, with the reason they read, within the budget."""
    if amount <= 0 or amount > MAX_BONUS:
        raise ActionRefused(f"a bonus is between $0.01 and {dollars(MAX_BONUS)}; {dollars(amount)} is not")
    reason = _checked_text(reason, "The reason for the bonus", MAX_REASON)
    lock_worker_stats(session, campaign.id, [submission.worker_id])
    try:
        # A participant recruited on Prolific is paid there, in the study's currency, with its fee.
        on_platform = platform_bonus(
            session,
            campaign,
            followups.campaign_spec(campaign),
            submission.worker_id,
            submission.assignment_id,
            amount,
        )
    except BonusCurrencyError as exc:
        raise ActionRefused(str(exc)) from exc
    cost = on_platform.cost if on_platform is not None else amount + mturk_fee(amount)
    try:
        followups.check_budget(session, campaign, cost, f"a bonus of {dollars(amount)}")
    except followups.OverBudget as exc:
        raise ActionRefused(str(exc)) from exc
    payload = {
        "worker_id": submission.worker_id,
        "assignment_id": submission.assignment_id,
        "amount": format_amount(amount),
        "reason": reason,
        "cost": format_amount(cost),
        **(on_platform.payload() if on_platform is not None else {}),
    }
    ids = _queue(session, campaign.id, "bonus", f"qa:{request_token}", payload)
    if ids:
        _audit(
            session,
            campaign.id,
            submission.worker_id,
            staff_id,
            "bonus",
            f"{dollars(amount)} ({reason})" + (f"; {note}" if note.strip() else ""),
            [submission.assignment_id],
        )
    session.flush()
    paid_as = f", paid on Prolific as {on_platform.pay_amount} {on_platform.currency}" if on_platform else ""
    return ActionDone(
        ids,
        f"Bonus of {dollars(amount)} (costing {dollars(cost)} with the fee{paid_as}) "
        f"queued for {submission.worker_id}",
    )


def block(
    session: Session,
    campaign: Campaign,
    worker_id: str,
    reason: str,
    staff_id: int,
    note: str,
    request_token: str,
) -> ActionDone:
    """Block the worker from all of the requester's HITs (CreateWorkerBlock), with the reason they read."""
    reason = _checked_text(reason, "The reason for the block", MAX_REASON)
    ids = _queue(
        session, campaign.id, "block", f"qa:{request_token}", {"worker_id": worker_id, "reason": reason}
    )
    if ids:
        _audit(
            session,
            campaign.id,
            worker_id,
            staff_id,
            "block",
            f"{reason}" + (f"; {note}" if note.strip() else ""),
        )
    session.flush()
    return ActionDone(ids, f"Block of {worker_id} queued: they can no longer accept your HITs")


def unblock(
    session: Session, campaign: Campaign, worker_id: str, staff_id: int, note: str, request_token: str
) -> ActionDone:
    """Lift a block (DeleteWorkerBlock), and the campaign's soft block if it has one."""
    ids = _queue(session, campaign.id, "unblock", f"qa:{request_token}", {"worker_id": worker_id})
    if ids and campaign.block_qualification_type_id:
        ids += _queue(
            session,
            campaign.id,
            "revoke",
            f"qa:{request_token}:soft",
            {"qualification_type_id": campaign.block_qualification_type_id, "worker_id": worker_id},
        )
    if ids:
        _audit(session, campaign.id, worker_id, staff_id, "unblock", note)
    session.flush()
    return ActionDone(ids, f"Unblock of {worker_id} queued: they may accept your HITs again")


def change_qualification(
    session: Session,
    campaign: Campaign,
    worker_id: str,
    change: QualificationChange,
    qualification_type_id: str,
    value: int | None,
    staff_id: int,
    note: str,
    request_token: str,
) -> ActionDone:
    """Grant (with a score), revoke, or restore (the score it had when revoked) a campaign's qualification."""
    choices = {c.qualification_type_id: c.name for c in qualification_choices(session, campaign)}
    if qualification_type_id not in choices:
        raise ActionRefused("that qualification is not one of this campaign's")
    target = f"qa:{request_token}"
    payload: dict[str, Any] = {"qualification_type_id": qualification_type_id, "worker_id": worker_id}
    if change == "revoke":
        ids = _queue(session, campaign.id, "revoke", target, payload)
        said = f"Revocation of {choices[qualification_type_id]} from {worker_id} queued"
    else:
        if change == "restore":
            value = revoked_score(session, campaign.id, worker_id, qualification_type_id)
            if value is None:
                raise ActionRefused("no revocation of that qualification is on record for this worker")
        if value is None or not -(2**31) <= value < 2**31:
            raise ActionRefused("a qualification score is a whole number")
        ids = _queue(session, campaign.id, "qualify", target, {**payload, "value": value})
        verb = "restored" if change == "restore" else "granted"
        said = (
            f"{choices[qualification_type_id].capitalize()} {verb} to {worker_id} with score {value}: queued"
        )
    if ids:
        words = {"grant": "grant", "revoke": "revoke", "restore": "restore"}[change]
        _audit(
            session,
            campaign.id,
            worker_id,
            staff_id,
            f"{words} qualification",
            f"{choices[qualification_type_id]}"
            + (f" = {value}" if change != "revoke" else "")
            + (f"; {note}" if note.strip() else ""),
        )
    session.flush()
    return ActionDone(ids, said)


def revoked_score(
    session: Session, campaign_id: int, worker_id: str, qualification_type_id: str
) -> int | None:
    """The score the worker held when their latest revocation was applied (None: none on record)."""
    for payload in session.scalars(
        select(OutboxEntry.payload)
        .where(
            OutboxEntry.campaign_id == campaign_id,
            OutboxEntry.action == "revoke",
            OutboxEntry.status == "done",
        )
        .order_by(OutboxEntry.id.desc())
    ):
        if (
            payload.get("worker_id") == worker_id
            and payload.get("qualification_type_id") == qualification_type_id
        ):
            held = payload.get(PREVIOUS_SCORE)
            return int(held) if isinstance(held, int) else None
    return None


def message(
    session: Session,
    campaign: Campaign,
    worker_id: str,
    subject: str,
    text: str,
    staff_id: int,
    note: str,
    request_token: str,
) -> ActionDone:
    """Send the worker a message (NotifyWorkers)."""
    subject = _checked_text(subject, "The subject", MAX_SUBJECT)
    text = _checked_text(text, "The message", MAX_MESSAGE)
    ids = _queue(
        session,
        campaign.id,
        "notify",
        f"qa:{request_token}",
        {"worker_id": worker_id, "subject": subject, "message": text},
    )
    if ids:
        _audit(
            session,
            campaign.id,
            worker_id,
            staff_id,
            "message",
            subject + (f"; {note}" if note.strip() else ""),
        )
    session.flush()
    return ActionDone(ids, f"Message to {worker_id} queued")


def policy_bonus_words(campaign: Campaign) -> str:
    """The campaign's own bonus rule in words, shown beside the bonus form."""
    rule = stored_policy(campaign.spec).bonus
    if rule is None:
        return "This campaign's policy grants no bonus of its own."
    return f"The campaign's policy already grants {dollars(rule.amount)} once to workers above its bar."
