"""The requester side's tables: campaigns, items, gold, published HITs,
submissions, worker statistics and the outbox of decisions.

These never reference the marketplace's tables: the requester side knows the
marketplace only through the API (ids here are the marketplace's ids as
strings).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    select,
)
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship

from hits.db import RequesterBase, UTCDateTime, utcnow
from hits.signin_limits import SignInFailureColumns

#: A campaign a person paused: its HITs expired on the marketplace, its submitted work still reviewed.
PAUSED = "paused"
#: A cancelled campaign whose submitted work is still being reviewed; ``CANCELLED`` once it is.
CANCELLING = "cancelling"
CANCELLED = "cancelled"
#: The status of a campaign row that anchors a layout batch (``hits.requester.batches``): the review
#: pipeline syncs, grades and decides its rows (template ``batch``), but it has no labels to
#: aggregate, so the results commands leave it alone.
BATCH_STATUS = "batch"


class Campaign(RequesterBase):
    """A campaign: one task template, its items and gold, and its policies."""

    __tablename__ = "rq_campaigns"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    template: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="draft")
    budget: Mapped[Decimal] = mapped_column(Numeric(14, 2))
    hit_type_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    #: The qualification that soft-blocks flagged workers from this campaign's HITs.
    block_qualification_type_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    #: Adaptive gold: the qualification the campaign grants workers it trusts, and the HIT type of
    #: the HITs (with less gold) only they may take; the others are of ``hit_type_id``.
    trust_qualification_type_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    trusted_hit_type_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    #: The access key the campaign was published with: a worker syncs only its own.
    access_key_id: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    items: Mapped[list[Item]] = relationship(back_populates="campaign")


class Item(RequesterBase):
    """A unit of work from the campaign's input (e.g. one image-sentence pair)."""

    __tablename__ = "rq_items"
    __table_args__ = (
        #: A page of a search of the items list, in id order, read from the index alone.
        Index("ix_rq_items_campaign_id_id", "campaign_id", "id"),
        #: A page of the items list without a search: a range of positions, whatever the page.
        Index("uq_rq_items_campaign_id_position", "campaign_id", "position", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    #: The item's place in its campaign, from 0, dense and in id order: the n-th item added has
    #: n - 1 (``next_item_position``). No default: every insert says it. PostgreSQL refuses one
    #: that does not; SQLite's column kept req0030's default of 0, which the unique index refuses
    #: once the campaign has an item.
    position: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str] = mapped_column(String(128))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    campaign: Mapped[Campaign] = relationship(back_populates="items")


def next_item_position(session: Session, campaign_id: int) -> int:
    """The position the campaign's next item takes: one past its last (0 for its first).

    One step down the (campaign, position) index; it sees the items this
    transaction has flushed already (the counters' ``item_count`` counts only
    what was committed). Two transactions adding to one campaign at once would
    read the same figure: callers hold a lock that keeps other adders out (the
    campaign's row for ``add_work``, the workflow's for a round; ``add_work``
    refuses a workflow's stage), and the unique index refuses a duplicate that
    slips by.
    """
    last = session.scalar(select(func.max(Item.position)).where(Item.campaign_id == campaign_id))
    return 0 if last is None else int(last) + 1


class GoldItem(RequesterBase):
    """A known-answer item. Its ``answer`` never leaves the server."""

    __tablename__ = "rq_gold_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), index=True)
    external_id: Mapped[str] = mapped_column(String(128))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    answer: Mapped[Any] = mapped_column(JSON)


def new_page_token() -> str:
    """A fresh HIT page token: 128 random bits in hex (no letters that could spell a word next to '-')."""
    return secrets.token_hex(16)


class PublishedHIT(RequesterBase):
    """A HIT the requester side created; its row id derives the UniqueRequestToken."""

    __tablename__ = "rq_published_hits"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), index=True)
    mturk_hit_id: Mapped[str | None] = mapped_column(String(32), unique=True, nullable=True)
    #: Random, in its HIT's ExternalQuestion URL: the page finds the row by it before the HIT's id
    #: is recorded (``hits.requester.pages.urls``). It says nothing of the campaign, the row or its gold.
    page_token: Mapped[str | None] = mapped_column(
        String(32), unique=True, index=True, nullable=True, default=new_page_token
    )
    status: Mapped[str] = mapped_column(String(16), default="pending")
    #: Adaptive gold: a HIT with less gold, published for the campaign's trusted workers only.
    #: The database's default only (no Python one): rows written by older code, or through Core
    #: against an older schema, leave the column out.
    for_trusted: Mapped[bool] = mapped_column(Boolean, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: When a sync of this HIT was last queued; it is not queued again while that one is fresh.
    sync_queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    slots: Mapped[list[HITSlot]] = relationship(order_by="HITSlot.position", lazy="selectin")

    @property
    def unique_request_token(self) -> str:
        """Derived from the row, so a retried publish can never create a second HIT."""
        return f"hitforge-c{self.campaign_id}-h{self.id}"


class HITSlot(RequesterBase):
    """One position on a HIT's page, holding either an item or a gold item."""

    __tablename__ = "rq_hit_slots"
    __table_args__ = (UniqueConstraint("published_hit_id", "position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    published_hit_id: Mapped[int] = mapped_column(ForeignKey("rq_published_hits.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    item_id: Mapped[int | None] = mapped_column(ForeignKey("rq_items.id"), nullable=True, index=True)
    gold_item_id: Mapped[int | None] = mapped_column(ForeignKey("rq_gold_items.id"), nullable=True)
    item: Mapped[Item | None] = relationship(lazy="joined")
    gold_item: Mapped[GoldItem | None] = relationship(lazy="joined")

    @property
    def payload(self) -> dict[str, Any]:
        source = self.item or self.gold_item
        assert source is not None
        return source.payload


class Submission(RequesterBase):
    """One assignment's answers, stored once per assignment id."""

    __tablename__ = "rq_submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    assignment_id: Mapped[str] = mapped_column(String(32), unique=True)
    published_hit_id: Mapped[int] = mapped_column(ForeignKey("rq_published_hits.id"), index=True)
    worker_id: Mapped[str] = mapped_column(String(20), index=True)
    answers: Mapped[dict[str, Any]] = mapped_column(JSON)
    source: Mapped[str] = mapped_column(String(16), default="page")
    synced: Mapped[bool] = mapped_column(Boolean, default=False)
    submitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    work_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    gold_correct: Mapped[int] = mapped_column(Integer, default=0)
    gold_total: Mapped[int] = mapped_column(Integer, default=0)
    graded: Mapped[bool] = mapped_column(Boolean, default=False)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    evidence: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    #: The page's typing record (``hits.wire.authenticity``: counts only), None when none came.
    authenticity: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_hit: Mapped[PublishedHIT] = relationship(lazy="joined")


class WorkerStats(RequesterBase):
    """A worker's record in one campaign: gold results and decisions."""

    __tablename__ = "rq_worker_stats"

    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), primary_key=True)
    worker_id: Mapped[str] = mapped_column(String(20), primary_key=True)
    gold_correct: Mapped[int] = mapped_column(Integer, default=0)
    gold_total: Mapped[int] = mapped_column(Integer, default=0)
    assignments: Mapped[int] = mapped_column(Integer, default=0)
    approved: Mapped[int] = mapped_column(Integer, default=0)
    rejected: Mapped[int] = mapped_column(Integer, default=0)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    flag_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    flag_review: Mapped[str | None] = mapped_column(String(16), nullable=True)


class OutboxEntry(RequesterBase):
    """A decision to apply through the API, exactly once.

    ``(action, target)`` is unique: deciding twice cannot enqueue twice, and
    the marketplace's idempotency (assignment state, bonus tokens) covers a
    crash between the call and marking the row done.
    """

    __tablename__ = "rq_outbox"
    __table_args__ = (
        UniqueConstraint("action", "target"),
        # What a campaign paid beyond its assignments, without reading every decision it queued.
        Index("ix_rq_outbox_campaign_action", "campaign_id", "action"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), index=True)
    action: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    applied_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    #: When the entry was last re-sent to the workers (``None``: only when it was created).
    queued_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    #: Until when the task that claimed the entry is left to apply it alone (``outbox.CLAIM_LEASE``):
    #: a copy of its message meanwhile skips it instead of calling the marketplace a second time.
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class StaffUser(RequesterBase):
    """A QA staff or requester user of the dashboard."""

    __tablename__ = "rq_staff_users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    role: Mapped[str] = mapped_column(String(16), default="qa")
    #: A requester user's account on the marketplace (its access key): the campaigns it owns.
    access_key_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: Stamped into each sign-in's cookie; signing out counts it up, ending every earlier cookie.
    session_generation: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class StaffCampaign(RequesterBase):
    """A campaign a QA reviewer (or a requester user, besides its own) is assigned to."""

    __tablename__ = "rq_staff_campaigns"

    staff_user_id: Mapped[int] = mapped_column(ForeignKey("rq_staff_users.id"), primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class StaffSignInFailure(SignInFailureColumns, RequesterBase):
    """A failed sign-in on the dashboard (see ``hits.signin_limits``)."""

    __tablename__ = "rq_staff_signin_failures"
    __table_args__ = (Index("ix_rq_staff_signin_failures_key_failed_at", "key", "failed_at"),)


class ReviewAction(RequesterBase):
    """The audit trail of what QA staff decided and why."""

    __tablename__ = "rq_review_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), index=True)
    worker_id: Mapped[str] = mapped_column(String(20), index=True)
    staff_user_id: Mapped[int] = mapped_column(ForeignKey("rq_staff_users.id"), index=True)
    action: Mapped[str] = mapped_column(String(64))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    #: The assignments the decision decided (a flag's review decides all the worker's held work).
    assignments: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    #: SHA-256 of the evidence the page showed the reviewer when they decided (None: not from a page).
    evidence_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)


class CampaignResult(RequesterBase):
    """A campaign's aggregated labels and agreement, as last computed.

    Written when the campaign finishes and whenever asked again (QA decisions
    change what counts); exports compute their consensus afresh.
    """

    __tablename__ = "rq_campaign_results"

    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"), primary_key=True)
    method: Mapped[str] = mapped_column(String(32))
    #: Krippendorff's alpha at the template's level (None: too little data, or no level fits).
    agreement: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: Part name -> alpha, for a template that measures agreement per part (``TaskTemplate.own_agreement``).
    agreement_parts: Mapped[dict[str, float | None] | None] = mapped_column(JSON, nullable=True)
    #: One ``{item_id, label, confidence, votes}`` per aggregated item.
    labels: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    #: How many assignments' answers were counted.
    assignments: Mapped[int] = mapped_column(Integer)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class GoldExposure(RequesterBase):
    """The gold item shown at one position of one assignment."""

    __tablename__ = "rq_gold_exposures"
    __table_args__ = (
        UniqueConstraint("campaign_id", "assignment_id", "position"),
        Index("ix_rq_gold_exposures_campaign_worker", "campaign_id", "worker_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("rq_campaigns.id"))
    worker_id: Mapped[str] = mapped_column(String(20))
    assignment_id: Mapped[str] = mapped_column(String(32), index=True)
    position: Mapped[int] = mapped_column(Integer)
    gold_item_id: Mapped[int] = mapped_column(ForeignKey("rq_gold_items.id"))
    gold_item: Mapped[GoldItem] = relationship(lazy="joined")
