"""Invitation links: a requester's way to bring a crowd they know onto the marketplace.

An invitation grants one qualification type of the requester who made it, so
a HIT (or a campaign file's ``qualification_requirements``) requiring that
type with ``Exists`` admits the invited workers only. A link is good for
``uses_allowed`` workers until ``expires_at``; opening it signs a new worker
up (or takes a signed-in one) and grants the qualification in the same unit
of work that counts the use.

Tokens are 32 random bytes (URL-safe base64), so they cannot be guessed; only
their SHA-256 is stored. Redeeming locks the invitation's row first, so two
workers redeeming the last use at once take turns and the second finds it used
up (PostgreSQL ``FOR UPDATE``; SQLite serialises writers anyway). Lock order:
the invitation, then the worker's qualification.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.db import utcnow
from hits.market import accounts
from hits.market.errors import RequestError
from hits.market.models import Invitation, InvitationUse, QualificationType, Worker
from hits.market.qualification_admin import owned_type
from hits.market.qualification_ops import associate

#: Random bytes in a token: 256 bits, far beyond guessing.
TOKEN_BYTES = 32
#: What a token looks like (URL-safe base64 of TOKEN_BYTES); anything else is not looked up.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
#: Invitations one call makes at most (a printout of links, not a mailing list).
MAX_COUNT = 1000
#: Uses one invitation allows at most.
MAX_USES = 1_000_000

UNKNOWN = "unknown"
EXPIRED = "expired"
USED_UP = "used up"

#: What a worker reads for each reason an invitation cannot be taken.
REFUSALS = {
    UNKNOWN: "This invitation link is not valid. Check that you copied all of it.",
    EXPIRED: "This invitation has expired. Ask whoever sent it for a new one.",
    USED_UP: "This invitation has already been used as many times as it allows.",
}


class InvitationRefused(RequestError):
    """An invitation that cannot be taken: unknown, expired or used up (``reason``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(REFUSALS[reason], "AWS.MechanicalTurk.InvalidParameterValue")
        self.reason = reason


@dataclass(frozen=True)
class IssuedInvitation:
    """A new invitation and its token, shown once: the database keeps only the token's hash."""

    invitation_id: int
    token: str


def hash_token(token: str) -> str:
    """The stored form of ``token`` (SHA-256, hex)."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def link(public_url: str, token: str) -> str:
    """The worker-site URL of an invitation."""
    return f"{public_url.rstrip('/')}/invite/{token}"


def create_invitations(
    session: Session,
    requester_id: str,
    qualification_type_id: str,
    *,
    value: int = 1,
    uses: int = 1,
    expires_at: datetime | None = None,
    count: int = 1,
) -> list[IssuedInvitation]:
    """Make ``count`` invitations granting ``requester_id``'s type with ``value``, each for ``uses`` workers.

    The type must be the requester's own and Active (an invitation cannot hand
    out another requester's qualification, nor a system one).
    """
    qtype = owned_type(session, requester_id, qualification_type_id)
    if qtype.status != "Active":
        raise RequestError(f"QualificationType {qtype.id} is not Active.")
    if not 1 <= uses <= MAX_USES:
        raise RequestError(f"An invitation allows 1 to {MAX_USES} uses.")
    if not 1 <= count <= MAX_COUNT:
        raise RequestError(f"Make 1 to {MAX_COUNT} invitations at a time.")
    if not -(2**31) <= value < 2**31:
        raise RequestError("The qualification value must be a 32-bit integer.")
    if expires_at is not None and expires_at <= utcnow():
        raise RequestError("An invitation must expire in the future.")
    issued = []
    for _ in range(count):
        token = secrets.token_urlsafe(TOKEN_BYTES)
        invitation = Invitation(
            token_hash=hash_token(token),
            requester_id=requester_id,
            qualification_type_id=qtype.id,
            integer_value=value,
            uses_allowed=uses,
            uses_count=0,
            expires_at=expires_at,
            created_at=utcnow(),
        )
        session.add(invitation)
        session.flush()
        issued.append(IssuedInvitation(invitation.id, token))
    return issued


def find(session: Session, token: str, *, for_update: bool = False) -> Invitation | None:
    """The invitation of ``token``, or None; ``for_update`` locks its row until commit."""
    if not TOKEN_SHAPE.fullmatch(token):
        return None  # not one of ours: no query for odd input (NUL, huge, non-ASCII)
    stmt = select(Invitation).where(Invitation.token_hash == hash_token(token))
    if for_update:
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    found: Invitation | None = session.scalar(stmt)
    return found


def refusal(invitation: Invitation | None, now: datetime | None = None) -> str | None:
    """Why ``invitation`` cannot be taken now (``UNKNOWN``, ``EXPIRED``, ``USED_UP``), or None."""
    if invitation is None:
        return UNKNOWN
    if invitation.expires_at is not None and invitation.expires_at <= (now or utcnow()):
        return EXPIRED
    if invitation.uses_count >= invitation.uses_allowed:
        return USED_UP
    return None


def has_used(session: Session, invitation: Invitation, worker_id: str) -> bool:
    """Whether ``worker_id`` already took ``invitation``."""
    return (
        session.scalar(
            select(InvitationUse.id).where(
                InvitationUse.invitation_id == invitation.id, InvitationUse.worker_id == worker_id
            )
        )
        is not None
    )


def qualification_name(session: Session, invitation: Invitation) -> str:
    """The name of the qualification ``invitation`` grants, as the worker reads it."""
    return session.scalar(
        select(QualificationType.name).where(QualificationType.id == invitation.qualification_type_id)
    ) or str(invitation.qualification_type_id)


def _locked(session: Session, token: str) -> Invitation:
    """The invitation of ``token``, its row locked, or :class:`InvitationRefused` if it cannot be taken."""
    invitation = find(session, token, for_update=True)
    reason = refusal(invitation)
    if reason is not None:
        raise InvitationRefused(reason)
    assert invitation is not None  # noqa: S101 - refusal() said UNKNOWN otherwise
    return invitation


def redeem(session: Session, token: str, worker_id: str) -> tuple[Invitation, bool]:
    """Grant the invitation's qualification to ``worker_id``, counting one use; (invitation, newly taken).

    A worker who already took this invitation (a second click, a reload) is
    told so and nothing changes: not another use, and not a new grant, which
    would undo a revocation the requester made since. Refuses with
    :class:`InvitationRefused` when the link is unknown, expired or used up,
    and then nothing changes either.
    """
    invitation = find(session, token, for_update=True)
    reason = refusal(invitation)
    if invitation is not None and reason != EXPIRED and has_used(session, invitation, worker_id):
        return invitation, False
    if reason is not None:
        raise InvitationRefused(reason)
    assert invitation is not None  # noqa: S101 - refusal() is UNKNOWN for None
    invitation.uses_count += 1
    session.add(InvitationUse(invitation_id=invitation.id, worker_id=worker_id, used_at=utcnow()))
    associate(
        session,
        invitation.requester_id,
        invitation.qualification_type_id,
        worker_id,
        invitation.integer_value,
    )
    session.flush()
    return invitation, True


def sign_up(session: Session, token: str, username: str, password: str, *, country: str = "US") -> Worker:
    """Create a worker account through an invitation and grant its qualification, one use counted.

    The invitation is locked before the account is made, so an account is
    only ever made for a use that is still there; the account follows the
    worker site's sign-up rules (``accounts.create_worker``).
    """
    _locked(session, token)
    worker = accounts.create_worker(session, username, password, country=country)
    redeem(session, token, worker.id)  # the row is already ours: this counts the use and grants
    return worker


def expiry_from(text: str, now: datetime | None = None) -> datetime:
    """A lifetime such as ``7d``, ``12h``, ``30m`` or ``2w`` from now, as the time it ends."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*([mhdw])\s*", text)
    if match is None:
        raise ValueError(f"{text!r} is not a lifetime such as 30m, 12h, 7d or 2w")
    unit = {
        "m": timedelta(minutes=1),
        "h": timedelta(hours=1),
        "d": timedelta(days=1),
        "w": timedelta(weeks=1),
    }
    amount = int(match.group(1))
    if amount == 0:
        raise ValueError("an invitation must last longer than no time")
    return (now or utcnow()) + amount * unit[match.group(2)]
