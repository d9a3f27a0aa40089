"""Prolific's wire: request bodies, reply shapes, submission rules and webhook signatures.

What the client sends and the stand-in checks come from here, so both follow
one reading of Prolific's API description (``/work/shared/prolific``,
``docs/recruiting.md``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode

from hits.requester.recruit.base import CompletionCode, PlaceSubmission, Study, StudyDraft

#: Where Prolific takes a participant who finished, with the completion code.
COMPLETION_URL = "https://app.prolific.com/submissions/complete"
#: The placeholders Prolific fills in a study's URL (with ``prolific_id_option: url_parameters``).
PARTICIPANT, STUDY, SESSION = "{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"
#: A rejection's message is refused below this many characters.
MIN_REJECT_MESSAGE = 100
REJECTION_CATEGORIES = frozenset(
    {
        "TOO_QUICKLY",
        "TOO_SLOWLY",
        "FAILED_INSTRUCTIONS",
        "INCOMP_LONGITUDINAL",
        "FAILED_CHECK",
        "LOW_EFFORT",
        "MALINGERING",
        "NO_CODE",
        "BAD_CODE",
        "NO_DATA",
        "UNSUPP_DEVICE",
        "OTHER",
    }
)
#: The submission statuses a researcher's transition may start from. A status, once changed, is final:
#: RETURNED, TIMED-OUT, REJECTED, APPROVED, SCREENED OUT allow nothing.
TRANSITIONS_FROM: dict[str, frozenset[str]] = {
    "APPROVE": frozenset({"AWAITING REVIEW"}),
    "REJECT": frozenset({"AWAITING REVIEW"}),
    "COMPLETE": frozenset({"ACTIVE", "AWAITING REVIEW"}),
}
#: What Prolific takes as a partial payment's ``percentage_of_reward`` (8 to 99, inclusive).
PARTIAL_PERCENT = range(8, 100)
#: Places given back by the participant or by the clock: their HITs go to someone else.
FREED = frozenset({"RETURNED", "TIMED-OUT"})
STUDY_ACTIONS = frozenset({"PUBLISH", "PAUSE", "START", "STOP"})
#: The webhook headers: a base64 HMAC-SHA256 over timestamp + body, and the UNIX timestamp signed.
SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"


#: Prolific's fee on a bonus as its description's example charges it (fees of 283.34 on 850: a third,
#: rounded up to a hundredth of a cent): what the stand-in charges unless a test says otherwise.
BONUS_FEE_RATE = Decimal(1) / Decimal(3)


def major_units(cents: object) -> Decimal | None:
    """An amount Prolific gives in cents or pence (``total_amount``: 1133.34) in pounds or dollars."""
    if cents is None or isinstance(cents, bool):
        return None
    try:
        value = Decimal(str(cents))
    except InvalidOperation:
        return None
    return value / 100 if value.is_finite() else None


def bonus_fees(amount_cents: Decimal, rate: Decimal = BONUS_FEE_RATE) -> Decimal:
    """Prolific's fee on a bonus of ``amount_cents``, in cents to two places, rounded up."""
    return (amount_cents * rate).quantize(Decimal("0.01"), rounding=ROUND_CEILING)


def _code_actions(code: CompletionCode) -> list[dict[str, Any]]:
    # hitforge decides each place itself, from its quality verdicts; a place that found no work left
    # asks the participant to return it; a place partly approved is paid in part (DYNAMIC_PAYMENT).
    if code.partial_payment:
        return [{"action": "DYNAMIC_PAYMENT"}]
    if code.return_reason:
        return [{"action": "REQUEST_RETURN", "return_reason": code.return_reason}]
    return [{"action": "MANUALLY_REVIEW"}]


def study_body(draft: StudyDraft) -> dict[str, Any]:
    """The ``POST /studies/`` body of a draft: participants arrive by URL with their ids in it."""
    return {
        "name": draft.title,
        "internal_name": draft.internal_name,
        "description": draft.description,
        "external_study_url": draft.entry_url,
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {
                "code": c.code,
                "code_type": c.code_type,
                # hitforge decides each place itself, from its quality verdicts; a place that found
                # no work left asks the participant to return it.
                "actions": _code_actions(c),
                # A partial payment is hitforge's decision: only the researcher applies its code.
                "actor": "researcher" if c.partial_payment else "participant",
            }
            for c in draft.completion_codes
        ],
        "total_available_places": draft.places,
        "estimated_completion_time": draft.estimated_minutes,
        "reward": draft.reward,
        "filters": [dict(f) for f in draft.filters],
        "study_labels": ["annotation"],
    }


def entry_url(base: str) -> str:
    """``base`` with Prolific's participant, study and session placeholders as URL parameters."""
    query = urlencode({"PROLIFIC_PID": PARTICIPANT, "STUDY_ID": STUDY, "SESSION_ID": SESSION}, safe="{}%")
    return f"{base}{'&' if '?' in base else '?'}{query}"


def completion_url(code: str) -> str:
    """Prolific's completion redirect carrying ``code``."""
    return f"{COMPLETION_URL}?{urlencode({'cc': code})}"


def study_of(reply: dict[str, Any]) -> Study:
    """A study reply, in hitforge's words."""
    return Study(
        id=str(reply["id"]),
        status=str(reply.get("status", "")),
        internal_name=reply.get("internal_name"),
        places=int(reply.get("total_available_places") or 0),
    )


def submission_of(reply: dict[str, Any]) -> PlaceSubmission:
    """A submission reply (list or detail shape: they name the participant differently)."""
    return PlaceSubmission(
        id=str(reply["id"]),
        participant_id=str(reply.get("participant_id") or reply.get("participant") or ""),
        status=str(reply.get("status", "")),
        study_id=str(reply.get("study_id") or ""),
        completion_code=reply.get("study_code") or reply.get("entered_code"),
    )


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The webhook signature Prolific sends: base64 of HMAC-SHA256(secret, timestamp + body)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(mac).decode()


def signature_valid(secret: str, timestamp: str, body: bytes, sent: str) -> bool:
    """Whether ``sent`` is the signature of ``body`` at ``timestamp`` (compared in constant time)."""
    if not secret or not sent:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body).encode(), sent.encode())
