"""Bonuses, blocks and messages for recruited participants, relayed to the platform exactly once.

The requester's outbox (``rq_outbox``) pays bonuses, blocks workers and
sends messages on hitforge's marketplace. A recruited participant is paid by
the platform, not by the marketplace (whose pay-out runs skip their account:
``paid_elsewhere``), reads the platform's messages, and takes places the
study's filters allow. So when the outbox claims such an entry for a worker
who holds a place in the campaign's study, :func:`hand_over` writes one
``rq_recruit_relays`` row for it, in the claiming transaction:

* a **bonus** is paid on the platform *instead* of the marketplace (paying
  both would pay twice, and the marketplace's credit would never reach the
  participant);
* a **message** is sent on the platform instead (the account has no other
  address);
* a **block** is applied *also*: the marketplace's block keeps the account
  off the requester's HITs, and the participant joins the study's blocklist
  participant group, so the study no longer offers them a place.

:func:`apply_relays` makes the calls. Prolific's bonus is two calls, and
``pay`` is not idempotent: the set-up's id is committed on the row before
``pay`` is called, the row is marked ``sending`` (committed) before the call,
and ``done`` after. A pay call that certainly did nothing (refused,
throttled, 503) is tried again; one whose outcome is unknown (another fault,
a lost answer, an attempt that died while ``sending``) is *held* for a
person: Prolific's API cannot be asked about one bonus payment, so nothing
pays it again unless a person says it was not paid (:func:`resolve_held`).
Messages follow the same rule; adding to a group is idempotent and simply
retried. A qualification the campaign grants or revokes is mirrored to its
participant group (``groups.py``) *also*, as a block is.

A bonus is paid in the study's currency (converted by the campaign's
exchange rate when it is not dollars: ``quality/platform_bonus.py`` fixes
the amount and what the budget counts when the bonus is queued). Prolific's
set-up answer says what paying will take, fees and VAT included: it is
recorded with the set-up id, and a bonus that would cost more than the
budget counted is not paid (``refused``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import session_scope, utcnow
from hits.requester.recruit.base import Recruiter, RecruitError, RecruitOutcomeUnknown
from hits.requester.recruit.groups import GROUP_ACTIONS, block_group_name, ensure_block_group
from hits.requester.recruit.mirroring import holds
from hits.requester.tables.campaigns import OutboxEntry
from hits.requester.tables.recruiting import (
    RecruitAssignment,
    RecruitGroup,
    Recruitment,
    RecruitPlace,
    RecruitRelay,
)

#: The outbox actions relayed, and what each becomes on the platform.
RELAYED = {"bonus": "bonus", "block": "block", "notify": "message"}
#: Relayed actions the marketplace no longer does (the platform does them instead).
INSTEAD = frozenset({"bonus", "notify", "mirror"})
#: Outbox actions mirrored to a participant group when a study mirrors the qualification
#: (``mirror``: a grant the group missed, queued by ``mirroring.py``; it has no marketplace call).
MIRRORED = frozenset({"qualify", "revoke", "mirror"})
#: Relay actions that may simply be made again (adding or removing a member twice is harmless).
REPEATABLE = frozenset({"block", *GROUP_ACTIONS.values()})
#: What each relay action is called on a page.
ACTION_WORDS = {
    "bonus": "bonus",
    "block": "block",
    "message": "message",
    "group_add": "added to a group",
    "group_remove": "removed from a group",
}
#: Rows a claim may take: not yet sent, or a bonus set up and not yet paid.
CLAIMABLE = ("pending", "set_up")
#: A row ``sending`` for longer than this belongs to an attempt that died (the client's calls time
#: out long before: 30 s, a few retries).
STALE_SENDING = timedelta(minutes=10)
HELD_UNKNOWN = "held: whether Prolific carried it out is unknown; a person checks and resolves it"


@dataclass(frozen=True)
class HandedOver:
    """An outbox entry relayed to the platform: the relay's id, and whether the marketplace is skipped."""

    relay_id: int
    instead: bool
    outcome: str
    #: The relay was written now (its task is sent once the claiming transaction commits).
    created: bool = False


def hand_over(session: Session, entry: OutboxEntry) -> HandedOver | None:
    """Relay an outbox entry for a participant of the campaign's study, once; None for anyone else.

    Called by the outbox while it claims ``entry`` (its transaction): a
    second claim finds the relay written by the first.
    """
    if entry.action not in RELAYED and entry.action not in MIRRORED:
        return None
    payload = entry.payload or {}
    worker_id = str(payload.get("worker_id") or "")
    existing = session.scalar(select(RecruitRelay).where(RecruitRelay.outbox_entry_id == entry.id))
    created = False
    if existing is None:
        if entry.action in MIRRORED:
            mirrored = mirroring_place(
                session, entry.campaign_id, worker_id, payload.get("qualification_type_id")
            )
            if mirrored is None:
                return None  # no study the worker holds a place in mirrors the qualification
            place, group = mirrored
            joins = holds(entry.action, payload)
            action = GROUP_ACTIONS["add" if joins else "remove"]
            relayed = {"group_id": str(group.group_id), "group": group.name, "qualification": group.label}
        else:
            found = participant_place(session, entry.campaign_id, worker_id, payload.get("assignment_id"))
            if found is None:
                return None
            place = found
            action, relayed = RELAYED[entry.action], _relay_payload(entry.action, payload)
        existing = RecruitRelay(
            recruitment_id=place.recruitment_id,
            outbox_entry_id=entry.id,
            action=action,
            participant_id=place.participant_id,
            session_id=place.session_id,
            payload=relayed,
            status="pending",
            attempts=0,
        )
        session.add(existing)
        session.flush()
        created = True
    outcome = f"{entry.action} (relayed to Prolific: relay {existing.id})"
    return HandedOver(existing.id, entry.action in INSTEAD, outcome, created)


def mirroring_place(
    session: Session, campaign_id: int, worker_id: str, qualification_type_id: object
) -> tuple[RecruitPlace, RecruitGroup] | None:
    """The worker's latest place in a Prolific study that mirrors the qualification, with its group.

    Any campaign's study, not only the one whose outbox granted it: a
    qualification test's grants are queued under the test's own placeholder
    campaign. The granting campaign's own study comes first.
    """
    if not worker_id or not isinstance(qualification_type_id, str):
        return None
    rows = session.execute(
        select(RecruitPlace, RecruitGroup, Recruitment.campaign_id)
        .join(Recruitment, Recruitment.id == RecruitPlace.recruitment_id)
        .join(RecruitGroup, RecruitGroup.recruitment_id == Recruitment.id)
        .where(
            Recruitment.platform == "prolific",
            RecruitPlace.worker_id == worker_id,
            RecruitGroup.qualification_type_id == qualification_type_id,
            RecruitGroup.group_id.is_not(None),
        )
        .order_by(RecruitPlace.id.desc())
    ).all()
    for place, group, owner in rows:
        if owner == campaign_id:
            return place, group
    return (rows[0][0], rows[0][1]) if rows else None


def participant_place(
    session: Session, campaign_id: int, worker_id: str, assignment_id: object
) -> RecruitPlace | None:
    """The worker's place in the campaign's Prolific study: the one that took the assignment, else the
    latest; None for a worker who holds none (their bonuses and messages stay on the marketplace)."""
    if not worker_id:
        return None
    query = (
        select(RecruitPlace)
        .join(Recruitment, Recruitment.id == RecruitPlace.recruitment_id)
        .where(
            # A panel has no API: its participants' bonuses and messages stay on the marketplace.
            Recruitment.platform == "prolific",
            Recruitment.campaign_id == campaign_id,
            RecruitPlace.worker_id == worker_id,
        )
    )
    if isinstance(assignment_id, str):
        took = session.scalar(
            query.join(RecruitAssignment, RecruitAssignment.place_id == RecruitPlace.id).where(
                RecruitAssignment.assignment_id == assignment_id
            )
        )
        if took is not None:
            return took
    return session.scalar(query.order_by(RecruitPlace.id.desc()).limit(1))


def _relay_payload(action: str, payload: dict[str, object]) -> dict[str, str]:
    if action == "bonus":
        # What the outbox fixed when it queued the bonus: the amount in the study's currency (converted
        # from dollars, platform_bonus.py) and the most its payment may take with Prolific's fees.
        # A bonus queued before these were recorded is paid as its number, as it was then.
        relayed = {"amount": str(payload.get("pay_amount") or payload["amount"])}
        for key in ("pay_currency", "pay_limit"):
            if payload.get(key):
                relayed[key] = str(payload[key])
        return {**relayed, "reason": str(payload.get("reason") or "")}
    if action == "notify":
        return {"subject": str(payload.get("subject") or ""), "message": str(payload.get("message") or "")}
    return {"reason": str(payload.get("reason") or "")}


@dataclass
class RelayReport:
    """Outcomes by relay id; errors of relays left to retry; relays held for a person."""

    outcomes: dict[int, str] = field(default_factory=dict)
    failures: dict[int, RecruitError] = field(default_factory=dict)
    held: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Claim:
    id: int
    action: str
    participant_id: str
    study_id: str
    recruitment_id: int
    group_id: str | None
    group_name: str
    setup_id: str | None
    payload: dict[str, str]


class CostsMore(RecruitError):
    """Prolific's set-up would take more than the budget counted: the bonus is not paid."""


def apply_relays(
    sessions: Callable[[], Session],
    recruiter: Recruiter,
    recruitment_id: int | None = None,
    relay_ids: list[int] | None = None,
) -> RelayReport:
    """Make each pending relay's calls once (no transaction open during a call); record what happened.

    Every pending relay, or a study's (``recruitment_id``), or the given ones (``relay_ids``: the
    task sent when the outbox hands them over).
    """
    report = RelayReport()
    claims = _claim(sessions, recruitment_id, relay_ids, report)
    for claim in claims:
        try:
            report.outcomes[claim.id] = _apply(sessions, recruiter, claim)
        except CostsMore as exc:
            _finish(sessions, claim.id, "refused", f"not paid: {exc.message}", str(exc))
            report.failures[claim.id] = exc
        except RecruitOutcomeUnknown as exc:
            _finish(sessions, claim.id, "held", HELD_UNKNOWN, str(exc))
            report.held.append(claim.id)
        except RecruitError as exc:
            # Certainly not carried out: the row goes back to wait for the next attempt.
            with session_scope(sessions) as session:
                row = session.get(RecruitRelay, claim.id)
                assert row is not None
                row.status = "set_up" if row.setup_id else "pending"
                row.last_error = str(exc)[:2000]
            report.failures[claim.id] = exc
        else:
            _finish(sessions, claim.id, "done", report.outcomes[claim.id], None)
    return report


def _claim(
    sessions: Callable[[], Session],
    recruitment_id: int | None,
    relay_ids: list[int] | None,
    report: RelayReport,
) -> list[_Claim]:
    """Mark the pending relays ``sending`` (committed before any call); hold those whose attempt died."""
    now = utcnow()
    claims = []
    with session_scope(sessions) as session:
        query = select(RecruitRelay, Recruitment).join(
            Recruitment, Recruitment.id == RecruitRelay.recruitment_id
        )
        if recruitment_id is not None:
            query = query.where(RecruitRelay.recruitment_id == recruitment_id)
        if relay_ids is not None:
            query = query.where(RecruitRelay.id.in_(relay_ids))
        rows = session.execute(
            query.where(RecruitRelay.status.in_((*CLAIMABLE, "sending")))
            .order_by(RecruitRelay.id)
            .with_for_update(of=RecruitRelay)
        ).all()
        for row, recruitment in rows:
            if row.status == "sending":
                if row.sending_at is not None and now - row.sending_at < STALE_SENDING:
                    continue  # another attempt is making the call right now
                if row.action in REPEATABLE or (row.action == "bonus" and row.setup_id is None):
                    row.status = "pending"  # nothing paid or sent twice by doing it again
                else:
                    row.status, row.outcome = "held", HELD_UNKNOWN
                    row.last_error = "the attempt that was making the call died before recording its outcome"
                    report.held.append(row.id)
                    continue
            if recruitment.study_id is None:
                continue
            row.status, row.sending_at, row.attempts = "sending", now, row.attempts + 1
            claims.append(
                _Claim(
                    row.id,
                    row.action,
                    row.participant_id,
                    recruitment.study_id,
                    recruitment.id,
                    recruitment.block_group_id,
                    block_group_name(recruitment.internal_name),
                    row.setup_id,
                    dict(row.payload),
                )
            )
    return claims


def _apply(sessions: Callable[[], Session], recruiter: Recruiter, claim: _Claim) -> str:
    """One relay's calls; its outcome."""
    if claim.action == "bonus":
        return _pay_bonus(sessions, recruiter, claim)
    if claim.action == "message":
        subject, message = claim.payload["subject"], claim.payload["message"]
        recruiter.send_message(claim.participant_id, claim.study_id, f"{subject}\n\n{message}".strip())
        return "message sent on Prolific"
    if claim.action in GROUP_ACTIONS.values():
        group_id, name = claim.payload["group_id"], claim.payload.get("group", "")
        if claim.action == GROUP_ACTIONS["add"]:
            recruiter.add_to_group(group_id, [claim.participant_id])
            return f"added to the group {name} ({group_id})"
        recruiter.remove_from_group(group_id, [claim.participant_id])
        return f"removed from the group {name} ({group_id})"
    group_id = claim.group_id or ensure_block_group(
        sessions, recruiter, claim.recruitment_id, claim.group_name
    )
    recruiter.add_to_group(group_id, [claim.participant_id])
    return f"added to the study's blocklist group {group_id}"


def _pay_bonus(sessions: Callable[[], Session], recruiter: Recruiter, claim: _Claim) -> str:
    """Set the bonus up (once), check what paying takes against the budget, then pay it."""
    setup_id, charged = claim.setup_id, claim.payload.get("charged")
    if setup_id is None:
        # Setting up pays nothing: a set-up whose answer was lost is an unpaid orphan, not a payment.
        set_up = recruiter.set_up_bonuses(claim.study_id, {claim.participant_id: claim.payload["amount"]})
        setup_id, charged = set_up.id, None if set_up.total is None else str(set_up.total)
        with session_scope(sessions) as session:
            row = session.get(RecruitRelay, claim.id)
            assert row is not None
            row.setup_id, row.sending_at = setup_id, utcnow()  # committed before pay is called
            if charged is not None:
                row.payload = {**row.payload, "charged": charged}
    currency = claim.payload.get("pay_currency", "")
    limit = claim.payload.get("pay_limit")
    if limit is not None and charged is not None and Decimal(charged) > Decimal(limit):
        raise CostsMore(
            0,
            f"Prolific would take {charged} {currency} with its fees, more than the {limit} {currency} "
            "the budget counted (recruit.bonus_fee_rate)",
        )
    recruiter.pay_bonuses(setup_id)
    amount = f"{claim.payload['amount']} {currency}".strip()
    took = f"; {charged} {currency} with fees".rstrip() if charged is not None else ""
    return f"bonus of {amount} paid on Prolific ({setup_id}{took})"


def _finish(
    sessions: Callable[[], Session], relay_id: int, status: str, outcome: str, error: str | None
) -> None:
    with session_scope(sessions) as session:
        row = session.get(RecruitRelay, relay_id)
        assert row is not None
        row.status, row.outcome, row.last_error = status, outcome[:200], error
        if status == "done":
            row.applied_at = utcnow()


def resolve_held(session: Session, relay_id: int, *, paid: bool) -> RecruitRelay:
    """A person's answer about a held relay: carried out (done), or not (it is tried again)."""
    row = session.get(RecruitRelay, relay_id)
    if row is None or row.status != "held":
        raise ValueError(f"relay {relay_id} is not held")
    if paid:
        row.status, row.outcome, row.applied_at = (
            "done",
            "carried out on Prolific, as a person checked",
            utcnow(),
        )
    else:
        row.status = "set_up" if row.setup_id else "pending"
        row.outcome = "not carried out, as a person checked: tried again"
    session.flush()
    return row


def held_relays(session: Session, recruitment_id: int) -> list[RecruitRelay]:
    """A study's relays held for a person, oldest first."""
    return list(
        session.scalars(
            select(RecruitRelay)
            .where(RecruitRelay.recruitment_id == recruitment_id, RecruitRelay.status == "held")
            .order_by(RecruitRelay.id)
        )
    )
