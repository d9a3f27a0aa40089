"""What hitforge asks of a recruiting platform, whichever it is.

A platform runs *studies* (one per campaign) whose *places* participants take;
each place is a *submission* the platform pays once the researcher approves
it. hitforge creates the study after the campaign's HITs, sends the
participants to its own entry page, and decides each submission from its own
quality verdicts. A platform's folder implements :class:`Recruiter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol


class RecruitError(Exception):
    """A platform call failed. ``retryable``: the same call may succeed later (throttling, a fault)."""

    retryable = False

    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}" if status else message)
        self.status = status
        self.message = message


class RecruitUnavailable(RecruitError):
    """The platform could not be reached, throttled us, or failed on its side, after every retry."""

    retryable = True


class RecruitRefused(RecruitError):
    """The platform refused the request as made (a bad field, a transition its state does not allow)."""


class RecruitOutcomeUnknown(RecruitError):
    """A call that is not idempotent may or may not have been carried out (a fault, a lost answer).

    Never retried: calling Prolific's bonus ``pay`` again would pay again.
    """


class RecruitAuthError(RecruitError):
    """The platform did not accept the token (the token itself is never part of the message)."""


@dataclass(frozen=True)
class CompletionCode:
    """A code a participant may be sent back to the platform with, and what it asks of the platform."""

    code: str
    #: The platform's name for the code's meaning: COMPLETED, OTHER, ...
    code_type: str
    #: When set, the code asks the participant to return the place, for this reason (no work was left).
    return_reason: str | None = None
    #: A code only the researcher applies (the COMPLETE transition) that pays part of the reward
    #: (Prolific's DYNAMIC_PAYMENT action): a place partly approved.
    partial_payment: bool = False


@dataclass(frozen=True)
class StudyDraft:
    """A study as hitforge creates it: every field a platform needs, in hitforge's words."""

    title: str
    description: str
    #: The study's internal name: hitforge's own key for it (finds a study created by a lost call).
    internal_name: str
    #: The entry URL carrying the platform's placeholders for participant, study and session.
    entry_url: str
    reward: int
    estimated_minutes: int
    places: int
    #: The codes a place may end with (the participant is sent back with one).
    completion_codes: Sequence[CompletionCode]
    filters: Sequence[dict[str, Any]] = field(default_factory=tuple)


@dataclass(frozen=True)
class Study:
    """A study as the platform reports it."""

    id: str
    status: str
    internal_name: str | None = None
    places: int = 0


@dataclass(frozen=True)
class PlaceSubmission:
    """One participant's place in a study (Prolific calls it a submission)."""

    id: str
    participant_id: str
    status: str
    study_id: str = ""
    completion_code: str | None = None


@dataclass(frozen=True)
class BonusSetUp:
    """Bonuses set up (not paid): the id to pay them by, and what paying will take from the balance."""

    id: str
    #: The total with the platform's fees and VAT, in the study's currency (pounds or dollars); None
    #: when the platform did not say.
    total: Decimal | None = None


class Recruiter(Protocol):
    """The calls hitforge makes to a recruiting platform (``prolific.client.ProlificClient`` is one)."""

    def create_study(self, draft: StudyDraft) -> Study:
        """Create a study (not yet published); not idempotent: find it first by its internal name."""
        ...

    def find_study(self, internal_name: str) -> Study | None:
        """The study with this internal name, if one exists (a create whose answer was lost)."""
        ...

    def get_study(self, study_id: str) -> Study:
        """The study as it stands."""
        ...

    def study_cost(self, reward: int, places: int) -> Decimal:
        """A study's cost with the platform's fees and VAT, in its currency (reward in cents)."""
        ...

    def transition_study(self, study_id: str, action: str) -> Study:
        """PUBLISH, PAUSE, START (after a pause) or STOP a study."""
        ...

    def submissions(self, study_id: str) -> list[PlaceSubmission]:
        """Every place taken in a study (all pages)."""
        ...

    def get_submission(self, submission_id: str) -> PlaceSubmission:
        """One place as it stands."""
        ...

    def pay_in_part(self, submission_id: str, code: str, percentage: int, message: str) -> PlaceSubmission:
        """Pay ``percentage`` of the reward (8 to 99) for a place, with the study's partial-payment code."""
        ...

    def approve(self, submission_id: str) -> PlaceSubmission:
        """Approve (and so pay) one place."""
        ...

    def reject(self, submission_id: str, category: str, message: str) -> PlaceSubmission:
        """Reject one place, with the platform's category and a message to the participant."""
        ...

    def entry_url(self, base: str) -> str:
        """``base`` with the placeholders the platform fills with participant, study and session."""
        ...

    def set_up_bonuses(self, study_id: str, amounts: dict[str, str]) -> BonusSetUp:
        """Set up bonuses (participant id -> amount in the study's currency); the id to pay them by."""
        ...

    def pay_bonuses(self, bonus_id: str) -> None:
        """Pay bonuses set up before: NOT idempotent (``RecruitOutcomeUnknown`` when it may have paid)."""
        ...

    def find_group(self, name: str) -> str | None:
        """The id of the participant group named ``name``, if one exists."""
        ...

    def create_participant_group(self, name: str, workspace_id: str | None = None) -> str:
        """A new participant group; its id (not idempotent: find it first by name)."""
        ...

    def add_to_group(self, group_id: str, participant_ids: list[str]) -> None:
        """Add participants to a group (adding a member again is harmless)."""
        ...

    def remove_from_group(self, group_id: str, participant_ids: list[str]) -> None:
        """Remove participants from a group (removing a non-member is harmless)."""
        ...

    def send_message(self, participant_id: str, study_id: str, body: str) -> None:
        """A message to one participant about a study (not idempotent)."""
        ...

    def completion_url(self, code: str) -> str:
        """Where a participant who finished is sent, carrying ``code``."""
        ...
