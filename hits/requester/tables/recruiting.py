"""Recruiting on another platform (Prolific): a campaign's study, its places, and their decisions.

The study's id is kept on the campaign's row here as soon as the platform
answers, so a launch that stops between creating the study and publishing it
resumes on the same study; each place (a participant's session) records the
marketplace worker it signed in and the assignments it covers.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, Numeric, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime, utcnow


class Recruitment(RequesterBase):
    """A campaign's study on a recruiting platform (one per campaign)."""

    __tablename__ = "rq_recruitments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), unique=True)
    platform: Mapped[str] = mapped_column(String(16))
    #: hitforge's own name for the study, unique: finds a study whose creation's answer was lost.
    internal_name: Mapped[str] = mapped_column(String(64), unique=True)
    study_id: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    #: planned -> creating -> created -> published; paused and stopped by ``hitforge recruit``.
    status: Mapped[str] = mapped_column(String(16), default="planned")
    #: The code a participant who finished is sent back to the platform with.
    completion_code: Mapped[str] = mapped_column(String(32))
    #: The code a participant who found no task left is sent back with (it asks them to return).
    return_code: Mapped[str] = mapped_column(String(32))
    places: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    #: The participant group the study's filters block: blocked participants are added to it.
    block_group_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    #: What the study's rewards and Prolific's fees count in the campaign's budget, in dollars
    #: (Prolific's cost calculator's answer, converted): written once, before the study is created.
    study_cost: Mapped[Decimal | None] = mapped_column(Numeric(12, 2), nullable=True)
    #: The researcher's code that pays a place in part (``recruit.partial_payment``); None without.
    partial_code: Mapped[str | None] = mapped_column(String(32), nullable=True)


class RecruitPlace(RequesterBase):
    """One participant's place in a study: their session, and the marketplace worker it signed in."""

    __tablename__ = "rq_recruit_places"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recruitment_id: Mapped[int] = mapped_column(ForeignKey("rq_recruitments.id"), index=True)
    participant_id: Mapped[str] = mapped_column(String(64), index=True)
    #: The platform's session (Prolific's submission id): one place, once.
    session_id: Mapped[str] = mapped_column(String(64), unique=True)
    worker_id: Mapped[str] = mapped_column(String(64), index=True)
    #: working -> finished (sent back with the code), or no_work (none was left for them: sent back
    #: with the code asking them to return); freed when returned or timed out.
    status: Mapped[str] = mapped_column(String(16), default="working")
    #: The platform's status of the place as last read (polling or a webhook).
    platform_status: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RecruitAssignment(RequesterBase):
    """An assignment worked in a place: the session id it belongs to, for deciding the place."""

    __tablename__ = "rq_recruit_assignments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    place_id: Mapped[int] = mapped_column(ForeignKey("rq_recruit_places.id"), index=True)
    session_id: Mapped[str] = mapped_column(String(64), index=True)
    assignment_id: Mapped[str] = mapped_column(String(64), unique=True)
    hit_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RecruitOutboxEntry(RequesterBase):
    """A decision on a place to apply on the platform, exactly once.

    ``(action, submission_id)`` is unique: deciding twice cannot enqueue twice.
    Kept apart from ``rq_outbox``, whose entries are MTurk calls made with a
    campaign's access key; these are platform calls made with its token.
    """

    __tablename__ = "rq_recruit_outbox"
    __table_args__ = (UniqueConstraint("action", "submission_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recruitment_id: Mapped[int] = mapped_column(ForeignKey("rq_recruitments.id"), index=True)
    action: Mapped[str] = mapped_column(String(32))
    submission_id: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    outcome: Mapped[str | None] = mapped_column(String(200), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    #: Set while a process is calling the platform for it: until then, no other process claims it.
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RecruitRelay(RequesterBase):
    """A bonus, block or message for a recruited participant, relayed to the platform exactly once.

    Written when the requester's outbox (``rq_outbox``) hands over an entry
    whose worker is a participant of the campaign's study: one row per
    outbox entry. A bonus records the platform's set-up id here before the
    pay call, which Prolific does not make idempotent: a row left ``sending``
    or whose pay call ended unknown is *held* for a person, never paid again.
    """

    __tablename__ = "rq_recruit_relays"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recruitment_id: Mapped[int] = mapped_column(ForeignKey("rq_recruitments.id"), index=True)
    #: The requester's outbox entry this relays (unique: handing over twice relays once).
    outbox_entry_id: Mapped[int] = mapped_column(ForeignKey("rq_outbox.id"), unique=True)
    #: bonus, block or message.
    action: Mapped[str] = mapped_column(String(16))
    participant_id: Mapped[str] = mapped_column(String(64))
    #: The place's session (Prolific's submission id) the relay is about.
    session_id: Mapped[str] = mapped_column(String(64))
    #: amount and reason (bonus), reason (block), subject and message (message).
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: pending -> (a bonus: set_up) -> sending -> done; held when the outcome is unknown.
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    #: The platform's id of the set-up bonus, recorded before it is paid.
    setup_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    outcome: Mapped[str | None] = mapped_column(String(200), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: When the current call began (``sending``): a row sending for long is one whose attempt died.
    sending_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class RecruitGroup(RequesterBase):
    """A participant group hitforge keeps on the platform mirroring one qualification of a campaign.

    Made at launch, once, under its own name (found by it when the creation's
    answer was lost); a participant the campaign grants the qualification
    joins it, one it is revoked from (or granted a score of 0) leaves it. A
    later study may take its ``group_id`` as an allowlist.
    """

    __tablename__ = "rq_recruit_groups"
    __table_args__ = (UniqueConstraint("recruitment_id", "qualification_type_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    recruitment_id: Mapped[int] = mapped_column(ForeignKey("rq_recruitments.id"), index=True)
    #: The marketplace's qualification type mirrored.
    qualification_type_id: Mapped[str] = mapped_column(String(64))
    #: The qualification as the campaign file names it (a qualification test's name, or the type id).
    label: Mapped[str] = mapped_column(String(200))
    #: The group's name on the platform: hitforge's key for it.
    name: Mapped[str] = mapped_column(String(200), unique=True)
    group_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
