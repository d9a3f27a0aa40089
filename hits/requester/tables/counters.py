"""Counts of a campaign's rows kept as they change, so its pages read a few rows, not all of them.

Five tables, per campaign: its items (the items list's pages), its published
HITs by status, its submissions by decision (``not decided yet`` is the empty
string), its submissions per hour of ``submitted_at`` (the throughput plot) and
its held submissions per worker (the review queue and the dashboard's home).
They are kept by the transaction that changes the rows, without any call from
the code that changes them: every flush notes what it did to ``Item``,
``PublishedHIT`` and ``Submission`` rows (inserted, deleted, or a counted column
changed: a decision, a status, a submission's hour), and the transaction's commit
adds the noted changes with one ``INSERT ... ON CONFLICT DO UPDATE SET n = n +
excluded.n`` per table. Grading, automatic decisions, staff overrides, the
outbox, cancellations and finishing all write these rows through the ORM, so
none of them can forget to count. A Core ``insert``/``update``/``delete`` of
these tables would pass by unnoticed; none exists (the benchmark, which seeds
through Core, recounts with :func:`recount`, as the migration does).

Why at commit and not at the flush: the counter rows are the hottest rows of a
campaign (every decision of it touches them). Taken last, after every other lock
the transaction takes (HITs, worker records, the campaign's row), in key order,
they are held only for the commit and can never be part of a lock cycle: a
transaction holding one waits on nothing but other counter rows, taken by
everyone in the same order. A savepoint's changes are added when the whole
transaction commits, and dropped with the savepoint if it rolls back.
Consequently, a read in the same transaction does not yet see its own changes.

This module registers its listeners on import; ``hits.requester.tables``
imports it, so any process that has the ``Submission`` table keeps the counts.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, delete, event, func, insert, inspect, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, Session, SessionTransaction, mapped_column
from sqlalchemy.orm.util import identity_key

from hits.db import RequesterBase, UTCDateTime
from hits.requester.tables.campaigns import Item, PublishedHIT, Submission

#: How "not decided yet" (``Submission.decision`` None) is keyed: NULL is no key.
UNDECIDED = ""


class CampaignDecisionCount(RequesterBase):
    """How many of a campaign's submissions have each decision (``UNDECIDED``: none yet)."""

    __tablename__ = "rq_campaign_decision_counts"

    # No foreign key to the campaign on purpose: on PostgreSQL inserting a row that references
    # the campaign takes a key-share lock on the campaign's row, which would make the counters
    # wait on a campaign lock they are meant to be taken after.
    campaign_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    decision: Mapped[str] = mapped_column(String(16), primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class CampaignHourlySubmissions(RequesterBase):
    """How many of a campaign's submissions were submitted in each hour (UTC, the hour's start)."""

    __tablename__ = "rq_campaign_hourly_submissions"

    campaign_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hour: Mapped[datetime] = mapped_column(UTCDateTime, primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class CampaignHITCount(RequesterBase):
    """How many of a campaign's published HITs are in each status."""

    __tablename__ = "rq_campaign_hit_counts"

    campaign_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class CampaignItemCount(RequesterBase):
    """How many items a campaign has (the items list's count of pages)."""

    __tablename__ = "rq_campaign_item_counts"

    campaign_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


class CampaignWorkerHeld(RequesterBase):
    """How many of a worker's submissions in a campaign are held for a person.

    The review queue lists the workers with held work at every request: read
    here, it costs a row per worker, not a read of every held submission.
    """

    __tablename__ = "rq_campaign_worker_held"

    campaign_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    worker_id: Mapped[str] = mapped_column(String(20), primary_key=True)
    n: Mapped[int] = mapped_column(Integer, default=0)


#: Deltas noted by a transaction's flushes, one ``Counter`` a table, keyed (campaign id, key).
#: In the order they are added: items, HITs by status, submissions by decision and by hour, and
#: held submissions by worker.
_Deltas = tuple[
    Counter[tuple[int, None]],
    Counter[tuple[int, str]],
    Counter[tuple[int, str]],
    Counter[tuple[int, datetime]],
    Counter[tuple[int, str]],
]
_PENDING = "rq_counter_deltas"
_COMMITTING = "rq_counters_committing"
#: The columns whose change moves a row between counters.
_COUNTED: dict[type, tuple[str, ...]] = {
    Submission: ("published_hit_id", "decision", "submitted_at", "worker_id"),
    PublishedHIT: ("campaign_id", "status"),
    Item: ("campaign_id",),
}


def hour_of(moment: datetime) -> datetime:
    """The start of the hour ``moment`` falls in: the throughput's bucket."""
    return moment.replace(minute=0, second=0, microsecond=0)


def decision_counts(session: Session, campaign_id: int) -> dict[str | None, int]:
    """The campaign's submissions by decision (None: not decided yet), as last committed."""
    rows = session.execute(
        select(CampaignDecisionCount.decision, CampaignDecisionCount.n).where(
            CampaignDecisionCount.campaign_id == campaign_id, CampaignDecisionCount.n != 0
        )
    )
    return {(None if d == UNDECIDED else d): n for d, n in rows}


def hourly_counts(session: Session, campaign_id: int, start: datetime, end: datetime) -> dict[datetime, int]:
    """The campaign's submissions per hour for the hours starting in ``[start, end)``, as last committed."""
    rows = session.execute(
        select(CampaignHourlySubmissions.hour, CampaignHourlySubmissions.n).where(
            CampaignHourlySubmissions.campaign_id == campaign_id,
            CampaignHourlySubmissions.hour >= start,
            CampaignHourlySubmissions.hour < end,
            CampaignHourlySubmissions.n != 0,
        )
    )
    return {key: int(n) for key, n in rows}


def item_count(session: Session, campaign_id: int) -> int:
    """How many items the campaign has, as last committed."""
    n = session.scalar(select(CampaignItemCount.n).where(CampaignItemCount.campaign_id == campaign_id))
    return int(n or 0)


def hit_counts(session: Session, campaign_id: int) -> dict[str, int]:
    """The campaign's published HITs by status, as last committed."""
    rows = session.execute(
        select(CampaignHITCount.status, CampaignHITCount.n).where(
            CampaignHITCount.campaign_id == campaign_id, CampaignHITCount.n != 0
        )
    )
    return {key: int(n) for key, n in rows}


def held_by_worker(visible: Any) -> Any:
    """A query of (campaign id, worker id, held submissions) for the campaigns in ``visible`` (ids,
    or a query of them) whose worker has held work, as last committed."""
    return select(CampaignWorkerHeld.campaign_id, CampaignWorkerHeld.worker_id, CampaignWorkerHeld.n).where(
        CampaignWorkerHeld.campaign_id.in_(visible), CampaignWorkerHeld.n > 0
    )


def recount(session: Session, campaign_id: int | None = None) -> None:
    """Count one campaign's (or every campaign's) HITs and submissions afresh into the counters.

    For rows written without the ORM (the benchmark's seed) and for checking the
    counters against the rows. Flushes and writes in the caller's transaction.
    """
    session.flush()
    on_campaign = [] if campaign_id is None else [PublishedHIT.campaign_id == campaign_id]
    for table in (
        CampaignItemCount,
        CampaignHITCount,
        CampaignDecisionCount,
        CampaignHourlySubmissions,
        CampaignWorkerHeld,
    ):
        cleared = delete(table)
        if campaign_id is not None:
            cleared = cleared.where(table.campaign_id == campaign_id)
        session.execute(cleared)
    session.execute(
        insert(CampaignItemCount).from_select(
            ["campaign_id", "n"],
            select(Item.campaign_id, func.count())
            .where(*([] if campaign_id is None else [Item.campaign_id == campaign_id]))
            .group_by(Item.campaign_id),
        )
    )
    session.execute(
        insert(CampaignHITCount).from_select(
            ["campaign_id", "status", "n"],
            select(PublishedHIT.campaign_id, PublishedHIT.status, func.count())
            .where(*on_campaign)
            .group_by(PublishedHIT.campaign_id, PublishedHIT.status),
        )
    )
    decision = func.coalesce(Submission.decision, literal(UNDECIDED))
    session.execute(
        insert(CampaignDecisionCount).from_select(
            ["campaign_id", "decision", "n"],
            select(PublishedHIT.campaign_id, decision, func.count())
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(*on_campaign)
            .group_by(PublishedHIT.campaign_id, decision),
        )
    )
    session.execute(
        insert(CampaignWorkerHeld).from_select(
            ["campaign_id", "worker_id", "n"],
            select(PublishedHIT.campaign_id, Submission.worker_id, func.count())
            .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
            .where(Submission.decision == "held", *on_campaign)
            .group_by(PublishedHIT.campaign_id, Submission.worker_id),
        )
    )
    hours: Counter[tuple[int, datetime]] = Counter()
    # The hour is truncated here, not in SQL, so it is the same value the listeners key by on
    # either database (one row read per submission: a maintenance step, not a page).
    for cid, submitted in session.execute(
        select(PublishedHIT.campaign_id, Submission.submitted_at)
        .join(PublishedHIT, PublishedHIT.id == Submission.published_hit_id)
        .where(Submission.submitted_at.is_not(None), *on_campaign)
    ):
        hours[(cid, hour_of(submitted))] += 1  # type: ignore[arg-type]  # NULLs left out above
    if hours:
        session.execute(
            insert(CampaignHourlySubmissions),
            [{"campaign_id": c, "hour": h, "n": n} for (c, h), n in sorted(hours.items())],
        )


def _upsert(session: Session, table: Any, key: str | None, counts: Counter[Any]) -> None:
    """Add ``counts`` (keyed (campaign id, value of ``key``)) to ``table``, race-safe, in key order."""
    rows = [
        {"campaign_id": c, "n": n} | ({key: k} if key else {})
        for (c, k), n in sorted(counts.items(), key=lambda kv: kv[0] if key else kv[0][0])
        if n
    ]
    counts.clear()
    if not rows:
        return
    connection = session.connection()
    # Both dialects' upsert: a row another transaction inserts meanwhile is waited for and then
    # added to, never lost nor doubled. Rows in key order, so two commits never wait in a cycle.
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    stmt = dialect.insert(table).values(rows)
    stmt = stmt.on_conflict_do_update(
        index_elements=["campaign_id", key] if key else ["campaign_id"],
        set_={"n": table.__table__.c.n + stmt.excluded.n},
    )
    connection.execute(stmt)


def _apply(session: Session, deltas: _Deltas) -> None:
    """Add a committing transaction's deltas, the tables always in this order."""
    items, hits, decisions, hours, held = deltas
    _upsert(session, CampaignItemCount, None, items)
    _upsert(session, CampaignHITCount, "status", hits)
    _upsert(session, CampaignDecisionCount, "decision", decisions)
    _upsert(session, CampaignHourlySubmissions, "hour", hours)
    _upsert(session, CampaignWorkerHeld, "worker_id", held)


def _current(session: Session) -> SessionTransaction:
    transaction = session.get_nested_transaction() or session.get_transaction()
    assert transaction is not None
    return transaction


def _deltas_of(session: Session, transaction: SessionTransaction) -> _Deltas:
    pending: dict[SessionTransaction, _Deltas] = session.info.setdefault(_PENDING, {})
    if transaction not in pending:
        pending[transaction] = (Counter(), Counter(), Counter(), Counter(), Counter())
    return pending[transaction]


def _campaigns_of(session: Session, hit_ids: set[int]) -> dict[int, int]:
    """Published HIT id -> campaign id, from the session where it can, else one query."""
    found: dict[int, int] = {}
    for hit_id in hit_ids:
        hit = session.identity_map.get(identity_key(PublishedHIT, hit_id))
        if hit is not None and "campaign_id" in hit.__dict__:
            found[hit_id] = hit.campaign_id
    missing = hit_ids - found.keys()
    if missing:
        rows = session.connection().execute(
            select(PublishedHIT.id, PublishedHIT.campaign_id).where(PublishedHIT.id.in_(missing))
        )
        found.update({hit_id: campaign_id for hit_id, campaign_id in rows})
    return found


def _changes(session: Session) -> list[tuple[type, tuple[Any, ...], int]]:
    """What this flush did to counted rows: (table, counted values, +1 or -1) each."""
    changes: list[tuple[type, tuple[Any, ...], int]] = []
    for obj in session.new:
        if type(obj) in _COUNTED:
            changes.append((type(obj), _now(obj), 1))
    for obj in session.deleted:
        if type(obj) in _COUNTED:
            changes.append((type(obj), _before(obj), -1))
    for obj in session.dirty:
        if type(obj) in _COUNTED and obj not in session.deleted:
            before, after = _before(obj), _now(obj)
            if before != after:
                changes += [(type(obj), before, -1), (type(obj), after, 1)]
    return changes


def _now(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in _COUNTED[type(obj)])


def _before(obj: Any) -> tuple[Any, ...]:
    """The counted columns as the database held them before this flush."""
    attrs = inspect(obj).attrs
    values = []
    for name in _COUNTED[type(obj)]:
        history = attrs[name].history
        values.append(history.deleted[0] if history.deleted else getattr(obj, name))
    return tuple(values)


@event.listens_for(Session, "after_flush")
def _note_flush(session: Session, _context: Any) -> None:
    changes = _changes(session)
    if not changes:
        return
    on_hits = {values[0] for table, values, _ in changes if table is Submission and values[0] is not None}
    campaigns = _campaigns_of(session, on_hits) if on_hits else {}
    deltas = _deltas_of(session, _current(session))
    items, hits, decisions, hours, held = deltas
    for table, values, sign in changes:
        if table is Item:
            items[(values[0], None)] += sign
            continue
        if table is PublishedHIT:
            campaign, status = values
            hits[(campaign, status)] += sign
            continue
        hit, decision, submitted, worker = values
        campaign = campaigns.get(hit)
        if campaign is None:
            continue
        decisions[(campaign, UNDECIDED if decision is None else decision)] += sign
        if decision == "held":
            held[(campaign, worker)] += sign
        if submitted is not None:
            hours[(campaign, hour_of(submitted))] += sign
    if session.info.get(_COMMITTING):
        # Flushed by something that ran after this commit began adding: add now, still last.
        _apply(session, deltas)


@event.listens_for(Session, "before_commit")
def _add_on_commit(session: Session) -> None:
    transaction = _current(session)
    session.flush()
    deltas = session.info.get(_PENDING, {}).pop(transaction, None)
    if transaction.parent is not None:
        if deltas is not None:
            # A savepoint released: its changes become its parent's, added when that commits.
            outer = _deltas_of(session, transaction.parent)
            for outer_counts, inner_counts in zip(outer, deltas, strict=True):
                outer_counts.update(inner_counts)  # type: ignore[attr-defined]
        return
    session.info[_COMMITTING] = True
    if deltas is not None:
        _apply(session, deltas)


@event.listens_for(Session, "after_transaction_end")
def _forget(session: Session, transaction: SessionTransaction) -> None:
    # Committed deltas were added or handed to the parent already; what is left was rolled back.
    pending: dict[SessionTransaction, _Deltas] | None = session.info.get(_PENDING)
    if pending:
        pending.pop(transaction, None)
    if transaction.parent is None:
        session.info.pop(_COMMITTING, None)


def _load_old_value(*_: Any) -> None:
    """Nothing to do: listening with ``active_history`` is what loads the old value."""


# Setting a counted column loads its old value first (it may be expired after a commit), so the
# flush knows which counter the row leaves.
for _table, _names in _COUNTED.items():
    for _name in _names:
        event.listen(getattr(_table, _name), "set", _load_old_value, active_history=True)
